/**
 * What `createGateway` accepts: the camelCase form of every gw.toml key (derived from
 * ResolvedConfig, so the two cannot drift), plus the options that are not configuration values.
 * `resolveConfig` rejects any other key, so a typo fails loudly instead of leaving a security
 * setting at its default.
 */
import type { PgPool } from '../db/pg-pool';
import type { MetricsOptions } from '../ops/metrics-options';
import type { GssOptions } from '../db/connection/gss/gss-options';
import type { StageOverrides } from '../pipeline/stage-types';
import type { ChangeFeedConfig, ResolvedConfig } from '../pipeline/resolved-config';

export interface AccessOptions {
  /** Default: true when `path` or `policy` is given, else false. */
  readonly enabled?: boolean;
  /** Policy file, TOML or JSON (relative to the working directory). */
  readonly path?: string;
  /** Inline policy, same snake_case keys as a policy file. Give `path` or `policy`, not both. */
  readonly policy?: Readonly<Record<string, unknown>>;
}

/** `change_feed` as an option: every key but `enabled` has a default (docs/change-feed.md). */
export type ChangeFeedOptions = Partial<ChangeFeedConfig>;

export interface GatewayOptions extends Partial<Omit<ResolvedConfig, 'access' | 'changeFeed'>> {
  /** Live changes at `GET /{table}/_changes` (docs/change-feed.md); unset = off. */
  readonly changeFeed?: ChangeFeedOptions;
  /** An existing node-postgres pool (`new pg.Pool(...)`); the gateway uses it and never ends it. Replaces `databaseUrl`. */
  readonly pool?: PgPool;
  /** gw.toml with `[gateway]` and `[access]` sections; explicit options override it. */
  readonly configFile?: string;
  readonly access?: AccessOptions;
  /** Replacement stages; each receives the default stage as its second argument. */
  readonly stages?: StageOverrides;
  /** GSSAPI token source for `gss_provider=callback` or `custom` in database_url (docs/security.md). */
  readonly gss?: GssOptions;
  /** Prometheus metrics: a host registry to merge them into, a name prefix (programmatic only). */
  readonly metrics?: MetricsOptions;
}
