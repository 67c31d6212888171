/**
 * Checking a client out of the pool without letting a connection fault crash the process.
 *
 * In: a pool (the gateway's own or the host's) and a deadline. Out: a Lease, whose client has an
 * 'error' listener for as long as it is checked out, and whose release() discards the client when
 * its connection failed. Never: gives a client back to the pool for reuse after a connection-level
 * error, or lets an 'error' event go unhandled.
 *
 * Why (node-postgres 8, pg/lib/client.js): when the socket fails (the server restarts, a backend is
 * terminated or killed, the connection is reset), the Client fails its active query AND emits
 * 'error'; with no query active, a server ErrorResponse (57P01 "terminating connection due to
 * administrator command") is emitted as 'error' too. pg-pool listens for 'error' only while the
 * client is idle and removes that listener on checkout, so a checked-out client, whether between
 * checkout and its first query, in the middle of the one-round-trip transaction or between two
 * queries, would emit an unhandled 'error' event: an uncaught exception that ends the process.
 * What happens when the database restarts: docs/security.md, "When the database restarts".
 */
import type pg from 'pg';
import createDebug from 'debug';
import { isConnectionLostSqlstate } from '../errors/sqlstate-meaning';
import { catchStreamErrors } from './catch-stream-errors';

const log = createDebug('tablegate:pool');

export interface Lease {
  readonly client: pg.PoolClient;
  /** True once the deadline passed and the connection was cut. */
  readonly timedOut: boolean;
  /**
   * Gives the client back. It is discarded (closed, never reused) when it emitted 'error' while
   * checked out, when the deadline cut it, or when `err` is a connection-level error.
   */
  release(err?: unknown): void;
  /** Closes the client whatever happened (e.g. a transaction that may not have been rolled back). */
  discard(): void;
}

/** Clients that already carry the gateway's permanent 'error' listener. */
const guarded = new WeakSet<object>();

/**
 * `deadlineMs` bounds the whole lease (0: no bound): a socket that stops answering without being
 * closed (a frozen server, a network partition) would otherwise keep the request waiting forever,
 * since statement_timeout is enforced by the server that no longer answers. When it passes, the
 * socket is destroyed, which fails the active query ("Connection terminated unexpectedly").
 */
export function checkOut(pool: pg.Pool, deadlineMs: number): Promise<Lease> {
  return new Promise((resolve, reject) => {
    // The callback form, not the promise: pg-pool calls it synchronously when it hands the client
    // out, so the listeners below are in place before anything else runs. With `await
    // pool.connect()` they would come a microtask later, and a new connection's parser can go on,
    // in the same synchronous loop, from the ReadyForQuery that completed the connection to a
    // FATAL that follows it in the same packet (a server shutting down): an unhandled 'error'.
    pool.connect((err, client) => {
      if (err || !client) reject(err ?? new Error('the pool gave no client'));
      else resolve(lease(client, deadlineMs));
    });
  });
}

function lease(client: pg.PoolClient, deadlineMs: number): Lease {
  // A last resort that stays for the client's life: after release the pool adds its own listener,
  // but a client closed by the pool can still emit once more (pg-pool logs those too).
  if (!guarded.has(client)) {
    guarded.add(client);
    client.on('error', (err: Error) => log('connection error: %s', err.message));
    // An exception inside the socket's 'data' listeners (the driver's parser) fails this client
    // instead of the process (catch-stream-errors.ts).
    const socket = socketOf(client);
    if (socket) catchStreamErrors(socket);
  }
  let broken: Error | undefined;
  const onError = (err: Error): void => {
    broken ??= err;
  };
  client.on('error', onError);
  let timedOut = false;
  const timer =
    deadlineMs > 0
      ? setTimeout(() => {
          timedOut = true;
          broken ??= new Error(`the database did not answer within ${deadlineMs} ms`);
          log('no answer within %d ms: closing the connection', deadlineMs);
          socketOf(client)?.destroy();
        }, deadlineMs)
      : undefined;
  timer?.unref();
  let released = false;
  const giveBack = (discard: Error | undefined): void => {
    if (released) return;
    released = true;
    clearTimeout(timer);
    // release(err) makes pg-pool close the client instead of keeping it idle. pg-pool attaches
    // its idle listener inside release(), so the client is never without one.
    client.release(discard);
    client.removeListener('error', onError);
  };
  return {
    client,
    get timedOut() {
      return timedOut;
    },
    release(err?: unknown): void {
      giveBack(broken ?? (err !== undefined && isConnectionFailure(err) ? asError(err) : undefined));
    },
    discard(): void {
      giveBack(broken ?? new Error('discarded by the gateway'));
    },
  };
}

/**
 * An error after which the connection cannot be trusted: anything without a SQLSTATE (a socket
 * error, "Connection terminated unexpectedly", a protocol error), a FATAL or PANIC from the server
 * (it closes the connection after sending it), and the SQLSTATEs of a lost connection
 * (lib/errors/sqlstate-meaning.ts). A statement error (a constraint, a bad literal, 57014
 * statement timeout) leaves the connection usable.
 */
export function isConnectionFailure(err: unknown): boolean {
  const e = (err ?? {}) as { code?: unknown; severity?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (!/^[0-9A-Z]{5}$/.test(code)) return true;
  if (e.severity === 'FATAL' || e.severity === 'PANIC') return true;
  return isConnectionLostSqlstate(code);
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** The client's socket (pg/lib/connection.js keeps it as `connection.stream`). */
function socketOf(client: pg.PoolClient): Parameters<typeof catchStreamErrors>[0] | undefined {
  return (client as unknown as { connection?: { stream?: Parameters<typeof catchStreamErrors>[0] } }).connection?.stream;
}
