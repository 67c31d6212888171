/**
 * The pool of one read replica: the primary's pool code (create-pool.ts) and settings (pool_max,
 * pool_connection_timeout_ms, its 'error' listener) with the replica's URL, so that whatever that
 * code learns (connection policy, fault handling) applies to replicas too.
 * In: one entry of read_replica_urls and the resolved config. Out: a pool the gateway owns and
 * ends in close(). Never: logs or returns the URL (it carries the password).
 */
import type pg from 'pg';
import createDebug from 'debug';
import type { ResolvedConfig } from '../pipeline/resolved-config';
import { createConnectionPolicy } from './connection/create-connection-policy';
import type { GssOptions } from './connection/gss/gss-options';
import { createPool } from './create-pool';

const log = createDebug('tablegate:replicas');

export function createReplicaPool(url: string, config: ResolvedConfig, gss: GssOptions | undefined): pg.Pool {
  // The replica URL's own connection policy (sslmode, auth_*, ...), validated like database_url.
  const pool = createPool(config, createConnectionPolicy(url, gss));
  // A replica is expected to go away (stopped, restarted, failed over). When its socket dies,
  // node-postgres fails the active query AND emits 'error' on the client; pg-pool listens only
  // while the client is idle, so a checked-out client would raise an uncaught exception. This
  // listener stays for the client's life; the failed query still rejects, and the Database
  // discards the client (release(err)) because the error has no SQLSTATE.
  pool.on('connect', (client: pg.PoolClient) => {
    client.on('error', (err: Error) => log('replica connection error: %s', err.message));
  });
  return pool;
}

/** host and port of a replica URL, for /health/internal and /metrics (never the user or password). */
export function replicaAddress(url: string): { readonly host: string; readonly port: number } {
  const u = new URL(url);
  const host = decodeURIComponent(u.hostname).replace(/^\[(.*)\]$/, '$1') || u.searchParams.get('host') || 'localhost';
  const port = Number(u.port || u.searchParams.get('port') || 5432);
  return { host, port: Number.isInteger(port) ? port : 5432 };
}
