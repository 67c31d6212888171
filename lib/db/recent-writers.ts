/**
 * Read-your-writes (read_your_writes_ms): which callers wrote in the last N ms, so that their
 * reads go to the primary until the replicas have had time to replay the write.
 * In: a caller key (tenant and user) when its write succeeded, and when it reads. Out: whether
 * its reads are pinned to the primary. Never: grows without bound.
 *
 * In-process: with several gateway instances behind a load balancer, a caller's next read may
 * land on an instance that did not see the write; docs/scaling-out.md says what to do about it.
 * Entries are kept in insertion order, which is expiry order because every entry gets the same
 * window, so expired ones are dropped from the front in O(1) per write.
 */
export const maxRecentWriters = 100_000;

export class RecentWriters {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries: number = maxRecentWriters,
  ) {}

  wrote(caller: string): void {
    if (this.windowMs <= 0) return;
    const now = this.now();
    this.until.delete(caller);
    this.until.set(caller, now + this.windowMs);
    // Past the cap the oldest pins go first: those callers may read a replica a little early.
    for (const [key, until] of this.until) {
      if (until > now && this.until.size <= this.maxEntries) break;
      this.until.delete(key);
    }
  }

  pinned(caller: string): boolean {
    const until = this.until.get(caller);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(caller);
    return false;
  }

  get size(): number {
    return this.until.size;
  }
}
