/**
 * Wires read_replica_urls into the gateway: one pool and Database per replica (built by the same
 * code as the primary's), a ReplicaSet that routes between them, and the two Database views a
 * request can get (reads may use a replica, or everything on the primary for
 * `x-gw-read-primary: true`). docs/scaling-out.md, "Read replicas".
 * In: the resolved config, the primary's pool and Database. Out: undefined without replicas.
 * Never: lets a replica serve before its role passed the same row-level security check as the
 * primary's; puts a replica URL (it carries a password) in a message or log.
 */
import type pg from 'pg';
import { howToSet } from './config/resolve-config';
import type { ResolvedConfig } from './pipeline/resolved-config';
import { checkRole } from './db/check-role';
import { createDatabase, type Topology } from './db/create-database';
import { createReplicaPool, replicaAddress } from './db/create-replica-pool';
import { ReplicaSet, type ReplicaStatus } from './db/replica-set';
import { GatewayConfigError } from './errors/gateway-config-error';
import { NamedStatements } from './db/named-statements';
import type { GssOptions } from './db/connection/gss/gss-options';
import type { Database, QueryPlan } from './pipeline/database';
import type { Identity } from './pipeline/identity';
import type { Result } from './pipeline/result';

export interface ReadRouting {
  /** The Database a request runs on; `primaryOnly` for `x-gw-read-primary: true`. */
  database(primaryOnly: boolean): Database;
  /** First health check; rejects when a reachable replica's role bypasses row-level security. */
  start(): Promise<void>;
  status(): ReplicaStatus[];
  /** Stops the checks and ends the replica pools (the gateway owns them, even with a given `pool`). */
  close(): Promise<void>;
}

// `topology` is the primary's, filled in at `ready`: a streaming standby of a Citus coordinator is a
// coordinator too, so its reads need the tenant sent by SET LOCAL as well (docs/citus.md, "Read replicas").
export function createReadRouting(config: ResolvedConfig, primaryPool: pg.Pool, primary: Database, gss: GssOptions | undefined, topology?: Topology): ReadRouting | undefined {
  const urls = config.readReplicaUrls;
  if (urls === undefined || urls.length === 0) return undefined;
  const replicas = urls.map((url) => {
    const pool = createReplicaPool(url, config, gss);
    // Each replica decides for itself whether it keeps named statements (a pooler in front of one).
    const namedStatements = new NamedStatements(config.preparedStatements, howToSet(config, 'preparedStatements', false));
    return { pool, runner: createDatabase(pool, { ...config, namedStatements, ...(topology ? { topology } : {}) }), ...replicaAddress(url) };
  });
  const set = new ReplicaSet<Identity, QueryPlan, Result>({
    primaryPool,
    primary,
    replicas,
    // Read-your-writes is per caller: tenant and user (anonymous callers share one key).
    callerOf: (identity) => `${identity.tenantId}\u0000${identity.userId}`,
    checkRole: async (pool, index) => {
      try {
        await checkRole(pool, config.allowRlsBypassRole, howToSet(config, 'allowRlsBypassRole', true));
      } catch (err) {
        if (!(err instanceof GatewayConfigError)) throw err;
        const r = replicas[index]!;
        throw new GatewayConfigError(`read replica ${index + 1} of read_replica_urls (${r.host}:${r.port}): ${err.message}`, 'readReplicaUrls');
      }
    },
    retryMs: config.readReplicaRetryMs,
    checkIntervalMs: config.readReplicaCheckIntervalMs,
    maxLagMs: config.readReplicaMaxLagMs,
    readYourWritesMs: config.readYourWritesMs,
  });
  const view = (primaryOnly: boolean): Database => ({
    run: (identity, plan) => set.run(identity, plan, primaryOnly),
    // Exports read from the primary: a replica's stream could not fall back mid-way.
    stream: (identity, plan) => primary.stream!(identity, plan),
    // Only failed writes are probed, and writes ran on the primary.
    locateFailingRow: (identity, probe, isRowError) => primary.locateFailingRow(identity, probe, isRowError),
    // A batch runs on the primary: its operations may write, and one transaction has one server.
    transaction: async (identity, options, work) => {
      const value = await primary.transaction!(identity, options, work);
      if (!options.readOnly) set.wrote(identity);
      return value;
    },
  });
  const routed = view(false);
  const pinned = view(true);
  return {
    database: (primaryOnly) => (primaryOnly ? pinned : routed),
    start: () => set.start(),
    status: () => set.status(),
    close: () => set.close(),
  };
}
