/**
 * The query allow-list (`allow_list_path`, docs/allow-list.md): one pattern per line as queryPattern
 * prints it, `#` comment lines and blank lines ignored, runs of spaces equal to one. Read once
 * when the gateway is created; an unreadable file, or a line that does not start with a method
 * and a route, is a GatewayConfigError, never an empty list.
 */
import { readConfiguredFile, significantLines } from '../../config/read-configured-file';
import { GatewayConfigError } from '../../errors/gateway-config-error';

export interface QueryAllowList {
  allows(pattern: string): boolean;
  readonly size: number;
}

export function loadQueryAllowList(path: string): QueryAllowList {
  return parseQueryAllowList(readConfiguredFile(path, 'allow_list_path'), path);
}

export function parseQueryAllowList(text: string, source = 'the allow-list'): QueryAllowList {
  const patterns = new Set<string>();
  for (const line of significantLines(text)) {
    const pattern = line.text.split(/\s+/).join(' ');
    if (!/^(GET|POST|PATCH|DELETE) \S/.test(pattern)) {
      throw new GatewayConfigError(`allow_list_path: line ${line.number} of ${source} does not start with GET, POST, PATCH or DELETE and a route`, 'allow_list_path');
    }
    patterns.add(pattern);
  }
  return Object.freeze({ allows: (pattern: string) => patterns.has(pattern), size: patterns.size });
}
