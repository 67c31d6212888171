/**
 * The pool the gateway creates when it is not given one. pg-pool with node-postgres' Client;
 * the connection string stays inside the pool's config (pg keeps the password non-enumerable).
 */
import PgPool = require('pg-pool');
import pg from 'pg';
import createDebug from 'debug';
import type { ResolvedConfig } from '../config/resolved-config';

const log = createDebug('tablegate:pool');

export function createPool(config: ResolvedConfig): pg.Pool {
  const pool = new PgPool({
    Client: pg.Client,
    connectionString: config.databaseUrl,
    max: config.poolMax,
    connectionTimeoutMillis: config.poolConnectionTimeoutMs,
    application_name: 'tablegate',
  });
  // An idle client whose server goes away emits 'error' on the pool; unhandled, that would
  // crash the host process. The pool already discards the client, so logging is all that is left.
  pool.on('error', (err: Error) => log('idle client error: %s', err.message));
  return pool;
}
