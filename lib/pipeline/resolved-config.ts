/**
 * The frozen configuration every stage reads. Made once by `resolveConfig`; secrets
 * (`jwtSecret`, `adminToken`, `cursorSecret`, the database URL) are non-enumerable so that
 * `console.log`, `util.inspect`, `debug` and `JSON.stringify` never print them.
 */
import type { Store } from 'express-rate-limit';

export interface AccessConfig {
  readonly enabled: boolean;
  readonly path: string | undefined;
  /** Inline policy object (snake_case keys, as in a policy file). */
  readonly policy: Readonly<Record<string, unknown>> | undefined;
}

/**
 * `mcp` (docs/mcp.md): the agents' door, a Model Context Protocol endpoint (`gateway.mcp`). The
 * keys as given; lib/doors/mcp/mcp-settings.ts applies the defaults.
 */
export interface McpConfig {
  /** Off unless true: `gateway.mcp` answers 404 and `tablegate serve` does not mount it. */
  readonly enabled?: boolean;
  /** Also offer insert_rows, update_row and delete_row (default false). */
  readonly writes?: boolean;
  /** Most rows one read tool call returns (default 100). */
  readonly maxRows?: number;
  /** The OAuth authorization servers the Protected Resource Metadata document names (RFC 9728). */
  readonly authorizationServers?: readonly string[];
  /** Most tool calls per minute per agent (tenant, user and agent_id); unset: no agent cap. */
  readonly callsPerMinute?: number;
}

/** `rate_limit` (docs/scaling-out.md#rate-limits): at most `requests` per caller and route kind per window. */
export interface RateLimitConfig {
  readonly requests: number;
  readonly windowS: number;
  /** `memory` counts per process; `postgres` in one table all instances share; or a host's express-rate-limit Store (option only). */
  readonly store: 'memory' | 'postgres' | Store;
}

/** `tracing` as a table: what the spans may carry beyond the defaults. */
export interface TracingConfig {
  /** Add `tablegate.tenant_id` to the spans (off: trace backends are often shared). */
  readonly tenantAttribute?: boolean;
}

/**
 * `change_feed` (docs/change-feed.md): the live changes route `GET /{table}/_changes`. Every field
 * has its default filled in by resolveConfig; `databaseUrl` (a password) is non-enumerable.
 */
export interface ChangeFeedConfig {
  readonly enabled: boolean;
  /** The session connection that reads the replication slot; unset: `database_url`. */
  readonly databaseUrl: string | undefined;
  /** The column naming a row's tenant: deletes (and rows leaving a view) go only to its tenant's subscribers. */
  readonly tenantColumn: string | undefined;
  readonly publication: string;
  readonly slotName: string;
  readonly retentionS: number;
  readonly maxBufferedEvents: number;
  readonly maxSubscriptions: number;
  readonly maxSubscriptionsPerCaller: number;
  readonly pollIntervalMs: number;
  readonly heartbeatS: number;
  readonly batchChanges: number;
}

export interface ResolvedConfig {
  readonly databaseUrl: string | undefined;
  readonly bind: string;
  /** `tablegate serve` only: browser origins allowed by CORS. */
  readonly corsOrigins: readonly string[] | undefined;
  readonly schemas: readonly string[];
  /** Searched after `schemas` in every request's transaction-local `search_path`. */
  readonly extraSearchPath: readonly string[];
  readonly adminToken: string | undefined;
  /** Send `Server-Timing: auth, db, total` on every gateway response. */
  readonly serverTiming: boolean;
  readonly allowListPath: string | undefined;
  readonly policy: string | undefined;
  readonly policyPath: string | undefined;
  readonly rpcRequireSchemaQualified: boolean;
  readonly rpcAllowlistPath: string | undefined;
  readonly rpcSignatureCheck: boolean;
  readonly requireAuth: boolean;
  readonly defaultLimit: number;
  readonly maxLimit: number;
  readonly maxRequestBodyBytes: number;
  /** Bound on one response's body, checked by PostgreSQL where the body is built (docs/configuration.md). */
  readonly maxResponseBytes: number;
  readonly maxBatchSize: number;
  /** Most operations in one `POST /_batch` (docs/writing.md#batches). */
  readonly maxBatchOperations: number;
  /** Largest `POST /_batch` body, in bytes. */
  readonly maxBatchBodyBytes: number;
  readonly statementTimeoutMs: number;
  /** Most rows one export may stream; 0: exports are off (docs/querying.md, "Exports"). */
  readonly maxExportRows: number;
  /** `statement_timeout` of each batch an export fetches, in ms; 0 disables it. */
  readonly exportStatementTimeoutMs: number;
  /** Requests per caller and route kind per window; unset = no rate limit. */
  readonly rateLimit: RateLimitConfig | undefined;
  /** The change feed (docs/change-feed.md); unset = off. */
  readonly changeFeed: ChangeFeedConfig | undefined;
  /** The agents' door (docs/mcp.md); unset: off. */
  readonly mcp: McpConfig | undefined;
  /** OpenTelemetry tracing (docs/observability.md): unset or false = off; true or a table = on. */
  readonly tracing: boolean | TracingConfig | undefined;
  /** The gateway's mount path or URL, for the API explorer page (`gateway.docs`). */
  readonly docsApiUrl: string;
  readonly explainEnabled: boolean;
  /** Roles allowed to use _explain; unset or empty = nobody (everyone in dev mode). */
  readonly explainRoles: readonly string[] | undefined;
  /** Scopes of which any one allows _explain; unset or empty = nobody (everyone in dev mode). */
  readonly explainScopes: readonly string[] | undefined;
  readonly jwtSecret: string | undefined;
  readonly jwtAlgorithms: readonly string[];
  readonly jwtAudience: string | readonly string[] | undefined;
  readonly jwtIssuer: string | undefined;
  readonly jwtClockSkewS: number;
  readonly jwtPublicKeyPath: string | undefined;
  readonly jwksUrl: string | undefined;
  readonly jwksTimeoutMs: number;
  readonly jwksCacheS: number;
  readonly jwksCooldownS: number;
  readonly jwtCacheMaxEntries: number;
  readonly jwtCacheMaxLifetimeS: number;
  readonly jwtCookie: string | undefined;
  readonly requireTenant: boolean;
  readonly allowRlsBypassRole: boolean;
  readonly devMode: boolean;
  /** HMAC key for cursors; derived from `jwtSecret` when not set, random per process otherwise. */
  readonly cursorSecret: string | undefined;
  /** Text search configuration for `search` (e.g. `english`); server default when unset. */
  readonly searchConfig: string | undefined;
  /**
   * The tenant column (docs/citus.md, "tenant_column"): on every table that has it, commands are
   * narrowed to the caller's tenant and keys starting with it are addressed without it; unset = off.
   */
  readonly tenantColumn: string | undefined;
  readonly poolMax: number;
  readonly poolConnectionTimeoutMs: number;
  /** Named prepared statements, cached per connection; off for poolers that cannot keep them. */
  readonly preparedStatements: boolean;
  /** LISTEN for schema-change notifications on a dedicated connection (docs/scaling-out.md). */
  readonly reloadListen: boolean;
  readonly reloadChannel: string;
  /** Direct URL for the LISTEN connection (a pooler in transaction mode cannot LISTEN). */
  readonly reloadDatabaseUrl: string | undefined;
  /** Catalog fingerprint polling interval in seconds; 0 = off. */
  readonly schemaPollS: number;
  /** How long close() waits for in-flight requests before answering them 503. */
  readonly drainTimeoutMs: number;
  /** Streaming replicas that serve reads (docs/scaling-out.md); unset = everything on the primary. */
  readonly readReplicaUrls: readonly string[] | undefined;
  readonly readReplicaRetryMs: number;
  readonly readReplicaCheckIntervalMs: number;
  /** Replicas further behind than this get no reads; unset = no limit. */
  readonly readReplicaMaxLagMs: number | undefined;
  /** After a caller's write, its reads go to the primary for this long; 0 = off. */
  readonly readYourWritesMs: number;
  /** The URL grammar served: tablegate's own or PostgREST's (docs/postgrest-dialect.md). */
  readonly dialect: 'tablegate' | 'postgrest';
  /** PostgREST version whose behaviour the postgrest dialect serves where 12 and 13 differ. */
  readonly postgrestVersion: 12 | 13;
  /** Aggregate functions in the postgrest dialect's select. */
  readonly postgrestAggregates: boolean;
  /** PATCH / DELETE without a filter in the postgrest dialect (refused when false). */
  readonly postgrestUnfilteredWrites: boolean;
  readonly access: AccessConfig;
}
