/**
 * Reads a gw.toml: only `[gateway]` and `[access]`, every key known, every value of the right
 * type, checked against the schema generated from the key table. Returns the values keyed by
 * option name, with relative paths made absolute against the file's directory so nothing later
 * depends on the working directory.
 * Never: echo a value from the file in an error. @iarna/toml's own message quotes the source
 * lines around a syntax error, which may hold `database_url` or `jwt_secret`; only its first
 * sentence and the position are kept.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as TOML from '@iarna/toml';
import Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { GatewayConfigError } from '../errors/gateway-config-error';
import { nearestName } from '../errors/nearest-name';
import { accessKeys, describeExpected, describeGot, exampleOf, gatewayKeys, sectionSchema } from './config-keys';
import type { ConfigKey } from './config-keys';
import { camelKeys, nestedKeyError } from './nested-key-error';

export interface ConfigFileValues {
  /** The path as given, for messages. */
  readonly file: string;
  /** `[gateway]` values by option name (`max_limit` -> `maxLimit`); relative paths resolved. */
  readonly gateway: Readonly<Record<string, unknown>>;
  /** `[access]` values by option name (`enabled`, `path`); relative paths resolved. */
  readonly access: Readonly<Record<string, unknown>>;
}

type SectionName = 'gateway' | 'access';

interface Section {
  readonly keys: readonly ConfigKey[];
  readonly validate: ValidateFunction;
}

// Compiled once at module load; loading a file only runs them.
const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const sections: Record<SectionName, Section> = {
  gateway: { keys: gatewayKeys, validate: ajv.compile(sectionSchema(gatewayKeys, 'file')) },
  access: { keys: accessKeys, validate: ajv.compile(sectionSchema(accessKeys, 'file')) },
};
const sectionNames = Object.keys(sections) as SectionName[];

export function loadConfigFile(file: string): ConfigFileValues {
  const absolute = path.resolve(file);
  const doc = parseToml(readText(file, absolute), file);
  for (const [name, value] of Object.entries(doc)) {
    if (name === 'gateway' || name === 'access') {
      if (!isTable(value)) throw new GatewayConfigError(`\`${name}\` in ${file} must be a section: write [${name}] on its own line`, name);
    } else {
      throw misplaced(name, value, file);
    }
  }
  const dir = path.dirname(absolute);
  return Object.freeze({
    file,
    gateway: readSection('gateway', doc['gateway'], file, dir),
    access: readSection('access', doc['access'], file, dir),
  });
}

function readText(file: string, absolute: string): string {
  try {
    return readFileSync(absolute, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'read error';
    throw new GatewayConfigError(`cannot read config file ${file} (${code}, resolved to ${absolute}); check the configFile option`, 'configFile');
  }
}

function parseToml(source: string, file: string): Record<string, unknown> {
  try {
    return TOML.parse(source);
  } catch (error) {
    const e = error as { message?: unknown; line?: unknown; col?: unknown };
    const reason = String(e.message ?? 'invalid TOML').split(' at row ')[0];
    const where = typeof e.line === 'number' && typeof e.col === 'number' ? ` at line ${e.line + 1}, column ${e.col + 1}` : '';
    throw new GatewayConfigError(`invalid TOML in ${file}${where}: ${reason}; fix the syntax (see https://toml.io)`, 'configFile');
  }
}

/** A top-level entry that is neither section: an unknown section, or a key written above any section. */
function misplaced(name: string, value: unknown, file: string): GatewayConfigError {
  if (isTable(value)) {
    const guess = nearestName(name, sectionNames);
    const fix = guess !== undefined ? `did you mean [${guess}]?` : 'the sections are [gateway] and [access]';
    return new GatewayConfigError(`unknown section [${name}] in ${file}; ${fix}`, name);
  }
  const owner = sectionNames.find((s) => sections[s].keys.some((k) => k.key === name && k.optionOnly !== true));
  const fix = owner !== undefined ? `move it under [${owner}]` : 'keys belong in [gateway] or [access]';
  return new GatewayConfigError(`key \`${name}\` is outside any section in ${file}; ${fix}`, name);
}

function readSection(name: SectionName, raw: unknown, file: string, dir: string): Readonly<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (raw === undefined) return Object.freeze(out);
  const section = sections[name];
  if (!section.validate(raw)) throw schemaError(section, name, raw as Record<string, unknown>, file);
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const row = section.keys.find((k) => k.key === key)!; // the schema admits no other key
    const resolved = row.isPath === true && typeof value === 'string' ? path.resolve(dir, value) : value;
    out[row.option] = row.optionSchema !== undefined ? camelKeys(resolved) : resolved;
  }
  return Object.freeze(out);
}

function schemaError(section: Section, name: SectionName, data: Record<string, unknown>, file: string): GatewayConfigError {
  const error: ErrorObject | undefined = section.validate.errors?.[0];
  const nestedIn = error !== undefined && error.instancePath !== '' ? section.keys.find((k) => k.key === decodePointer(error.instancePath)) : undefined;
  const nested = nestedIn && error ? nestedKeyError(nestedIn, 'file', error, data[nestedIn.key], (p) => `\`${p}\` in [${name}] of ${file}`) : undefined;
  if (nested !== undefined) return nested;
  if (error?.keyword === 'additionalProperties') {
    const unknown = String(error.params['additionalProperty']);
    const known = section.keys.filter((k) => k.optionOnly !== true).map((k) => k.key);
    const guess = nearestName(unknown, known);
    const optionOnly = section.keys.find((k) => k.key === unknown && k.optionOnly === true);
    const fix = guess !== undefined
      ? `did you mean \`${guess}\`?`
      : optionOnly !== undefined
        ? `it is accepted only as the ${name}.${optionOnly.option} option`
        : 'see docs/configuration.md for the keys';
    return new GatewayConfigError(`unknown key \`${unknown}\` in [${name}] of ${file}; ${fix}`, unknown);
  }
  const key = decodePointer(error?.instancePath ?? '');
  const row = section.keys.find((k) => k.key === key);
  if (row === undefined) return new GatewayConfigError(`invalid [${name}] section in ${file}`, name);
  return new GatewayConfigError(
    `\`${row.key}\` in [${name}] of ${file} must be ${describeExpected(row)} (got ${describeGot(data[row.key], row.secret)}); e.g. ${row.key} = ${exampleOf(row)}`,
    row.key,
  );
}

/** First segment of an ajv instancePath (a JSON pointer): the key the error is about. */
function decodePointer(pointer: string): string {
  const first = pointer.split('/')[1] ?? '';
  return first.replace(/~1/g, '/').replace(/~0/g, '~');
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
