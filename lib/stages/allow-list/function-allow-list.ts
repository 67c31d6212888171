/**
 * The function allow-list (`rpc_allowlist_path`, gateway spec "Function-call hardening"): one
 * function per line, `schema.function` or a bare `function` (that name in any exposed schema),
 * case-insensitive, `#` comment lines and blank lines ignored. Read once when the gateway is
 * created; an unreadable file is a GatewayConfigError, never an empty (or absent) list.
 */
import fs from 'node:fs';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import type { DbFunction } from '../../schema/schema-types';

export interface FunctionAllowList {
  allows(fn: DbFunction): boolean;
}

export function loadFunctionAllowList(path: string): FunctionAllowList {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new GatewayConfigError(`rpc_allowlist_path: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}); fix the path or remove the key`, 'rpc_allowlist_path');
  }
  return parseFunctionAllowList(text, path);
}

export function parseFunctionAllowList(text: string, source = 'the allow-list'): FunctionAllowList {
  const qualified = new Set<string>();
  const bare = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (!/^[^\s.]+(\.[^\s.]+)?$/.test(line)) {
      throw new GatewayConfigError(`rpc_allowlist_path: line ${i + 1} of ${source} is not \`schema.function\` or \`function\``, 'rpc_allowlist_path');
    }
    (line.includes('.') ? qualified : bare).add(line.toLowerCase());
  });
  return Object.freeze({
    allows: (fn: DbFunction) => bare.has(fn.name.toLowerCase()) || qualified.has(`${fn.schema}.${fn.name}`.toLowerCase()),
  });
}
