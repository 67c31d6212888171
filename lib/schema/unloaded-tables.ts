/**
 * UnloadedTables: answers "is this unknown table name in the database after all?", for the hint of
 * an unknown table's 404 (the schema may need a reload, docs/errors.md), at a bounded cost: a
 * hostile caller sending 404s with random names must not turn each into a catalog query.
 * In: a lookup (db/relation-exists.ts) and names from request paths. Out: true, or false when the
 * name is not there, not identifier-like, over the budget, or the lookup failed.
 * Never: more than `perSecond` lookups in a one-second window; the same name twice in one window.
 */
export class UnloadedTables {
  private windowStart = 0;
  private lookups = 0;
  private readonly seen = new Map<string, Promise<boolean>>();

  constructor(
    private readonly lookup: (name: string) => Promise<boolean>,
    private readonly perSecond = 10,
    private readonly now: () => number = Date.now,
  ) {}

  exists(name: string): Promise<boolean> {
    // Plain names only: letters, digits, _ and $, up to PostgreSQL's 63 bytes.
    if (!/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/.test(name)) return Promise.resolve(false);
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.windowStart = t;
      this.lookups = 0;
      this.seen.clear();
    }
    const known = this.seen.get(name);
    if (known !== undefined) return known;
    if (this.lookups >= this.perSecond) return Promise.resolve(false);
    this.lookups++;
    const answer = this.lookup(name).catch(() => false);
    this.seen.set(name, answer);
    return answer;
  }
}
