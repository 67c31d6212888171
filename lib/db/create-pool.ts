/**
 * The pool the gateway creates when it is not given one. pg-pool with the Client class of the
 * connection policy (lib/db/connection: TLS, auth mechanisms, GSS), which builds each client from
 * the validated database_url; pg keeps the password non-enumerable.
 */
import PgPool = require('pg-pool');
import type pg from 'pg';
import createDebug from 'debug';
import type { ResolvedConfig } from '../pipeline/resolved-config';
import type { ConnectionPolicy } from './connection/create-connection-policy';

const log = createDebug('tablegate:pool');

export function createPool(config: ResolvedConfig, connection: ConnectionPolicy): pg.Pool {
  const pool = new PgPool({
    Client: connection.Client,
    max: config.poolMax,
    connectionTimeoutMillis: config.poolConnectionTimeoutMs,
  });
  // An idle client whose server goes away emits 'error' on the pool; unhandled, that would
  // crash the host process. The pool already discards the client, so logging is all that is left.
  pool.on('error', (err: Error) => log('idle client error: %s', err.message));
  return pool;
}
