/**
 * A failure to reach or log in to the database at `ready` -> DatabaseUnreachableError, whose one
 * line says it is the database, where (host:port as the pool resolves them) and why:
 *   cannot reach the database at 127.0.0.1:5999: connection refused (ECONNREFUSED)
 *   the database at db.internal:5432 refused the connection: password authentication failed for user "app" (SQLSTATE 28P01)
 * In: whatever the first query of `ready` threw, and the pool. Out: that error unchanged when it
 * is not a connection failure (a GatewayConfigError, a failed catalog query).
 * Never: the password or the connection string in the message; the driver's stack trace (the
 * error's `stack` is its message alone, so an unhandled `ready` prints one line, not node-postgres'
 * internals; the original error goes to the `tablegate:gateway` debug log only).
 */
import pg from 'pg';
import { isLoginRefusal } from '../errors/sqlstate-meaning';
import type { PgPool } from './pg-pool';

export class DatabaseUnreachableError extends Error {
  /** The errno code (`ECONNREFUSED`, `ENOTFOUND`, ...), the SQLSTATE, or `ETIMEDOUT` for a connect timeout. */
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.name = 'DatabaseUnreachableError';
    this.code = code;
    this.stack = `${this.name}: ${message}`;
  }
}

/** Socket and DNS failures: nothing answered as PostgreSQL at the address. */
const networkErrors: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOENT: 'no such socket',
  EACCES: 'permission denied',
};

// `PgPool`, not pg.Pool: this file's declarations are public (DatabaseUnreachableError), see db/pg-pool.ts.
export function toDatabaseUnreachable(err: unknown, pool: PgPool, connectTimeoutMs?: number): unknown {
  // Duck-typed: socket errors are made by Node's own realm, so `instanceof Error` can be false (jest's vm).
  if (typeof err !== 'object' || err === null || typeof (err as { message?: unknown }).message !== 'string') return err;
  const { message, code: raw } = err as { message: string; code?: unknown };
  const code = typeof raw === 'string' ? raw : '';
  const at = () => targetOf(pool as pg.Pool, err);
  const network = networkErrors[code];
  if (network !== undefined) return new DatabaseUnreachableError(`cannot reach the database at ${at()}: ${network} (${code})`, code);
  if (/^timeout exceeded when trying to connect|^Connection terminated due to connection timeout/.test(message)) {
    const after = connectTimeoutMs ? ` after ${connectTimeoutMs} ms (pool_connection_timeout_ms)` : '';
    return new DatabaseUnreachableError(`cannot reach the database at ${at()}: connection timed out${after}`, 'ETIMEDOUT');
  }
  if (/^Connection terminated/.test(message)) {
    return new DatabaseUnreachableError(`cannot reach the database at ${at()}: the server closed the connection`, 'ECONNRESET');
  }
  // A server's own message names the user or database, never the password.
  if (/^[0-9A-Z]{5}$/.test(code) && isLoginRefusal(code)) {
    return new DatabaseUnreachableError(`the database at ${at()} refused the connection: ${message} (SQLSTATE ${code})`, code);
  }
  return err;
}

/**
 * host:port the pool connects to, resolved as node-postgres resolves them (connection string,
 * host/port options, PGHOST/PGPORT, defaults), by building a Client that is never connected.
 */
function targetOf(pool: pg.Pool, err: object): string {
  try {
    // The pool's own Client class: the gateway's is built from the validated database_url, not from pool.options.
    const PoolClient = (pool as unknown as { Client?: typeof pg.Client }).Client ?? pg.Client;
    const client = new PoolClient(pool.options);
    return hostPort(client.host, client.port);
  } catch {
    const net = err as { address?: unknown; hostname?: unknown; port?: unknown };
    const host = typeof net.address === 'string' ? net.address : typeof net.hostname === 'string' ? net.hostname : 'the configured host';
    return typeof net.port === 'number' ? hostPort(host, net.port) : host;
  }
}

function hostPort(host: string, port: number): string {
  // A socket directory is a path (the socket file is <dir>/.s.PGSQL.<port>); an IPv6 host is bracketed.
  if (host.startsWith('/')) return `${host} (port ${port})`;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
