/**
 * Coalesces requests for a schema reload (a DDL notification, a changed catalog fingerprint, a
 * LISTEN connection that came back) into as few reloads as keep the cache current.
 *
 * In: `request(reason)` calls, any number, at any time. Out: calls of `reload(reason)`: the first
 * `windowMs` after the first request of a burst (so a migration of fifty statements costs one or
 * two reloads, not fifty), never two at once, and exactly one more after a reload during which a
 * request arrived, because that reload may have read the catalog before the change committed.
 * Never: throws from `request()`, or starts a reload after `stop()`.
 */
export interface ReloadScheduler {
  request(reason: string): void;
  /** Cancels a reload not yet started and waits for a running one. */
  stop(): Promise<void>;
}

export interface ReloadSchedulerOptions {
  /** How long to gather requests before reloading, in ms. */
  readonly windowMs: number;
  /** A failed reload is reported here; the next request tries again. */
  readonly onError: (err: unknown, reason: string) => void;
}

export function createReloadScheduler(reload: (reason: string) => Promise<void>, options: ReloadSchedulerOptions): ReloadScheduler {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  // The reason of the first request not yet served; undefined when nothing is pending.
  let pending: string | undefined;
  let stopped = false;

  const arm = (): void => {
    if (timer !== undefined || stopped) return;
    timer = setTimeout(fire, options.windowMs);
    // A pending reload must not keep the host process alive.
    timer.unref();
  };

  const fire = (): void => {
    timer = undefined;
    if (running !== undefined || stopped || pending === undefined) return;
    const reason = pending;
    pending = undefined;
    running = (async () => {
      try {
        await reload(reason);
      } catch (err) {
        options.onError(err, reason);
      } finally {
        running = undefined;
        if (pending !== undefined) arm();
      }
    })();
  };

  return {
    request(reason: string): void {
      if (stopped) return;
      pending ??= reason;
      if (running === undefined) arm();
    },
    async stop(): Promise<void> {
      stopped = true;
      pending = undefined;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
