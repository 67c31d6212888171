/**
 * An express-rate-limit Store over the gateway's own pool, so every instance on one database
 * counts against one limit (docs/scaling-out.md#rate-limits). express-rate-limit keeps the
 * limiting logic, headers and windows; this file only counts.
 * In: a key (lib/ops/rate-limit-key.ts) and the window. Out: the hits in the key's current
 * window and when it resets.
 * Each hit is ONE statement, an upsert on `tablegate.rate_limit`, a table the operator creates
 * (the gateway's role needs no DDL privilege); the database clock decides windows, so instances
 * whose clocks differ still agree. Expired rows are deleted once per window (at least a minute).
 * Two things keep one busy caller from tying up the pool (docs/performance.md, "Rate limits"):
 * - hits on one key that arrive while its upsert runs wait and go as ONE upsert adding their
 *   number, so an instance never has two statements queued on the same row lock;
 * - a key over its limit is refused from memory until its window resets: its count can only
 *   grow, so the database has nothing more to say about it until then.
 * Never: creates schema objects; keeps a pool of its own (a pool without an 'error' listener
 * would crash the host on a database restart); lets a failed count pass (the caller refuses the
 * request instead).
 */
import type { ClientRateLimitInfo, IncrementResponse, Options, Store } from 'express-rate-limit';
import type pg from 'pg';
import createDebug from 'debug';
import { compileSql, ident, sql } from '../sql/sql';
import type { CompiledQuery } from '../sql/sql';

const log = createDebug('tablegate:rate-limit');

/** Schema and table of the counters; docs/scaling-out.md has the SQL that creates them. */
export const rateLimitTable = { schema: 'tablegate', name: 'rate_limit' } as const;
const table = ident(rateLimitTable.schema, rateLimitTable.name);

// The hit count is int4: it stops one short of the maximum rather than overflow (a key that is
// hit 2^31 times in one window is refused either way). Remaining time, not the reset instant, is
// returned, so this host's clock offset from the database's does not matter.
const hit = (key: string, n: number, windowMs: number): CompiledQuery => compileSql(sql`INSERT INTO ${table} AS r (key, hits, reset_at)
VALUES (${key}, ${n}::int4, now() + ${windowMs}::float8 * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET
  hits = CASE WHEN r.reset_at <= now() THEN excluded.hits ELSE least(r.hits, 2147483647 - excluded.hits) + excluded.hits END,
  reset_at = CASE WHEN r.reset_at <= now() THEN excluded.reset_at ELSE r.reset_at END
RETURNING hits, (extract(epoch FROM r.reset_at - now()) * 1000)::float8 AS reset_in_ms`);
const count = (key: string): CompiledQuery => compileSql(sql`SELECT hits, (extract(epoch FROM reset_at - now()) * 1000)::float8 AS reset_in_ms
FROM ${table} WHERE key = ${key} AND reset_at > now()`);
const decrement = (key: string): CompiledQuery => compileSql(sql`UPDATE ${table} SET hits = greatest(hits - 1, 0) WHERE key = ${key} AND reset_at > now()`);
const reset = (key: string): CompiledQuery => compileSql(sql`DELETE FROM ${table} WHERE key = ${key}`);
const expire = compileSql(sql`DELETE FROM ${table} WHERE reset_at <= now()`);

/** The parts of a pg Pool the store uses. */
export type RateLimitPool = Pick<pg.Pool, 'query' | 'connect'>;

interface CountRow {
  hits: number;
  reset_in_ms: number;
}

interface Waiter {
  resolve(info: IncrementResponse): void;
  reject(err: unknown): void;
}

export class PostgresRateLimitStore implements Store {
  /** Counts live in the database: the same key in another limiter (another instance) is the same count. */
  readonly localKeys = false;
  readonly prefix = 'tablegate-pg:';
  private windowMs = 60_000;
  private limit = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  /** Keys whose upsert is running, with the hits that arrived since (sent together next). */
  private readonly running = new Map<string, Waiter[]>();
  /** Keys over the limit: hits so far and when the window resets (this host's clock). */
  private readonly over = new Map<string, { hits: number; resetAt: number }>();

  /** `prepared`: name the hit statement, so each connection parses it once (off for poolers that cannot keep it). */
  constructor(
    private readonly pool: RateLimitPool,
    private readonly prepared: () => boolean,
  ) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
    if (typeof options.limit === 'number') this.limit = options.limit;
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      const now = Date.now();
      for (const [key, o] of this.over) if (o.resetAt <= now) this.over.delete(key);
      this.pool.query(expire.text).catch((err: unknown) => log('deleting expired counts failed: %s', messageOf(err)));
    }, Math.max(this.windowMs, 60_000));
    this.timer.unref();
  }

  increment(key: string): Promise<IncrementResponse> {
    const known = this.overLimit(key);
    if (known !== undefined) return Promise.resolve(known);
    return new Promise((resolve, reject) => {
      const waiting = this.running.get(key);
      if (waiting !== undefined) {
        waiting.push({ resolve, reject });
        return;
      }
      this.running.set(key, []);
      this.send(key, [{ resolve, reject }]);
    });
  }

  /** One upsert for `batch`; then the hits that arrived meanwhile, until none is left. */
  private send(key: string, batch: readonly Waiter[]): void {
    const { text, values } = hit(key, batch.length, this.windowMs);
    const query: pg.QueryConfig = { text, values: [...values] };
    if (this.prepared()) query.name = 'tablegate_rate_limit_hit_v2';
    this.pool.query<CountRow>(query).then(
      ({ rows }) => {
        const info = infoOf(rows[0]) ?? { totalHits: batch.length, resetTime: new Date(Date.now() + this.windowMs) };
        // The batch's hits are the last `batch.length` of the total, in arrival order.
        batch.forEach((w, i) => w.resolve({ totalHits: info.totalHits - batch.length + 1 + i, resetTime: info.resetTime }));
        if (info.totalHits > this.limit && info.resetTime !== undefined) this.over.set(key, { hits: info.totalHits, resetAt: info.resetTime.getTime() });
        this.next(key);
      },
      (err: unknown) => {
        for (const w of batch) w.reject(err);
        this.next(key);
      },
    );
  }

  private next(key: string): void {
    const waiting = this.running.get(key) ?? [];
    if (waiting.length === 0) {
      this.running.delete(key);
      return;
    }
    if (this.isOver(key)) {
      this.running.delete(key);
      for (const w of waiting) w.resolve(this.overLimit(key)!);
      return;
    }
    this.running.set(key, []);
    this.send(key, waiting);
  }

  private isOver(key: string): boolean {
    const o = this.over.get(key);
    if (o !== undefined && o.resetAt <= Date.now()) this.over.delete(key);
    return this.over.has(key);
  }

  /** A key known to be over its limit: one more hit, counted here, and its reset time. */
  private overLimit(key: string): IncrementResponse | undefined {
    if (!this.isOver(key)) return undefined;
    const o = this.over.get(key)!;
    o.hits = Math.min(o.hits + 1, 2147483647);
    return { totalHits: o.hits, resetTime: new Date(o.resetAt) };
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const { text, values } = count(key);
    const { rows } = await this.pool.query<CountRow>(text, [...values]);
    return infoOf(rows[0]);
  }

  async decrement(key: string): Promise<void> {
    const { text, values } = decrement(key);
    await this.pool.query(text, [...values]);
  }

  async resetKey(key: string): Promise<void> {
    this.over.delete(key);
    const { text, values } = reset(key);
    await this.pool.query(text, [...values]);
  }

  shutdown(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * At `ready`: one hit and one reset of a probe key in a transaction that is rolled back, so a
   * missing table, a missing privilege or a wrong column shows at start-up, not on the first request.
   */
  async check(): Promise<void> {
    const client = await this.pool.connect();
    const probe = 'tablegate:probe';
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      for (const q of [hit(probe, 1, this.windowMs), count(probe), decrement(probe), reset(probe), expire]) await client.query(q.text, [...q.values]);
    } finally {
      await client.query('ROLLBACK').catch((err: Error) => {
        broken = err;
      });
      client.release(broken);
    }
  }
}

function infoOf(row: CountRow | undefined): ClientRateLimitInfo | undefined {
  if (row === undefined) return undefined;
  return { totalHits: Number(row.hits), resetTime: new Date(Date.now() + Math.max(0, Number(row.reset_in_ms))) };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
