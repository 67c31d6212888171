/**
 * Options + gw.toml + env -> the one frozen ResolvedConfig every stage reads. Runs once, at
 * construction; nothing here is on the request path.
 *
 * Precedence, per key: explicit option > config file > env default (JWT_SECRET, GW_DEV_MODE) >
 * built-in default. Every unknown key is an error (a typo must not silently weaken security);
 * every error is a GatewayConfigError naming the key and the fix, and never quotes a secret.
 * Secrets are non-enumerable getters on the result (as node-postgres hides the password), so
 * util.inspect, JSON.stringify, object spread and `debug` never print them.
 */
import Ajv from 'ajv';
import type { ErrorObject } from 'ajv';
import { hasPolicyParameters } from '../db/connection/connection-parameters';
import { GatewayConfigError } from '../errors/gateway-config-error';
import { nearestName } from '../errors/nearest-name';
import { stageNames } from '../pipeline/stage-names';
import { accessKeys, changeFeedDefaults, describeExpected, describeGot, exampleOf, gatewayKeys, sectionSchema } from './config-keys';
import type { ConfigKey, GatewayOptionName } from './config-keys';
import type { GatewayOptions } from './gateway-options';
import { normalOrigin } from '../http/normal-origin';
import { isLoopbackHost, parseBind } from '../http/loopback';
import { loadConfigFile } from './load-config-file';
import { nestedKeyError } from './nested-key-error';
import type { ConfigFileValues } from './load-config-file';
import type { AccessConfig, ChangeFeedConfig, RateLimitConfig, ResolvedConfig } from '../pipeline/resolved-config';

/** Options that are not configuration values, so they have no gw.toml key. */
const nonConfigOptions: Readonly<Record<string, Readonly<Record<string, unknown>> | boolean>> = {
  pool: true, // checked by shape below: any pg-compatible pool
  configFile: { type: 'string', minLength: 1 },
  stages: { type: 'object' },
  gss: { type: 'object' }, // shape checked with database_url, in lib/db/connection
  metrics: true, // a prom-client Registry inside: checked by shape below
};

// Compiled once at module load; resolveConfig only runs it.
const validateOptions = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true }).compile({
  type: 'object',
  properties: {
    ...(sectionSchema(gatewayKeys, 'options')['properties'] as Record<string, unknown>),
    access: sectionSchema(accessKeys, 'options'),
    ...nonConfigOptions,
  },
  additionalProperties: false,
});
const optionNames = [...gatewayKeys.map((k) => k.option), 'access', ...Object.keys(nonConfigOptions)];

type Origin = 'option' | 'file' | 'env' | 'default';

/** One resolved value and where it came from, so a cross-field error can name the right spelling. */
interface Setting {
  readonly value: unknown;
  readonly origin: Origin;
}

export function resolveConfig(options: GatewayOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new GatewayConfigError('gateway options must be an object, e.g. createGateway({ databaseUrl })');
  }
  const given = withoutUndefined(options as Record<string, unknown>);
  if (isRecord(given['access'])) given['access'] = withoutUndefined(given['access']);
  if (isRecord(given['rateLimit'])) given['rateLimit'] = withoutUndefined(given['rateLimit']);
  if (!validateOptions(given)) throw optionError(validateOptions.errors?.[0], given);
  checkPool(given['pool']);
  checkRateLimitStore(given['rateLimit']);
  checkStages(given['stages']);
  checkMetrics(given['metrics']);

  const file = typeof given['configFile'] === 'string' ? loadConfigFile(given['configFile']) : undefined;
  const givenAccess = (given['access'] ?? {}) as Record<string, unknown>;
  const settings = new Map<string, Setting>();
  for (const key of gatewayKeys) settings.set(key.option, pick(key, given, file?.gateway, env));

  // A given pool is the connection: the file's database_url (e.g. for `tablegate serve`) is not used.
  if (given['pool'] !== undefined) {
    if (given['databaseUrl'] !== undefined) {
      throw new GatewayConfigError('give either the databaseUrl option or the pool option, not both', 'databaseUrl');
    }
    // The connection policy applies only to pools the gateway creates: one a given pool would
    // silently skip is an error, not a weaker connection.
    if (given['gss'] !== undefined) {
      throw new GatewayConfigError('option `gss` applies to the pool the gateway creates from database_url; with the pool option, configure GSSAPI on that pool yourself', 'gss');
    }
    const fileUrl = file?.gateway['databaseUrl'];
    if (typeof fileUrl === 'string' && hasPolicyParameters(fileUrl)) {
      throw new GatewayConfigError(`\`database_url\` in [gateway] of ${file?.file ?? 'the config file'} sets connection-policy parameters (sslmode, channel_binding, auth_*, gss_*, ...), which a given pool would not follow; drop the pool option or those parameters`, 'databaseUrl');
    }
    settings.set('databaseUrl', { value: undefined, origin: 'option' });
  }
  // Policy sources replace each other as a whole: an explicit policy option overrides the file's
  // policy_path instead of combining into two sources at once.
  preferOptionSource(settings, given, file, ['policy', 'policyPath']);
  const access = resolveAccess(givenAccess, file);

  const label = (option: string): string => labelOf(option, settings.get(option)?.origin ?? 'default', file);
  checkCrossFields(settings, label, given['pool'] !== undefined);
  const config = freezeConfig(settings, access);
  spellings.set(config, { origins: new Map([...settings].map(([option, s]) => [option, s.origin])), file: file?.file });
  return config;
}

/** Where each value of a resolved config came from, for errors raised after resolution (at `ready`). */
const spellings = new WeakMap<ResolvedConfig, { readonly origins: ReadonlyMap<string, Origin>; readonly file: string | undefined }>();

/**
 * How to set `option` to `value`, in the spelling the caller configures the gateway with: the
 * option form (`allowRlsBypassRole: true`) when the value came from an option, or when no config
 * file is used; the gw.toml form (`allow_rls_bypass_role = true in [gateway] of gw.toml`) when it
 * came from the file, or was left at its default while a file is used. For errors that only show
 * up after `createGateway` returned, such as the database role check at `ready`.
 */
export function howToSet(config: ResolvedConfig, option: GatewayOptionName, value: unknown): string {
  const key = gatewayKeys.find((k) => k.option === option);
  const toml = `\`${key?.key ?? option} = ${JSON.stringify(value)}\``;
  const code = `the option \`${option}: ${JSON.stringify(value)}\``;
  const known = spellings.get(config);
  if (known === undefined) return `${toml} in gw.toml (${code})`;
  const origin = known.origins.get(option);
  if (origin === 'option' || known.file === undefined) return code;
  return `${toml} in [gateway] of ${known.file}`;
}

function pick(key: ConfigKey, given: Record<string, unknown>, file: Readonly<Record<string, unknown>> | undefined, env: NodeJS.ProcessEnv): Setting {
  if (given[key.option] !== undefined) return { value: given[key.option], origin: 'option' };
  if (file?.[key.option] !== undefined) return { value: file[key.option], origin: 'file' };
  const raw = key.env !== undefined ? env[key.env] : undefined;
  // An empty env var counts as unset: an empty JWT secret must never become the key.
  if (raw !== undefined && raw !== '') {
    return { value: key.schema['type'] === 'boolean' ? raw === 'true' : raw, origin: 'env' };
  }
  return { value: key.default, origin: 'default' };
}

function preferOptionSource(settings: Map<string, Setting>, given: Record<string, unknown>, file: ConfigFileValues | undefined, options: readonly string[]): void {
  const fromOptions = options.filter((o) => given[o] !== undefined);
  const fromFile = options.filter((o) => file?.gateway[o] !== undefined);
  const chosen = fromOptions.length > 0 ? fromOptions : fromFile;
  if (chosen.length > 1) {
    const names = chosen.map((o) => labelOf(o, fromOptions.length > 0 ? 'option' : 'file', file));
    throw new GatewayConfigError(`${names.join(' and ')} are both set; keep only one`, options[0]);
  }
  if (fromOptions.length > 0) {
    for (const o of options) if (given[o] === undefined) settings.set(o, { value: undefined, origin: 'option' });
  }
}

function resolveAccess(given: Record<string, unknown>, file: ConfigFileValues | undefined): AccessConfig {
  const fromOptions = given['path'] !== undefined || given['policy'] !== undefined;
  if (given['path'] !== undefined && given['policy'] !== undefined) {
    throw new GatewayConfigError('options `access.path` and `access.policy` are both set; give the policy as a file or inline, not both', 'access.policy');
  }
  const policyPath = fromOptions ? given['path'] : file?.access['path'];
  const policy = fromOptions ? given['policy'] : undefined;
  const hasSource = policyPath !== undefined || policy !== undefined;
  // A policy that is given but not explicitly enabled is applied: leaving it off would fail open.
  const enabled = given['enabled'] ?? file?.access['enabled'] ?? hasSource;
  if (enabled === true && !hasSource) {
    const where = given['enabled'] !== undefined ? 'option `access.enabled`' : `\`enabled\` in [access] of ${file?.file ?? 'the config file'}`;
    throw new GatewayConfigError(`${where} is true but no policy is given; set [access] path (or the access.path / access.policy option)`, 'access.enabled');
  }
  return {
    enabled: enabled === true,
    path: policyPath as string | undefined,
    policy: policy === undefined ? undefined : clonePolicy(policy),
  };
}

function checkCrossFields(settings: Map<string, Setting>, label: (option: string) => string, hasPool: boolean): void {
  const value = (option: string): unknown => settings.get(option)?.value;

  const databaseUrl = value('databaseUrl');
  if (databaseUrl === undefined && !hasPool) {
    throw new GatewayConfigError('database_url is required: set [gateway] database_url in the config file or env DATABASE_URL, or pass the databaseUrl or pool option', 'databaseUrl');
  }
  if (typeof databaseUrl === 'string' && !isPostgresUrl(databaseUrl)) {
    // The URL carries the password, so the message describes it without quoting it.
    throw new GatewayConfigError(`${label('databaseUrl')} must be a postgres:// or postgresql:// URL, e.g. postgres://user@host:5432/db`, 'databaseUrl');
  }
  const replicaUrls = (value('readReplicaUrls') ?? []) as readonly string[];
  const badReplica = replicaUrls.findIndex((url) => !isPostgresUrl(url));
  if (badReplica !== -1) {
    // Described by position only: a replica URL carries a password too.
    throw new GatewayConfigError(`${label('readReplicaUrls')}: entry ${badReplica + 1} must be a postgres:// or postgresql:// URL, e.g. postgres://user@replica:5432/db`, 'readReplicaUrls');
  }

  const reloadDatabaseUrl = value('reloadDatabaseUrl');
  if (typeof reloadDatabaseUrl === 'string' && !isPostgresUrl(reloadDatabaseUrl)) {
    throw new GatewayConfigError(`${label('reloadDatabaseUrl')} must be a postgres:// or postgresql:// URL, e.g. postgres://user@db-direct:5432/db`, 'reloadDatabaseUrl');
  }

  const defaultLimit = value('defaultLimit') as number;
  const maxLimit = value('maxLimit') as number;
  if (defaultLimit > maxLimit) {
    throw new GatewayConfigError(`${label('defaultLimit')} (${defaultLimit}) must be <= ${label('maxLimit')} (${maxLimit}); lower the first or raise the second`, 'defaultLimit');
  }

  const bind = parseBind(value('bind') as string);
  if (bind === undefined) {
    throw new GatewayConfigError(`${label('bind')} must be host:port with a port from 0 to 65535, e.g. "127.0.0.1:3000" or "[::1]:3000" (got ${describeGot(value('bind'), false)})`, 'bind');
  }

  // Browsers send the origin normalised; a listed value in another spelling would never match.
  for (const origin of (value('corsOrigins') as readonly string[] | undefined) ?? []) {
    const normal = normalOrigin(origin);
    if (normal === origin) continue;
    const fix = origin === '*'
      ? 'list the origins of your browser apps instead: requests carry credentials, so tablegate never allows every origin'
      : normal === undefined ? 'write an http(s) origin such as "https://app.example.com"' : `write ${JSON.stringify(normal)}, as browsers send it`;
    throw new GatewayConfigError(`${label('corsOrigins')} lists ${describeGot(origin, false)}, which is not an origin (scheme://host[:port], no path); ${fix}`, 'corsOrigins');
  }

  const schemas = value('schemas') as readonly string[];
  const rateLimit = value('rateLimit') as { store?: unknown } | undefined;
  if (rateLimit?.store === 'postgres' && schemas.includes(rateLimitSchema)) {
    throw new GatewayConfigError(`${label('rateLimit')} uses the postgres store, whose counters live in schema "${rateLimitSchema}", but ${label('schemas')} exposes that schema as an API; remove "${rateLimitSchema}" from schemas (see docs/scaling-out.md#rate-limits)`, 'schemas');
  }
  // Schema names are bound as values and quoted by ident() / in the search_path value, so any
  // name PostgreSQL can store is safe; extra_search_path also refuses the likely typos.
  const checkSchemaList = (option: 'schemas' | 'extraSearchPath', valid: (name: string) => boolean, rule: string): void => {
    const names = value(option) as readonly string[];
    const bad = names.find((s) => !valid(s));
    if (bad !== undefined) throw new GatewayConfigError(`${label(option)} must list schema names ${rule}; ${describeGot(bad, false)} is not one`, option);
    const duplicate = names.find((s, i) => names.indexOf(s) !== i);
    if (duplicate !== undefined) throw new GatewayConfigError(`${label(option)} lists ${JSON.stringify(duplicate)} twice; list each schema once`, option);
  };
  checkSchemaList('schemas', isSchemaName, 'as the catalog spells them (any text without a NUL character, at most 63 bytes, no quoting)');
  checkSchemaList('extraSearchPath', isSearchPathEntry, '(1 to 63 bytes, no control characters, no leading or trailing spaces)');

  // Dev mode is fail-closed at startup (docs/security.md, "Dev mode").
  if (value('devMode') === true) {
    if (value('jwtSecret') === undefined) {
      throw new GatewayConfigError(`GW_DEV_MODE=true requires JWT_SECRET (dev mode is on via ${label('devMode')}): set env JWT_SECRET, the jwtSecret option or [gateway] jwt_secret, or turn dev mode off`, 'jwtSecret');
    }
    if (!isLoopbackHost(bind.host)) {
      throw new GatewayConfigError(`dev mode (via ${label('devMode')}) requires a loopback bind such as 127.0.0.1:3000, but ${label('bind')} is ${JSON.stringify(value('bind'))}; bind to loopback or turn dev mode off`, 'bind');
    }
  }
}

function freezeConfig(settings: Map<string, Setting>, access: AccessConfig): ResolvedConfig {
  const out: Record<string, unknown> = {};
  for (const key of gatewayKeys) {
    const raw = settings.get(key.option)?.value;
    const value = key.option === 'rateLimit' ? freezeRateLimit(raw) : key.option === 'changeFeed' ? withChangeFeedDefaults(raw) : deepFreeze(cloneData(raw));
    if (key.secret) {
      // A getter rather than a value: even `util.inspect(x, { showHidden: true })` (DEBUG_SHOW_HIDDEN)
      // prints only `[Getter]`.
      Object.defineProperty(out, key.option, { get: () => value, enumerable: false, configurable: false });
    } else {
      out[key.option] = value;
    }
  }
  out['access'] = deepFreeze({ ...access });
  return Object.freeze(out) as unknown as ResolvedConfig;
}

function optionError(error: ErrorObject | undefined, given: Record<string, unknown>): GatewayConfigError {
  const segments = (error?.instancePath ?? '').split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const nestedIn = segments.length > 0 ? gatewayKeys.find((k) => k.option === segments[0]) : undefined;
  const nested = nestedIn && error ? nestedKeyError(nestedIn, 'options', error, given[nestedIn.option], (p) => `option \`${p}\``) : undefined;
  if (nested !== undefined) return nested;
  const inAccess = segments[0] === 'access' && segments.length > 1;
  if (error?.keyword === 'additionalProperties') {
    const unknown = String(error.params['additionalProperty']);
    const scope = segments[0] === 'access' ? 'access.' : '';
    const candidates = scope === '' ? optionNames : accessKeys.map((k) => k.option);
    const guess = nearestName(unknown, candidates);
    const fix = guess !== undefined ? `did you mean \`${scope}${guess}\`?` : 'options are the camelCase forms of the gw.toml keys (see docs/configuration.md)';
    return new GatewayConfigError(`unknown option \`${scope}${unknown}\`; ${fix}`, `${scope}${unknown}`);
  }
  const name = inAccess ? segments[1] ?? '' : segments[0] ?? '';
  const row = (inAccess ? accessKeys : gatewayKeys).find((k) => k.option === name);
  const raw = inAccess ? (given['access'] as Record<string, unknown>)[name] : given[name];
  const label = inAccess ? `access.${name}` : name;
  if (row === undefined) {
    const expected = name === 'access' ? 'an object such as { enabled: true, path: "access.toml" }' : name === 'configFile' ? 'a file path' : 'an object';
    return new GatewayConfigError(`option \`${label}\` must be ${expected} (got ${describeGot(raw, false)})`, label);
  }
  return new GatewayConfigError(
    `option \`${label}\` must be ${describeExpected(row)} (got ${describeGot(raw, row.secret)}); e.g. ${label}: ${exampleOf(row)}`,
    label,
  );
}

function checkPool(pool: unknown): void {
  if (pool === undefined) return;
  const p = pool as { connect?: unknown; query?: unknown } | null;
  if (typeof p !== 'object' || p === null || typeof p.connect !== 'function' || typeof p.query !== 'function') {
    throw new GatewayConfigError('option `pool` must be a pg Pool (new Pool(...) from the pg package)', 'pool');
  }
}

/** `change_feed` with every default filled in, or undefined when unset (docs/change-feed.md). */
function withChangeFeedDefaults(raw: unknown): ChangeFeedConfig | undefined {
  if (raw === undefined) return undefined;
  const given = raw as Partial<ChangeFeedConfig>;
  return Object.freeze({ ...changeFeedDefaults, databaseUrl: undefined, tenantColumn: undefined, ...given });
}

/** The schema of the postgres rate-limit store's table (docs/scaling-out.md#rate-limits); never exposed. */
const rateLimitSchema = 'tablegate';

/** A host's store must at least have the methods express-rate-limit calls on every request. */
function checkRateLimitStore(rateLimit: unknown): void {
  const store = (rateLimit as { store?: unknown } | undefined)?.store;
  if (typeof store !== 'object' || store === null) return;
  const s = store as Record<string, unknown>;
  const missing = ['increment', 'decrement', 'resetKey'].filter((m) => typeof s[m] !== 'function');
  if (missing.length > 0) {
    throw new GatewayConfigError(`option \`rateLimit.store\` must be "memory", "postgres" or an express-rate-limit Store, an object with increment, decrement and resetKey methods (missing ${missing.join(', ')})`, 'rateLimit.store');
  }
}

/**
 * The rate limit is frozen without its store: a host's Store object is the host's and keeps its
 * own mutable state (freezing express-rate-limit's MemoryStore would break it).
 */
function freezeRateLimit(value: unknown): RateLimitConfig | undefined {
  if (value === undefined) return undefined;
  const { requests, windowS, store } = value as { requests: number; windowS: number; store?: RateLimitConfig['store'] };
  return Object.freeze({ requests, windowS, store: store ?? 'memory' });
}

function checkStages(stages: unknown): void {
  if (stages === undefined) return;
  for (const [name, stage] of Object.entries(stages as Record<string, unknown>)) {
    if (!(stageNames as readonly string[]).includes(name)) {
      const guess = nearestName(name, stageNames);
      const fix = guess !== undefined ? `did you mean \`stages.${guess}\`?` : `the stages are ${stageNames.join(', ')}`;
      throw new GatewayConfigError(`unknown stage \`stages.${name}\`; ${fix}`, `stages.${name}`);
    }
    if (typeof stage !== 'function') {
      throw new GatewayConfigError(`option \`stages.${name}\` must be a function (ctx, defaultStage) => result`, `stages.${name}`);
    }
  }
}

const metricsKeys = ['registry', 'prefix', 'defaultMetrics'];

/** `metrics: { registry?, prefix?, defaultMetrics? }` (docs/configuration.md, "Options form"). */
function checkMetrics(metrics: unknown): void {
  if (metrics === undefined) return;
  if (!isRecord(metrics)) throw new GatewayConfigError('option `metrics` must be an object { registry?, prefix?, defaultMetrics? }', 'metrics');
  for (const key of Object.keys(metrics)) {
    if (metricsKeys.includes(key)) continue;
    const guess = nearestName(key, metricsKeys);
    throw new GatewayConfigError(`unknown option \`metrics.${key}\`; ${guess !== undefined ? `did you mean \`metrics.${guess}\`?` : `the keys are ${metricsKeys.join(', ')}`}`, `metrics.${key}`);
  }
  const { registry, prefix, defaultMetrics } = metrics;
  const r = registry as Record<string, unknown> | null | undefined;
  if (registry !== undefined && (typeof r !== 'object' || r === null || !['registerMetric', 'getSingleMetric', 'removeSingleMetric', 'metrics'].every((m) => typeof r[m] === 'function'))) {
    throw new GatewayConfigError('option `metrics.registry` must be a prom-client Registry (new Registry() or the `register` export of prom-client)', 'metrics.registry');
  }
  // A Prometheus metric name starts with a letter, `_` or `:`; the gateway's names follow the prefix.
  if (prefix !== undefined && (typeof prefix !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix))) {
    throw new GatewayConfigError(`option \`metrics.prefix\` must be the start of a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), e.g. 'orders_' (got ${describeGot(prefix, false)})`, 'metrics.prefix');
  }
  if (defaultMetrics !== undefined && typeof defaultMetrics !== 'boolean') {
    throw new GatewayConfigError(`option \`metrics.defaultMetrics\` must be true or false (got ${describeGot(defaultMetrics, false)})`, 'metrics.defaultMetrics');
  }
}

function labelOf(option: string, origin: Origin, file: ConfigFileValues | undefined): string {
  const key = gatewayKeys.find((k) => k.option === option);
  switch (origin) {
    case 'option':
      return `option \`${option}\``;
    case 'file':
      return `\`${key?.key ?? option}\` in [gateway] of ${file?.file ?? 'the config file'}`;
    case 'env':
      return `env ${key?.env ?? option}`;
    case 'default':
      return `\`${key?.key ?? option}\` (default)`;
  }
}

/** `host:port`; an IPv6 host is bracketed. Undefined when malformed. */
function isPostgresUrl(url: string): boolean {
  try {
    const protocol = new URL(url).protocol;
    return protocol === 'postgres:' || protocol === 'postgresql:';
  } catch {
    return false;
  }
}

/**
 * A name PostgreSQL can store: any text but NUL, at most NAMEDATALEN - 1 = 63 bytes (a longer one
 * would be truncated, so it could never match). Quoted names such as `Mixed Case`, `a-b` or
 * `we"ird` are valid: schemas are matched against pg_namespace as bound values and quoted by
 * ident() in SQL, so no character is dangerous here.
 */
function isSchemaName(name: string): boolean {
  return name.length > 0 && !name.includes('\u0000') && Buffer.byteLength(name) <= 63;
}

/**
 * An `extra_search_path` entry: a storable schema name that is not most likely a typo (surrounding
 * spaces, control characters): a misspelt schema in search_path is silently skipped by PostgreSQL.
 */
function isSearchPathEntry(name: string): boolean {
  return isSchemaName(name) && name.trim() === name && !/[\u0000-\u001f\u007f]/.test(name);
}

/** The inline policy is copied before freezing: freezing the caller's own object would be a surprise. */
function clonePolicy(policy: unknown): Readonly<Record<string, unknown>> {
  try {
    return cloneData(policy) as Record<string, unknown>;
  } catch {
    throw new GatewayConfigError('option `access.policy` must be plain data (objects, arrays, strings, numbers, booleans) as in a policy file', 'access.policy');
  }
}

/**
 * A copy of option/TOML data (plain objects, arrays, scalars). Hand-written rather than
 * structuredClone, which throws on nothing we care about but builds its result in the host realm
 * (under jest's vm that makes `instanceof Array` false).
 */
function cloneData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneData);
  if (value instanceof Date) return new Date(value.getTime());
  if (typeof value === 'object' && value !== null) {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== null && Object.getPrototypeOf(proto) !== null) throw new TypeError('not plain data');
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cloneData(v)]));
  }
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') throw new TypeError('not plain data');
  return value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

