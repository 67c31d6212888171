/**
 * The function allow-list (`rpc_allowlist_path`, docs/rpc.md "Hardening"): one
 * function per line, `schema.function` or a bare `function` (that name in any exposed schema),
 * case-insensitive, `#` comment lines and blank lines ignored. Read once when the gateway is
 * created; an unreadable file is a GatewayConfigError, never an empty (or absent) list.
 */
import { readConfiguredFile, significantLines } from '../../config/read-configured-file';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import type { DbFunction } from '../../schema/schema-types';

export interface FunctionAllowList {
  allows(fn: DbFunction): boolean;
}

export function loadFunctionAllowList(path: string): FunctionAllowList {
  return parseFunctionAllowList(readConfiguredFile(path, 'rpc_allowlist_path'), path);
}

export function parseFunctionAllowList(text: string, source = 'the allow-list'): FunctionAllowList {
  const qualified = new Set<string>();
  const bare = new Set<string>();
  for (const line of significantLines(text)) {
    if (!/^[^\s.]+(\.[^\s.]+)?$/.test(line.text)) {
      throw new GatewayConfigError(`rpc_allowlist_path: line ${line.number} of ${source} is not \`schema.function\` or \`function\``, 'rpc_allowlist_path');
    }
    (line.text.includes('.') ? qualified : bare).add(line.text.toLowerCase());
  }
  return Object.freeze({
    allows: (fn: DbFunction) => bare.has(fn.name.toLowerCase()) || qualified.has(`${fn.schema}.${fn.name}`.toLowerCase()),
  });
}
