/**
 * Every configuration key, written once: the `[gateway]` and `[access]` sections of gw.toml and
 * their camelCase option forms. The JSON schemas that validate files and options, the defaults,
 * the env fallbacks, which values are secret and which are paths all come from this table, and a
 * unit test checks that docs/configuration.md lists every key, so nothing can exist in one place
 * and be missing in another.
 *
 * The tables are keyed by the ResolvedConfig field name and checked with `satisfies`, so adding a
 * field to ResolvedConfig without a row here (or the reverse) fails the build.
 */
import type { AccessConfig, ResolvedConfig } from '../pipeline/resolved-config';

export type JsonSchema = Readonly<Record<string, unknown>>;

export interface ConfigKey {
  /** snake_case name in gw.toml. */
  readonly key: string;
  /** camelCase option name, also the ResolvedConfig field. */
  readonly option: string;
  /** JSON schema of one value (ajv, strict mode). */
  readonly schema: JsonSchema;
  /**
   * JSON schema of the option form, for an inline table whose option spells its keys in
   * camelCase (`window_s` in gw.toml, `windowS` as an option); the file's keys are camelCased
   * when it is read. Unset: the option takes `schema` as it is.
   */
  readonly optionSchema?: JsonSchema;
  /** Built-in default; `undefined` means unset. */
  readonly default: unknown;
  /** Non-enumerable on the resolved config and never echoed in an error message. */
  readonly secret: boolean;
  /** Environment variable used when neither an option nor the file sets the key. */
  readonly env?: string;
  /** A file path: a relative path in gw.toml resolves against the file's directory. */
  readonly isPath?: boolean;
  /** Accepted as an option only, not in gw.toml (an inline object has no TOML key of its own). */
  readonly optionOnly?: boolean;
  /** What a valid value looks like, when the schema alone says it badly. */
  readonly expects?: string;
  /** Example value for error messages, when there is no default to show. */
  readonly example?: unknown;
  readonly description: string;
}

type Row = Omit<ConfigKey, 'option'>;
export type GatewayOptionName = Exclude<keyof ResolvedConfig, 'access'>;

/** Signature algorithms the auth stage verifies (with jose); `none` is deliberately absent. */
export const jwtAlgorithmNames = [
  'HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512',
  'ES256', 'ES384', 'ES512', 'EdDSA',
] as const;

// PostgreSQL int4 settings and Node timers both stop at 2^31-1.
const MAX_INT4 = 2147483647;
// A rate-limit window in seconds whose milliseconds still fit a Node timer (express-rate-limit's
// MemoryStore clears its counts with setInterval(window)).
const MAX_WINDOW_S = Math.floor(MAX_INT4 / 1000);

const text = { type: 'string', minLength: 1 };
const flag = { type: 'boolean' };
const stringList = { type: 'array', minItems: 1, items: text };
/** A list that may be empty (= nobody), each name once. */
const nameList = { type: 'array', uniqueItems: true, items: text };
function integer(minimum: number, maximum: number = Number.MAX_SAFE_INTEGER): JsonSchema {
  return { type: 'integer', minimum, maximum };
}

/** The keys of `change_feed`, snake_case in gw.toml and camelCase as options (docs/change-feed.md). */
function changeFeedProperties(naming: 'file' | 'options'): Record<string, JsonSchema> {
  const slot = { type: 'string', pattern: '^[a-z0-9_]{1,63}$' };
  const rows: [string, string, JsonSchema][] = [
    ['enabled', 'enabled', { type: 'boolean' }],
    ['database_url', 'databaseUrl', text],
    ['tenant_column', 'tenantColumn', text],
    ['publication', 'publication', { type: 'string', minLength: 1, maxLength: 63 }],
    ['slot_name', 'slotName', slot],
    ['retention_s', 'retentionS', integer(0, 86400)],
    ['max_buffered_events', 'maxBufferedEvents', integer(1, 1_000_000)],
    ['max_subscriptions', 'maxSubscriptions', integer(1, 1_000_000)],
    ['max_subscriptions_per_caller', 'maxSubscriptionsPerCaller', integer(1, 1_000_000)],
    ['poll_interval_ms', 'pollIntervalMs', integer(5, 60_000)],
    ['heartbeat_s', 'heartbeatS', integer(1, 3600)],
    ['batch_changes', 'batchChanges', integer(1, 1_000_000)],
  ];
  return Object.fromEntries(rows.map(([file, option, schema]) => [naming === 'file' ? file : option, schema]));
}

/** `change_feed`'s defaults (docs/configuration.md). */
export const changeFeedDefaults = Object.freeze({
  enabled: false,
  publication: 'tablegate_changes',
  slotName: 'tablegate_changes',
  retentionS: 300,
  maxBufferedEvents: 1000,
  maxSubscriptions: 10000,
  maxSubscriptionsPerCaller: 20,
  pollIntervalMs: 50,
  heartbeatS: 15,
  batchChanges: 5000,
});

const gatewayRows = {
  databaseUrl: {
    key: 'database_url', schema: text, default: undefined, secret: true, env: 'DATABASE_URL',
    example: 'postgres://gateway@localhost:5432/app',
    description: 'PostgreSQL connection URL (connection-policy parameters go in its query string); defaults to env DATABASE_URL; required unless a pool is given.',
  },
  bind: {
    key: 'bind', schema: text, default: '127.0.0.1:3000', secret: false, expects: 'host:port',
    description: 'Listen address of `tablegate serve`; ignored when mounted as middleware.',
  },
  corsOrigins: {
    key: 'cors_origins', schema: { ...stringList, uniqueItems: true }, default: undefined, secret: false,
    example: ['https://app.example.com'],
    expects: 'a non-empty list of browser origins such as ["https://app.example.com"] (scheme://host[:port], no path; "*" is not accepted)',
    description: 'Browser origins `tablegate serve` answers CORS requests for (docs/security.md, "Browsers and CORS"); unset = none. Ignored when mounted as middleware: put cors() in front.',
  },
  schemas: {
    key: 'schemas', schema: stringList, default: ['public'], secret: false,
    description: 'Database schemas whose tables and functions are exposed, in resolution order.',
  },
  extraSearchPath: {
    key: 'extra_search_path', schema: { type: 'array', items: { type: 'string' } }, default: ['public'], secret: false,
    expects: 'a list of schema names, e.g. ["public", "extensions"]',
    description: 'Schemas searched after `schemas` for unqualified names in function bodies (transaction-local `search_path`).',
  },
  adminToken: {
    key: 'admin_token', schema: text, default: undefined, secret: true, example: 'change-me',
    description: 'Bearer token required by /metrics and /health/internal; unset = open (restrict by network).',
  },
  serverTiming: {
    key: 'server_timing', schema: flag, default: true, secret: false,
    description: 'Send `Server-Timing: auth;dur=…, db;dur=…, total;dur=…` (ms) on every gateway response; false = never.',
  },
  allowListPath: {
    key: 'allow_list_path', schema: text, default: undefined, secret: false, isPath: true, example: 'allow-list.txt',
    description: 'Query allow-list file; when set, query patterns not listed are rejected (403).',
  },
  policy: {
    key: 'policy', schema: text, default: undefined, secret: false, example: 'policies: []',
    description: 'Legacy route policy as inline YAML text (prefer [access]).',
  },
  policyPath: {
    key: 'policy_path', schema: text, default: undefined, secret: false, isPath: true, example: 'policy.yaml',
    description: 'Legacy route policy YAML file (prefer [access]).',
  },
  rpcRequireSchemaQualified: {
    key: 'rpc_require_schema_qualified', schema: flag, default: false, secret: false,
    description: 'Reject unqualified function names in /rpc; require `schema.function`.',
  },
  rpcAllowlistPath: {
    key: 'rpc_allowlist_path', schema: text, default: undefined, secret: false, isPath: true, example: 'rpc-allow.txt',
    description: 'Function allow-list file (one function per line, `#` comments); others are blocked (403).',
  },
  rpcSignatureCheck: {
    key: 'rpc_signature_check', schema: flag, default: false, secret: false,
    description: 'Reject named arguments absent from the function signatures; probe overloads with a parse-only prepare.',
  },
  requireAuth: {
    key: 'require_auth', schema: flag, default: true, secret: false,
    description: 'Requests without credentials get 401; false lets them through as anonymous.',
  },
  defaultLimit: {
    key: 'default_limit', schema: integer(1), default: 100, secret: false,
    description: 'Rows per page when a request gives no `limit`; must be <= max_limit.',
  },
  maxLimit: {
    key: 'max_limit', schema: integer(1), default: 1000, secret: false,
    description: 'Largest page; a larger `limit` is clamped and the applied value echoed.',
  },
  maxRequestBodyBytes: {
    key: 'max_request_body_bytes', schema: integer(1), default: 1048576, secret: false,
    description: 'Largest accepted JSON body in bytes (413 above).',
  },
  maxResponseBytes: {
    key: 'max_response_bytes', schema: integer(1024, 536870888), default: 67108864, secret: false,
    description: 'Largest response body one request may build (a page, a row, a function result, a write representation), in bytes; above it 400 RESPONSE_TOO_LARGE.',
  },
  maxBatchSize: {
    key: 'max_batch_size', schema: integer(1), default: 1000, secret: false,
    description: 'Most rows in one batch create (413 above).',
  },
  maxBatchOperations: {
    key: 'max_batch_operations', schema: integer(1), default: 100, secret: false,
    description: 'Most operations in one `POST /_batch` (413 above), and so most statements its transaction runs.',
  },
  maxBatchBodyBytes: {
    key: 'max_batch_body_bytes', schema: integer(1), default: 1048576, secret: false,
    description: 'Largest `POST /_batch` body, in bytes (413 above); each operation\'s own body is still bounded by `max_request_body_bytes`.',
  },
  statementTimeoutMs: {
    key: 'statement_timeout_ms', schema: integer(0, MAX_INT4), default: 30000, secret: false,
    description: 'Transaction-local `statement_timeout` for every request, in ms; 0 disables.',
  },
  maxExportRows: {
    key: 'max_export_rows', schema: integer(0), default: 0, secret: false,
    description: 'Most rows one streamed export (NDJSON, CSV, or JSON above max_limit) may return; 0 turns exports off.',
  },
  exportStatementTimeoutMs: {
    key: 'export_statement_timeout_ms', schema: integer(0, MAX_INT4), default: 60000, secret: false,
    description: '`statement_timeout` of each batch an export fetches, in ms; 0 disables.',
  },
  rateLimit: {
    key: 'rate_limit', default: undefined, secret: false,
    schema: {
      type: 'object',
      properties: { requests: integer(1, MAX_INT4), window_s: integer(1, MAX_WINDOW_S), store: { enum: ['memory', 'postgres'] } },
      required: ['requests', 'window_s'],
      additionalProperties: false,
    },
    optionSchema: {
      type: 'object',
      properties: {
        requests: integer(1, MAX_INT4),
        windowS: integer(1, MAX_WINDOW_S),
        store: { anyOf: [{ enum: ['memory', 'postgres'] }, { type: 'object', description: 'an express-rate-limit Store object' }] },
      },
      required: ['requests', 'windowS'],
      additionalProperties: false,
    },
    example: { requests: 100, window_s: 60, store: 'memory' },
    description: 'Requests per caller (tenant and user, or IP) and route kind per window; store `memory` (per process) or `postgres` (shared). Unset = no limit.',
  },
  changeFeed: {
    key: 'change_feed', default: undefined, secret: true,
    schema: { type: 'object', properties: changeFeedProperties('file'), additionalProperties: false },
    optionSchema: { type: 'object', properties: changeFeedProperties('options'), additionalProperties: false },
    example: { enabled: true, tenant_column: 'tenant_id', retention_s: 300 },
    description: 'Live changes over Server-Sent Events at `GET /{table}/_changes` (docs/change-feed.md): `enabled`, `database_url` (a role with REPLICATION; default: database_url), `tenant_column`, `publication`, `slot_name`, `retention_s`, `max_buffered_events`, `max_subscriptions`, `max_subscriptions_per_caller`, `poll_interval_ms`, `heartbeat_s`, `batch_changes`. Unset or `enabled = false` = off (the route answers 404).',
  },
  mcp: {
    key: 'mcp', default: undefined, secret: false,
    schema: {
      type: 'object',
      properties: {
        enabled: flag, writes: flag, max_rows: integer(1, 100000), calls_per_minute: integer(1, MAX_INT4),
        authorization_servers: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
      },
      additionalProperties: false,
    },
    optionSchema: {
      type: 'object',
      properties: {
        enabled: flag, writes: flag, maxRows: integer(1, 100000), callsPerMinute: integer(1, MAX_INT4),
        authorizationServers: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
      },
      additionalProperties: false,
    },
    example: { enabled: true, writes: false, max_rows: 100 },
    description: 'The agents\' door (docs/mcp.md): a Model Context Protocol endpoint, `gateway.mcp`, mounted by `tablegate serve` at /mcp when `enabled = true`. `writes` adds the write tools; `max_rows` caps read results (default 100); `authorization_servers` are named in the OAuth Protected Resource Metadata; `calls_per_minute` caps each agent\'s tool calls. Unset = off.',
  },
  tracing: {
    key: 'tracing', default: undefined, secret: false,
    schema: {
      anyOf: [flag, { type: 'object', properties: { tenant_attribute: flag }, additionalProperties: false }],
    },
    optionSchema: {
      anyOf: [flag, { type: 'object', properties: { tenantAttribute: flag }, additionalProperties: false }],
    },
    expects: 'true, false or { tenant_attribute = true | false }',
    example: { tenant_attribute: false },
    description: 'OpenTelemetry spans per request, stage and database call through `@opentelemetry/api` (docs/observability.md); `tenant_attribute` adds the tenant id to the spans. Unset or false = no tracing code on the request path.',
  },
  docsApiUrl: {
    key: 'docs_api_url', schema: text, default: '/api', secret: false,
    description: 'Where the API explorer page (`gateway.docs`) finds the gateway: the path or URL it is mounted at; the page reads `{docs_api_url}/openapi.json` with the token entered in it.',
  },
  explainEnabled: {
    key: 'explain_enabled', schema: flag, default: true, secret: false,
    description: 'Serve GET /{table}/_explain (runs EXPLAIN ANALYZE); false turns the route off.',
  },
  explainRoles: {
    key: 'explain_roles', schema: nameList, default: undefined, secret: false, example: ['admin'],
    expects: 'a list of role names (non-empty strings, no duplicates)',
    description: 'Roles (token `role`) that may use _explain; unset = nobody outside dev mode. Its row counts include other tenants\' rows.',
  },
  explainScopes: {
    key: 'explain_scopes', schema: nameList, default: undefined, secret: false, example: ['db:explain'],
    expects: 'a list of scope names (non-empty strings, no duplicates)',
    description: 'Scopes that may use _explain (any one is enough); unset = nobody outside dev mode.',
  },
  jwtSecret: {
    key: 'jwt_secret', schema: text, default: undefined, secret: true, env: 'JWT_SECRET', example: 'a-long-random-secret',
    description: 'Shared secret for HS* tokens; defaults to env JWT_SECRET.',
  },
  jwtAlgorithms: {
    key: 'jwt_algorithms', default: ['HS256'], secret: false,
    schema: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: jwtAlgorithmNames } },
    description: 'Accepted JWT signature algorithms (`none` is never accepted).',
  },
  jwtAudience: {
    key: 'jwt_audience', default: undefined, secret: false, example: 'my-api',
    schema: { type: ['string', 'array'], minLength: 1, minItems: 1, items: text },
    expects: 'a non-empty string or a non-empty list of strings',
    description: 'Required `aud` claim (any of the listed values); unchecked when unset.',
  },
  jwtIssuer: {
    key: 'jwt_issuer', schema: text, default: undefined, secret: false, example: 'https://issuer.example',
    description: 'Required `iss` claim; unchecked when unset.',
  },
  jwtClockSkewS: {
    key: 'jwt_clock_skew_s', schema: integer(0), default: 30, secret: false,
    description: 'Seconds of clock skew tolerated for `exp`, `nbf` and `iat`.',
  },
  jwtPublicKeyPath: {
    key: 'jwt_public_key_path', schema: text, default: undefined, secret: false, isPath: true, example: 'jwt.pub.pem',
    description: 'PEM public key for RS*/PS*/ES*/EdDSA tokens.',
  },
  jwksUrl: {
    key: 'jwks_url', schema: text, default: undefined, secret: false, example: 'https://issuer.example/.well-known/jwks.json',
    description: 'JWKS endpoint for asymmetric tokens (key chosen by `kid`).',
  },
  jwksTimeoutMs: {
    key: 'jwks_timeout_ms', schema: integer(1, MAX_INT4), default: 5000, secret: false,
    description: 'Timeout for fetching `jwks_url` (the whole response), in ms.',
  },
  jwksCacheS: {
    key: 'jwks_cache_s', schema: integer(1), default: 600, secret: false,
    description: 'How long fetched JWKS keys are used before they are fetched again, in seconds.',
  },
  jwksCooldownS: {
    key: 'jwks_cooldown_s', schema: integer(0), default: 30, secret: false,
    description: 'Least time between two JWKS fetches caused by an unknown `kid` or a failed fetch, in seconds.',
  },
  jwtCacheMaxEntries: {
    key: 'jwt_cache_max_entries', schema: integer(0, 1000000), default: 1000, secret: false,
    description: 'Verified tokens remembered with their identity, so a token is verified once, not per request; 0 turns the cache off.',
  },
  jwtCacheMaxLifetimeS: {
    key: 'jwt_cache_max_lifetime_s', schema: integer(0, MAX_INT4), default: 300, secret: false,
    description: 'Longest time a verified token is remembered (never past its `exp`), in seconds; 0 turns the cache off.',
  },
  jwtCookie: {
    key: 'jwt_cookie', schema: text, default: undefined, secret: false, example: 'access_token',
    description: 'Cookie that carries the JWT when there is no Authorization header.',
  },
  requireTenant: {
    key: 'require_tenant', schema: flag, default: false, secret: false,
    description: 'Reject identities without a `tenant_id`.',
  },
  allowRlsBypassRole: {
    key: 'allow_rls_bypass_role', schema: flag, default: false, secret: false,
    description: 'Let `ready` succeed with a superuser or BYPASSRLS role (logs a warning on every start).',
  },
  devMode: {
    key: 'dev_mode', schema: flag, default: false, secret: false, env: 'GW_DEV_MODE',
    description: 'Accept x-user-id / x-user-role / x-tenant-id headers on loopback; defaults to env GW_DEV_MODE === "true"; needs JWT_SECRET and a loopback bind.',
  },
  cursorSecret: {
    key: 'cursor_secret', schema: text, default: undefined, secret: true, example: 'another-long-random-secret',
    description: 'HMAC key that signs pagination cursors; derived from jwt_secret when unset, else random per process.',
  },
  searchConfig: {
    key: 'search_config', default: undefined, secret: false, example: 'english',
    schema: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?$' },
    expects: 'a text search configuration name such as english or pg_catalog.english',
    description: 'Text search configuration for `search`; the server default when unset.',
  },
  tenantColumn: {
    key: 'tenant_column', default: undefined, secret: false, example: 'tenant_id',
    schema: { type: 'string', minLength: 1, maxLength: 63 },
    expects: 'a column name such as tenant_id',
    description: 'On every table with this column, reads and writes also filter it by the caller\'s tenant (a bound parameter; RLS stays the enforcer), and keys that start with it are addressed without it. See docs/citus.md.',
  },
  poolMax: {
    key: 'pool_max', schema: integer(1), default: 10, secret: false,
    description: 'Most connections in the pool the gateway creates (ignored for a given pool).',
  },
  poolConnectionTimeoutMs: {
    key: 'pool_connection_timeout_ms', schema: integer(0, MAX_INT4), default: 5000, secret: false,
    description: 'Wait for a free connection before 503, in ms; 0 waits forever.',
  },
  preparedStatements: {
    key: 'prepared_statements', schema: flag, default: true, secret: false,
    description: 'Keep named prepared statements per connection (skips parse and plan); false for poolers that cannot (PgBouncer transaction mode before 1.21).',
  },
  reloadListen: {
    key: 'reload_listen', schema: flag, default: true, secret: false,
    description: 'LISTEN on `reload_channel` on a dedicated connection and reload the schema on each notification (see docs/scaling-out.md).',
  },
  reloadChannel: {
    key: 'reload_channel', default: 'tablegate_reload', secret: false,
    schema: { type: 'string', pattern: '^[a-z_][a-z0-9_]*$', maxLength: 63 },
    expects: 'a lower-case channel name of letters, digits and _ (at most 63 characters), such as tablegate_reload',
    description: 'Notification channel that announces schema changes (the event trigger of `tablegate install-reload-trigger` notifies it).',
  },
  reloadDatabaseUrl: {
    key: 'reload_database_url', schema: text, default: undefined, secret: true,
    example: 'postgres://gateway@db-direct:5432/app',
    description: 'Direct connection URL for the LISTEN connection when database_url goes through a pooler that cannot LISTEN; defaults to the pool\'s connection.',
  },
  schemaPollS: {
    key: 'schema_poll_s', schema: integer(0, 2147483), default: 0, secret: false,
    description: 'Seconds between catalog fingerprint checks that reload the schema when it changed; 0 turns polling off.',
  },
  drainTimeoutMs: {
    key: 'drain_timeout_ms', schema: integer(0, MAX_INT4), default: 10000, secret: false,
    description: 'How long close() (and SIGTERM of `tablegate serve`) lets in-flight requests finish before answering them 503, in ms.',
  },
  readReplicaUrls: {
    key: 'read_replica_urls', schema: { ...stringList, uniqueItems: true }, default: undefined, secret: true,
    example: ['postgres://gateway@replica-1:5432/app'], expects: 'a non-empty list of postgres:// URLs (no duplicates)',
    description: 'Streaming replicas for reads (list, get, aggregate, explain, STABLE/IMMUTABLE functions); writes and VOLATILE functions stay on the primary. See docs/scaling-out.md.',
  },
  readReplicaRetryMs: {
    key: 'read_replica_retry_ms', schema: integer(100, MAX_INT4), default: 5000, secret: false,
    description: 'How long a replica that failed stays out of rotation before it is checked again, in ms.',
  },
  readReplicaCheckIntervalMs: {
    key: 'read_replica_check_interval_ms', schema: integer(100, MAX_INT4), default: 1000, secret: false,
    description: 'How often each replica\'s lag is measured (and a replica that is out is retried), in ms.',
  },
  readReplicaMaxLagMs: {
    key: 'read_replica_max_lag_ms', schema: integer(0, MAX_INT4), default: undefined, secret: false, example: 5000,
    description: 'A replica further behind the primary than this (in ms) gets no reads until it catches up; unset = no limit.',
  },
  readYourWritesMs: {
    key: 'read_your_writes_ms', schema: integer(0, MAX_INT4), default: 0, secret: false,
    description: 'After a caller\'s write, its reads go to the primary for this many ms (per instance); 0 = off. The header x-gw-read-primary: true does it per request.',
  },
  dialect: {
    key: 'dialect', schema: { enum: ['tablegate', 'postgrest'] }, default: 'tablegate', secret: false,
    description: 'The URL grammar served at the mount point: tablegate\'s own, or PostgREST\'s (docs/postgrest-dialect.md).',
  },
  postgrestVersion: {
    key: 'postgrest_version', schema: { enum: [12, 13] }, default: 13, secret: false,
    description: 'With dialect postgrest: the PostgREST version whose behaviour is served where 12 and 13 differ.',
  },
  postgrestAggregates: {
    key: 'postgrest_aggregates', schema: flag, default: true, secret: false,
    description: 'With dialect postgrest: allow aggregate functions in select (count(), col.sum(), ...).',
  },
  postgrestUnfilteredWrites: {
    key: 'postgrest_unfiltered_writes', schema: flag, default: false, secret: false,
    description: 'With dialect postgrest: allow PATCH and DELETE without a filter (every row the caller can see); off, they are refused (21000).',
  },
} satisfies Record<GatewayOptionName, Row>;

const accessRows = {
  enabled: {
    key: 'enabled', schema: flag, default: false, secret: false,
    description: 'Turns the native access policy on; true by default when `path` or `policy` is given.',
  },
  path: {
    key: 'path', schema: text, default: undefined, secret: false, isPath: true, example: 'access.toml',
    description: 'Policy file, TOML or JSON.',
  },
  policy: {
    key: 'policy', schema: { type: 'object' }, default: undefined, secret: false, optionOnly: true,
    example: { default_decision: 'deny' },
    description: 'Inline policy object with the snake_case keys of a policy file (option only).',
  },
} satisfies Record<keyof AccessConfig, Row>;

function toKeys(rows: Record<string, Row>): readonly ConfigKey[] {
  return Object.freeze(Object.entries(rows).map(([option, row]) => Object.freeze({ option, ...row })));
}

/** The `[gateway]` keys, in documentation order. */
export const gatewayKeys: readonly ConfigKey[] = toKeys(gatewayRows);
/** The `[access]` keys (`policy` is option-only). */
export const accessKeys: readonly ConfigKey[] = toKeys(accessRows);

/**
 * The JSON schema of a section, keyed by snake_case (`file`) or camelCase (`options`) names.
 * `additionalProperties: false` makes every unknown key an error: a typo must not silently
 * leave a security setting at its default.
 */
export function sectionSchema(keys: readonly ConfigKey[], naming: 'file' | 'options'): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const k of keys) {
    if (naming === 'file' && k.optionOnly === true) continue;
    properties[naming === 'file' ? k.key : k.option] = naming === 'options' ? k.optionSchema ?? k.schema : k.schema;
  }
  return { type: 'object', properties, additionalProperties: false };
}

/** What a valid value of the key looks like, in words, for error messages. */
export function describeExpected(key: ConfigKey): string {
  return key.expects ?? describeSchema(key.schema);
}

export function describeSchema(schema: JsonSchema): string {
  if (typeof schema['description'] === 'string') return schema['description'];
  const allowed = schema['enum'];
  if (Array.isArray(allowed)) return allowed.map((v) => JSON.stringify(v)).join(' or ');
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf)) return anyOf.map((s) => describeSchema(s as JsonSchema)).join(' or ');
  switch (schema['type']) {
    case 'boolean':
      return 'true or false';
    case 'string':
      return schema['minLength'] === 1 ? 'a non-empty string' : 'a string';
    case 'integer': {
      const min = schema['minimum'];
      const max = schema['maximum'];
      const upper = typeof max === 'number' && max < Number.MAX_SAFE_INTEGER ? ` and <= ${max}` : '';
      return typeof min === 'number' ? `an integer >= ${min}${upper}` : 'an integer';
    }
    case 'array': {
      const items = (schema['items'] ?? {}) as JsonSchema;
      const allowed = items['enum'];
      const of = Array.isArray(allowed) ? `of ${allowed.join(', ')} (no duplicates)` : 'of non-empty strings';
      return `a non-empty list ${of}`;
    }
    case 'object':
      return 'an object';
    default:
      return 'a valid value';
  }
}

/**
 * How an offending value is shown in an error message: a secret only by its kind, so a message
 * can never carry it into a log; other scalars as they are (truncated).
 */
export function describeGot(value: unknown, secret: boolean): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  if (secret) {
    if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
    return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  }
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A value to show after "e.g." in a fix: the default, else the row's example. */
export function exampleOf(key: ConfigKey): string {
  const value = key.default ?? key.example;
  return value === undefined ? '…' : JSON.stringify(value);
}
