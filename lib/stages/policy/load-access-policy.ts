/**
 * `[access]` -> AccessPolicy, when the gateway is created: the inline `policy` object, or the
 * `path` file (JSON when it ends in `.json`, else TOML). An unreadable or invalid file is a
 * GatewayConfigError: the gateway never starts without the policy it was told to enforce.
 */
import * as TOML from '@iarna/toml';
import { readConfiguredFile } from '../../config/read-configured-file';
import type { AccessConfig } from '../../pipeline/resolved-config';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { type AccessPolicy, toAccessPolicy } from './access-policy';

export function loadAccessPolicy(access: AccessConfig): AccessPolicy | undefined {
  if (!access.enabled) return undefined;
  if (access.policy !== undefined) return toAccessPolicy(access.policy, 'access.policy');
  const path = access.path!;
  const text = readConfiguredFile(path, 'access.path', '[access] path', 'fix the path or turn the policy off');
  let document: unknown;
  try {
    document = path.toLowerCase().endsWith('.json') ? JSON.parse(text) : TOML.parse(text);
  } catch (err) {
    // The parsers' messages quote the source; keep only the position.
    const where = /line (\d+)/i.exec(String((err as Error).message))?.[0] ?? 'somewhere';
    throw new GatewayConfigError(`[access] path: ${path} is not valid ${path.toLowerCase().endsWith('.json') ? 'JSON' : 'TOML'} (${where})`, 'access.path');
  }
  return toAccessPolicy(document, path);
}
