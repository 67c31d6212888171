/**
 * Errors inside an inline-table value such as `rate_limit = { requests = 100, window_s = 60 }`:
 * an unknown or missing key, or a wrong value of one key, named by its full path in the spelling
 * the caller used (`rate_limit.window_s` in gw.toml, `rateLimit.windowS` as an option).
 * In: the key's row, which form was checked, ajv's first error and the section's raw data.
 * Out: a GatewayConfigError, or undefined when the error is not about a nested key.
 * Never: quotes a secret (no nested key is secret) or guesses silently: an unknown key is named.
 */
import type { ErrorObject } from 'ajv';
import { GatewayConfigError } from '../errors/gateway-config-error';
import { nearestName } from '../errors/nearest-name';
import { describeGot, describeSchema } from './config-keys';
import type { ConfigKey, JsonSchema } from './config-keys';

export type Naming = 'file' | 'options';

/** `window_s` -> `windowS`: how an option spells the key of a gw.toml inline table. */
export function camelKey(snake: string): string {
  return snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** An inline table read from gw.toml, with its keys as the option spells them. */
export function camelKeys(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camelKey(k), v]));
}

/**
 * `where` names the value for a message: "`rate_limit` in [gateway] of gw.toml" or
 * "option `rateLimit`"; `raw` is the value as given.
 */
export function nestedKeyError(row: ConfigKey, naming: Naming, error: ErrorObject, raw: unknown, where: (path: string) => string): GatewayConfigError | undefined {
  const schema = naming === 'options' ? row.optionSchema ?? row.schema : row.schema;
  const properties = schema['properties'] as Readonly<Record<string, JsonSchema>> | undefined;
  if (schema['type'] !== 'object' || properties === undefined) return undefined;
  const name = naming === 'file' ? row.key : row.option;
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const example = exampleText(row, naming);
  const keys = Object.keys(properties);
  // ajv reports a missing key before an unknown one; a misspelt key is both, and its name is the better clue.
  const unknownKey = typeof raw === 'object' && raw !== null ? Object.keys(raw).find((k) => !keys.includes(k)) : undefined;
  if (segments.length === 1 && (error.keyword === 'additionalProperties' || (error.keyword === 'required' && unknownKey !== undefined))) {
    const unknown = error.keyword === 'additionalProperties' ? String(error.params['additionalProperty']) : unknownKey!;
    const guess = nearestName(unknown, keys);
    const fix = guess !== undefined ? `did you mean \`${guess}\`?` : `its keys are ${keys.join(', ')}`;
    return new GatewayConfigError(`unknown key \`${unknown}\` in ${where(name)}; ${fix}`, `${name}.${unknown}`);
  }
  if (segments.length === 1 && error.keyword === 'required') {
    const missing = String(error.params['missingProperty']);
    return new GatewayConfigError(`${where(name)} needs \`${missing}\`; e.g. ${example}`, `${name}.${missing}`);
  }
  if (segments.length === 1) {
    const shape = naming === 'file' ? 'an inline table' : 'an object';
    return new GatewayConfigError(`${where(name)} must be ${shape} (got ${describeGot(raw, false)}); e.g. ${example}`, name);
  }
  const sub = segments[1] ?? '';
  const subSchema = properties[sub];
  if (subSchema === undefined) return undefined;
  const got = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)[sub] : undefined;
  return new GatewayConfigError(`${where(`${name}.${sub}`)} must be ${describeSchema(subSchema)} (got ${describeGot(got, false)}); e.g. ${example}`, `${name}.${sub}`);
}

/** The row's example in the caller's spelling: `rate_limit = { requests = 100, ... }` or `rateLimit: { requests: 100, ... }`. */
function exampleText(row: ConfigKey, naming: Naming): string {
  const example = (row.example ?? {}) as Record<string, unknown>;
  if (naming === 'file') return `${row.key} = { ${Object.entries(example).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ')} }`;
  return `${row.option}: { ${Object.entries(example).map(([k, v]) => `${camelKey(k)}: ${JSON.stringify(v)}`).join(', ')} }`;
}
