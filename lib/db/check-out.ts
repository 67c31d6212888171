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
import { SlotSet } from './slot-set';

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

/**
 * The lease each client is checked out under, if any. The client's one permanent 'error' listener
 * (added the first time the gateway sees it) records an error on that lease, so a checkout adds
 * and removes no listener of its own.
 */
const leaseOf = new WeakMap<object, LeaseImpl>();
/** Clients that already carry that listener. */
const guarded = new WeakSet<object>();

/**
 * The deadlines of the leases that have one, checked by one timer per process instead of a
 * setTimeout per request. The timer runs only while such leases exist and is unref'd; a deadline
 * fires at most `sweepIntervalMs` late (the bound is statement_timeout + 5 s, so a quarter of a
 * second does not matter).
 */
export const sweepIntervalMs = 250;
// Not a Set: see slot-set.ts (a lease is added and removed by every request).
const withDeadline = new SlotSet<LeaseImpl>();
let sweeper: NodeJS.Timeout | undefined;

function sweep(): void {
  const now = performance.now();
  for (const lease of withDeadline.items()) if (now >= lease.due) lease.expire();
  if (withDeadline.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

function watchDeadline(lease: LeaseImpl): void {
  withDeadline.add(lease);
  if (sweeper === undefined) {
    sweeper = setInterval(sweep, sweepIntervalMs);
    sweeper.unref();
  }
}

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
  // Stays for the client's life: while it is checked out it records the error on the lease, and
  // after release, when the pool adds its own listener, a client closed by the pool can still
  // emit once more (pg-pool logs those too).
  if (!guarded.has(client)) {
    guarded.add(client);
    client.on('error', (err: Error) => {
      const current = leaseOf.get(client);
      if (current !== undefined) current.broken ??= err;
      else log('connection error: %s', err.message);
    });
    // An exception inside the socket's 'data' listeners (the driver's parser) fails this client
    // instead of the process (catch-stream-errors.ts).
    const socket = socketOf(client);
    if (socket) catchStreamErrors(socket);
  }
  const leased = new LeaseImpl(client, deadlineMs);
  leaseOf.set(client, leased);
  if (deadlineMs > 0) watchDeadline(leased);
  return leased;
}

class LeaseImpl implements Lease {
  /** The first connection-level error seen while checked out. */
  broken: Error | undefined;
  timedOut = false;
  /** Its place in withDeadline; -1 when not there. */
  slot = -1;
  /** When the deadline passes (performance.now() time); Infinity without one. */
  readonly due: number;
  private released = false;

  constructor(
    readonly client: pg.PoolClient,
    private readonly deadlineMs: number,
  ) {
    this.due = deadlineMs > 0 ? performance.now() + deadlineMs : Infinity;
  }

  expire(): void {
    withDeadline.delete(this);
    if (this.released) return;
    this.timedOut = true;
    this.broken ??= new Error(`the database did not answer within ${this.deadlineMs} ms`);
    log('no answer within %d ms: closing the connection', this.deadlineMs);
    socketOf(this.client)?.destroy();
  }

  release(err?: unknown): void {
    this.giveBack(this.broken ?? (err !== undefined && isConnectionFailure(err) ? asError(err) : undefined));
  }

  discard(): void {
    this.giveBack(this.broken ?? new Error('discarded by the gateway'));
  }

  private giveBack(discard: Error | undefined): void {
    if (this.released) return;
    this.released = true;
    if (this.due !== Infinity) withDeadline.delete(this);
    // From here the client's errors are the pool's (logged by the permanent listener).
    if (leaseOf.get(this.client) === this) leaseOf.delete(this.client);
    // release(err) makes pg-pool close the client instead of keeping it idle. pg-pool attaches
    // its idle listener inside release(), so the client is never without one.
    this.client.release(discard);
  }
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
