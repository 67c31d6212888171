/**
 * The pool the gateway creates when it is not given one. pg-pool with node-postgres' Client;
 * the connection string stays inside the pool's config (pg keeps the password non-enumerable).
 */
import PgPool = require('pg-pool');
import pg from 'pg';
import type { ResolvedConfig } from '../config/resolved-config';

export function createPool(config: ResolvedConfig): pg.Pool {
  return new PgPool({
    Client: pg.Client,
    connectionString: config.databaseUrl,
    max: config.poolMax,
    connectionTimeoutMillis: config.poolConnectionTimeoutMs,
    application_name: 'tablegate',
  });
}
