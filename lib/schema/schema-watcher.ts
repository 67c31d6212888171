/**
 * Keeps the schema cache current without anyone calling `reloadSchema()` (docs/scaling-out.md,
 * "Schema reload on DDL"): a LISTEN connection for the notifications of the DDL event trigger,
 * and/or a timer that compares a catalog fingerprint (`schema_poll_s`), both feeding one
 * debounced reload scheduler.
 *
 * In: the pool (for fingerprint queries), the schemas, the LISTEN settings, the poll interval and
 * the gateway's reload function. Out: calls of `reload(reason)` with reason `notify`, `poll` or
 * `reconnect`, one at a time. Never: reloads after `stop()`, keeps the process alive (its timers
 * are unref'd; stop() closes the connection), or lets a failed poll or reload escape as an
 * unhandled rejection.
 */
import type pg from 'pg';
import createDebug from 'debug';
import type { Queryable } from './introspect';
import { createReloadListener, type ReloadListener } from './reload-listener';
import { createReloadScheduler } from './reload-scheduler';
import { schemaFingerprint } from './schema-fingerprint';

const log = createDebug('tablegate:reload');

export type WatchReason = 'notify' | 'poll' | 'reconnect';

export interface SchemaWatcher {
  /** Opens the LISTEN connection and takes the first fingerprint; call before the first discovery. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface SchemaWatcherOptions {
  readonly pool: Queryable;
  readonly schemas: readonly string[];
  /** Undefined: no LISTEN connection. */
  readonly listen: { readonly newClient: () => pg.Client; readonly channel: string } | undefined;
  /** 0: no polling. */
  readonly pollMs: number;
  /** Notifications closer together than this share one reload. */
  readonly windowMs?: number;
  readonly reload: (reason: WatchReason) => Promise<void>;
}

/** Long enough to gather the statements of one migration, short enough to stay well under 1 s. */
export const RELOAD_WINDOW_MS = 150;

export function createSchemaWatcher(options: SchemaWatcherOptions): SchemaWatcher {
  const polling = options.pollMs > 0;
  let fingerprint: string | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  const scheduler = createReloadScheduler(
    async (reason) => {
      // The fingerprint is taken before the catalog is read, so a change that lands in between
      // shows up at the next poll; it is kept only when the reload succeeded, so a failed reload
      // is retried at the next poll.
      const next = polling ? await schemaFingerprint(options.pool, options.schemas).catch(() => undefined) : undefined;
      await options.reload(reason as WatchReason);
      if (next !== undefined) fingerprint = next;
    },
    {
      windowMs: options.windowMs ?? RELOAD_WINDOW_MS,
      onError: (err, reason) => log('schema reload (%s) failed: %s', reason, err instanceof Error ? err.message : String(err)),
    },
  );

  const listener: ReloadListener | undefined =
    options.listen &&
    createReloadListener({
      newClient: options.listen.newClient,
      channel: options.listen.channel,
      onNotify: () => scheduler.request('notify'),
      onReconnect: () => scheduler.request('reconnect'),
    });

  const poll = async (): Promise<void> => {
    try {
      const now = await schemaFingerprint(options.pool, options.schemas);
      if (stopped) return;
      if (fingerprint !== undefined && now !== fingerprint) scheduler.request('poll');
      else fingerprint = now;
    } catch (err) {
      log('schema poll failed: %s', err instanceof Error ? err.message : String(err));
    } finally {
      if (!stopped) armPoll();
    }
  };
  const armPoll = (): void => {
    pollTimer = setTimeout(() => void poll(), options.pollMs);
    pollTimer.unref();
  };

  return {
    async start(): Promise<void> {
      if (listener) {
        try {
          await listener.start();
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          throw new Error(
            `cannot LISTEN for schema changes on channel ${options.listen!.channel} (${message}); ` +
              'set reload_database_url to a direct connection, or reload_listen = false (see docs/scaling-out.md)',
          );
        }
      }
      if (polling) {
        fingerprint = await schemaFingerprint(options.pool, options.schemas);
        if (!stopped) armPoll();
      }
    },
    async stop(): Promise<void> {
      stopped = true;
      if (pollTimer !== undefined) clearTimeout(pollTimer);
      await Promise.all([listener?.stop(), scheduler.stop()]);
    },
  };
}
