/**
 * `policy` (inline YAML text) / `policy_path` (a YAML file) -> LegacyPolicy, when the gateway is
 * created. Unreadable or invalid YAML is a GatewayConfigError: never a gateway without the policy
 * it was told to enforce.
 */
import yaml from 'js-yaml';
import { readConfiguredFile } from '../../config/read-configured-file';
import type { ResolvedConfig } from '../../pipeline/resolved-config';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { type LegacyPolicy, toLegacyPolicy } from './legacy-policy';

export function loadLegacyPolicy(config: Pick<ResolvedConfig, 'policy' | 'policyPath'>): LegacyPolicy | undefined {
  let text: string;
  let source: string;
  if (config.policy !== undefined) [text, source] = [config.policy, 'policy'];
  else if (config.policyPath !== undefined) {
    source = config.policyPath;
    text = readConfiguredFile(config.policyPath, 'policy_path');
  } else return undefined;
  let document: unknown;
  try {
    // JSON_SCHEMA: plain data only (no dates, no custom tags).
    document = yaml.load(text, { schema: yaml.JSON_SCHEMA, filename: source });
  } catch (err) {
    const mark = (err as { mark?: { line?: number } }).mark;
    throw new GatewayConfigError(`${source === 'policy' ? 'policy' : `policy_path: ${source}`} is not valid YAML${mark?.line === undefined ? '' : ` (line ${mark.line + 1})`}`, source === 'policy' ? 'policy' : 'policy_path');
  }
  return toLegacyPolicy(document, source);
}
