/**
 * Draining: how `gateway.close()` stops the request path without failing the requests it has
 * already taken (docs/scaling-out.md, "Shutting down").
 *
 * In: `enter(onAbort)` at the start of every request and `leave()` at its end; `drain(timeoutMs)`
 * once, from close(). Out: once draining, `enter()` returns undefined and the caller answers 503;
 * `drain()` resolves when every request that entered has left, or at the timeout, after calling
 * the `onAbort` of each request still running (which answers it 503). Never: waits past the
 * timeout, aborts a request twice, or aborts a request that has left.
 */
import { SlotSet } from '../db/slot-set';

export interface DrainTicket {
  /** True once the drain timeout answered this request: it must not write its own response. */
  readonly aborted: boolean;
  leave(): void;
}

/** A request that entered: its own ticket, so that entering allocates one object. */
class Entry implements DrainTicket {
  aborted = false;
  /** Its place in the drain's SlotSet; -1 once it left. */
  slot = -1;

  constructor(
    private readonly drain: Drain,
    readonly onAbort: () => void,
  ) {}

  leave(): void {
    this.drain.left(this);
  }
}

export class Drain {
  private closing = false;
  // Not a Set: see lib/db/slot-set.ts (a Set here doubled the garbage promoted per request).
  private readonly running = new SlotSet<Entry>();
  private idle: (() => void) | undefined;

  /** True from the moment close() was called. */
  get draining(): boolean {
    return this.closing;
  }

  get inFlight(): number {
    return this.running.size;
  }

  /** Undefined when draining: the request must be refused. */
  enter(onAbort: () => void): DrainTicket | undefined {
    if (this.closing) return undefined;
    const entry = new Entry(this, onAbort);
    this.running.add(entry);
    return entry;
  }

  /** Entry.leave(): a request that already left, or was aborted, changes nothing. */
  left(entry: Entry): void {
    if (this.running.delete(entry) && this.running.size === 0) this.idle?.();
  }

  /** Refuses new requests from now on (synchronously), then waits; resolves with the number aborted. */
  drain(timeoutMs: number): Promise<number> {
    this.closing = true;
    if (this.running.size === 0) return Promise.resolve(0);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idle = undefined;
        const left = this.running.items();
        this.running.clear();
        for (const entry of left) {
          entry.aborted = true;
          try {
            entry.onAbort();
          } catch {
            // Answering is best effort: the connection may already be gone.
          }
        }
        resolve(left.length);
      }, timeoutMs);
      this.idle = () => {
        clearTimeout(timer);
        this.idle = undefined;
        resolve(0);
      };
    });
  }
}
