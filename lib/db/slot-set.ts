/**
 * A set of the requests (or leases) in flight, for the few code paths that must reach each of
 * them later (a drain that times out, a deadline sweep): an array of slots with a free list
 * instead of a `Set`.
 *
 * Why not a Set: every request adds and removes an entry, and a Set's backing table is
 * reallocated as entries come and go; the long-lived Set then holds young tables full of young
 * entries, which survive scavenges and are promoted with everything they reach (the request, its
 * response, its rows). Measured with `BENCH_NODE_FLAGS=--trace-gc-nvp` (docs/performance.md,
 * "Where the garbage went"): the drain's Set alone doubled the bytes promoted per request. Here
 * the array grows to the peak number in flight and stays; a slot is overwritten, never
 * reallocated, and `delete` clears it at once.
 */
export class SlotSet<T extends { slot: number }> {
  private readonly slots: (T | undefined)[] = [];
  private readonly free: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(item: T): void {
    const slot = this.free.length > 0 ? this.free.pop()! : this.slots.length;
    this.slots[slot] = item;
    item.slot = slot;
    this.count++;
  }

  /** False when `item` is not in the set (already deleted). */
  delete(item: T): boolean {
    const slot = item.slot;
    if (slot < 0 || this.slots[slot] !== item) return false;
    this.slots[slot] = undefined;
    this.free.push(slot);
    item.slot = -1;
    this.count--;
    return true;
  }

  /** The items, in no particular order (a copy: the caller may delete while iterating). */
  items(): T[] {
    const out: T[] = [];
    for (const item of this.slots) if (item !== undefined) out.push(item);
    return out;
  }

  clear(): void {
    for (const item of this.slots) if (item !== undefined) item.slot = -1;
    this.slots.length = 0;
    this.free.length = 0;
    this.count = 0;
  }
}
