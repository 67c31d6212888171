/**
 * Read replicas (read_replica_urls): sends read-only plans to a healthy replica and everything
 * else to the primary, keeps each replica's health and lag, and falls back to the primary.
 * docs/scaling-out.md ("Read replicas") is the user-facing description.
 *
 * In: the primary's runner and pool, one runner and pool per replica (each made by the same code
 * as the primary's: create-database.ts, create-replica-pool.ts), and per request the caller, the
 * plan and whether the caller asked for the primary. Out: the plan's result, from a replica or the
 * primary. Never: sends a plan that may write (plan.readOnly false) to a replica; lets a replica's
 * failure reach the caller while the primary can answer; routes to a replica that has not passed
 * the role check (row-level security must apply there as on the primary).
 *
 * Routing: the healthy replica with the fewest connections in use or waiting ("least busy"), ties
 * taken in turn (round robin), so an idle gateway spreads reads evenly and a busy one steers
 * around a slow replica. A replica that fails at the connection level is out for
 * read_replica_retry_ms, and the same read is retried on the primary (safe: the plan is read-only,
 * the failed attempt changed nothing). A periodic check measures lag (replica-lag.ts), notices a
 * replica that went away with no traffic, takes out one further behind than
 * read_replica_max_lag_ms, and brings back a replica whose retry time has passed once it answers
 * and passes the role check again.
 *
 * Generic over the identity, plan and result types so that this floor imports no stage; the
 * gateway instantiates it with the execute stage's Database types.
 */
import type pg from 'pg';
import createDebug from 'debug';
import { GatewayConfigError } from '../errors/gateway-config-error';
import { RecentWriters } from './recent-writers';
import { replicaFault } from './replica-fault';
import { lagOf, primaryPosition, replicaPosition } from './replica-lag';

const log = createDebug('tablegate:replicas');

/** `ready` waits this long for the first check, so a replica that hangs does not hold up start-up. */
export const firstCheckWaitMs = 2000;

export interface ReadPlan {
  readonly readOnly: boolean;
}

export interface Runner<I, P extends ReadPlan, R> {
  run(identity: I, plan: P): Promise<R>;
}

export interface Replica<I, P extends ReadPlan, R> {
  readonly pool: pg.Pool;
  readonly runner: Runner<I, P, R>;
  readonly host: string;
  readonly port: number;
}

export interface ReplicaSetOptions<I, P extends ReadPlan, R> {
  readonly primaryPool: pg.Pool;
  readonly primary: Runner<I, P, R>;
  readonly replicas: readonly Replica<I, P, R>[];
  /** The read-your-writes key of a caller (tenant and user). */
  readonly callerOf: (identity: I) => string;
  /** Throws a GatewayConfigError when the replica's role is one row-level security does not bind. */
  readonly checkRole: (pool: pg.Pool, index: number) => Promise<void>;
  readonly retryMs: number;
  readonly checkIntervalMs: number;
  readonly maxLagMs: number | undefined;
  readonly readYourWritesMs: number;
}

/** Why a replica gets no reads. */
export type OutReason = 'starting' | 'unreachable' | 'lagging' | 'role';

/** One replica as /health/internal shows it (snake_case, no credentials). */
export interface ReplicaStatus {
  readonly host: string;
  readonly port: number;
  readonly state: 'healthy' | 'out';
  readonly reason: OutReason | null;
  readonly lag_bytes: number | null;
  readonly lag_ms: number | null;
  readonly in_use: number;
  /** Seconds until a replica that is out is checked again; null when healthy or never (role). */
  readonly retry_in_s: number | null;
  /** Reads this replica answered. */
  readonly reads: number;
  /** Reads that failed here and were answered by the primary instead. */
  readonly fallbacks: number;
  /** errno code or SQLSTATE of the last failure; never a message (it may name hosts or users). */
  readonly last_error: string | null;
}

interface ReplicaState<I, P extends ReadPlan, R> extends Replica<I, P, R> {
  readonly index: number;
  healthy: boolean;
  reason: OutReason | null;
  retryAt: number;
  lagBytes: number | null;
  lagMs: number | null;
  reads: number;
  fallbacks: number;
  lastError: string | null;
}

export class ReplicaSet<I, P extends ReadPlan, R> {
  private readonly replicas: ReplicaState<I, P, R>[];
  private readonly writers: RecentWriters;
  /** The role check's error per replica index, for start() to reject with. */
  private readonly roleErrors = new Map<number, unknown>();
  private cursor = 0;
  private checking: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: ReplicaSetOptions<I, P, R>) {
    this.replicas = options.replicas.map((r, index) => ({
      ...r,
      index,
      healthy: false,
      reason: 'starting',
      retryAt: 0,
      lagBytes: null,
      lagMs: null,
      reads: 0,
      fallbacks: 0,
      lastError: null,
    }));
    this.writers = new RecentWriters(options.readYourWritesMs);
  }

  /**
   * First check (bounded by firstCheckWaitMs), then the periodic one. Rejects when a replica that
   * answered has a role that bypasses row-level security: a configuration error, as on the primary.
   */
  async start(): Promise<void> {
    await Promise.race([this.check(), new Promise((resolve) => setTimeout(resolve, firstCheckWaitMs).unref())]);
    const refused = this.replicas.find((r) => r.reason === 'role');
    if (refused) throw this.roleErrors.get(refused.index);
    if (this.closed) return;
    this.timer = setInterval(() => void this.check(), this.options.checkIntervalMs);
    this.timer.unref();
  }

  /** A write that ran on the primary outside `run` (a batch's transaction): pins the caller as `run` does. */
  wrote(identity: I): void {
    this.writers.wrote(this.options.callerOf(identity));
  }

  /** Runs a plan: writes on the primary, reads on a replica unless the caller is pinned to the primary. */
  async run(identity: I, plan: P, forcePrimary: boolean): Promise<R> {
    const { primary, callerOf } = this.options;
    if (!plan.readOnly) {
      const result = await primary.run(identity, plan);
      this.writers.wrote(callerOf(identity));
      return result;
    }
    if (forcePrimary || this.writers.pinned(callerOf(identity))) return primary.run(identity, plan);
    const replica = this.pick();
    if (!replica) return primary.run(identity, plan);
    let result: R;
    try {
      result = await replica.runner.run(identity, plan);
    } catch (err) {
      const fault = replicaFault(err);
      if (fault === undefined) throw err;
      if (fault === 'down') this.markOut(replica, 'unreachable', err);
      replica.fallbacks++;
      log('replica %d: read failed (%s), answered by the primary', replica.index, errorCode(err));
      return primary.run(identity, plan);
    }
    replica.reads++;
    return result;
  }

  status(): ReplicaStatus[] {
    const now = Date.now();
    return this.replicas.map((r) => ({
      host: r.host,
      port: r.port,
      state: r.healthy ? 'healthy' : 'out',
      reason: r.healthy ? null : r.reason,
      lag_bytes: r.lagBytes,
      lag_ms: r.lagMs,
      in_use: r.pool.totalCount - r.pool.idleCount,
      retry_in_s: r.healthy || r.retryAt === Infinity ? null : Math.max(0, Math.ceil((r.retryAt - now) / 1000)),
      reads: r.reads,
      fallbacks: r.fallbacks,
      last_error: r.lastError,
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.checking?.catch(() => undefined);
    await Promise.all(this.replicas.map((r) => r.pool.end().catch(() => undefined)));
  }

  /** Least busy healthy replica, ties in turn; undefined when none is healthy. */
  private pick(): ReplicaState<I, P, R> | undefined {
    const n = this.replicas.length;
    const start = this.cursor;
    this.cursor = (this.cursor + 1) % n;
    let best: ReplicaState<I, P, R> | undefined;
    let bestLoad = Infinity;
    for (let k = 0; k < n; k++) {
      const r = this.replicas[(start + k) % n]!;
      if (!r.healthy) continue;
      const load = r.pool.totalCount - r.pool.idleCount + r.pool.waitingCount;
      if (load < bestLoad) {
        best = r;
        bestLoad = load;
      }
    }
    return best;
  }

  private markOut(r: ReplicaState<I, P, R>, reason: OutReason, err?: unknown): void {
    if (r.reason === 'role') return;
    if (err !== undefined) r.lastError = errorCode(err);
    const retryAt = reason === 'role' ? Infinity : reason === 'lagging' ? Date.now() : Date.now() + this.options.retryMs;
    if (r.healthy || r.reason !== reason) log('replica %d (%s:%d) out: %s%s', r.index, r.host, r.port, reason, r.lastError ? ` (${r.lastError})` : '');
    r.healthy = false;
    r.reason = reason;
    r.retryAt = reason === 'unreachable' ? Math.max(r.retryAt, retryAt) : retryAt;
  }

  /** One round of checks; rounds never overlap (a slow server makes the next round wait). */
  private check(): Promise<void> {
    if (!this.checking) {
      this.checking = this.checkRound().finally(() => {
        this.checking = undefined;
      });
    }
    return this.checking;
  }

  private async checkRound(): Promise<void> {
    const now = Date.now();
    const due = this.replicas.filter((r) => r.healthy || (r.reason !== 'role' && now >= r.retryAt));
    if (due.length === 0 || this.closed) return;
    // The primary first, so a replica that replays in between reads as caught up, never as ahead.
    const primaryLsn = await primaryPosition(this.options.primaryPool).catch((err: unknown) => {
      log('primary WAL position unavailable (%s): replica lag unknown', errorCode(err));
      return null;
    });
    await Promise.all(due.map((r) => this.checkOne(r, primaryLsn)));
  }

  private async checkOne(r: ReplicaState<I, P, R>, primaryLsn: bigint | null): Promise<void> {
    try {
      // Admission: a server that was away may come back as another server, with another role.
      if (!r.healthy && r.reason !== 'lagging') await this.options.checkRole(r.pool, r.index);
      const lag = lagOf(primaryLsn, await replicaPosition(r.pool));
      if (this.closed) return;
      r.lagBytes = lag.bytes;
      r.lagMs = lag.ms;
      const maxLagMs = this.options.maxLagMs;
      if (maxLagMs !== undefined && lag.ms !== null && lag.ms > maxLagMs) return this.markOut(r, 'lagging');
      if (!r.healthy) log('replica %d (%s:%d) in rotation', r.index, r.host, r.port);
      r.healthy = true;
      r.reason = null;
    } catch (err) {
      r.lagBytes = null;
      r.lagMs = null;
      if (err instanceof GatewayConfigError) {
        this.roleErrors.set(r.index, err);
        // At start, `ready` rejects with this error; later there is no one to reject, so it is logged.
        if (r.reason !== 'role' && this.timer !== undefined) console.warn(`tablegate: WARNING: ${err.message}; this replica gets no reads.`);
        this.markOut(r, 'role', err);
        return;
      }
      this.markOut(r, 'unreachable', err);
    }
  }
}

/** The errno code or SQLSTATE of a failure, or a generic word: never its message. */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code)) return code;
  const message = (err as { message?: unknown } | null)?.message;
  if (typeof message === 'string' && /timeout/i.test(message)) return 'timeout';
  if (typeof message === 'string' && /Connection terminated/i.test(message)) return 'connection terminated';
  return err instanceof GatewayConfigError ? 'role' : 'error';
}
