/**
 * The query allow-list (`allow_list_path`, contract §6): one pattern per line as queryPattern
 * prints it, `#` comment lines and blank lines ignored, runs of spaces equal to one. Read once
 * when the gateway is created; an unreadable file, or a line that does not start with a method
 * and a route, is a GatewayConfigError, never an empty list.
 */
import fs from 'node:fs';
import { GatewayConfigError } from '../../errors/gateway-config-error';

export interface QueryAllowList {
  allows(pattern: string): boolean;
  readonly size: number;
}

export function loadQueryAllowList(path: string): QueryAllowList {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new GatewayConfigError(`allow_list_path: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}); fix the path or remove the key`, 'allow_list_path');
  }
  return parseQueryAllowList(text, path);
}

export function parseQueryAllowList(text: string, source = 'the allow-list'): QueryAllowList {
  const patterns = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const pattern = line.split(/\s+/).join(' ');
    if (!/^(GET|POST|PATCH|DELETE) \S/.test(pattern)) {
      throw new GatewayConfigError(`allow_list_path: line ${i + 1} of ${source} does not start with GET, POST, PATCH or DELETE and a route`, 'allow_list_path');
    }
    patterns.add(pattern);
  });
  return Object.freeze({ allows: (pattern: string) => patterns.has(pattern), size: patterns.size });
}
