/**
 * The dedicated connection that LISTENs for schema-change notifications (docs/scaling-out.md,
 * "Schema reload on DDL").
 *
 * In: a factory for unconnected pg Clients, the channel name and two callbacks. Out: `onNotify()`
 * for each notification on the channel, and `onReconnect()` each time the connection comes back
 * after a loss (notifications sent while it was down are lost, so the caller reloads anyway).
 * Never: emits an unhandled 'error' (every client gets an 'error' listener before it connects),
 * gives up reconnecting before `stop()`, or uses a pool connection (a pooled connection goes
 * back to the pool between queries, and PgBouncer in transaction mode cannot keep a LISTEN).
 */
import pg from 'pg';
import createDebug from 'debug';
import { GatewayConfigError } from '../errors/gateway-config-error';
import { compileSql, ident, sql } from '../sql/sql';

const log = createDebug('tablegate:reload');

export interface ReloadListener {
  /** Connects and LISTENs; rejects when the first attempt fails. */
  start(): Promise<void>;
  /** Stops reconnecting and closes the connection. */
  stop(): Promise<void>;
}

export interface ReloadListenerOptions {
  readonly newClient: () => pg.Client;
  readonly channel: string;
  readonly onNotify: () => void;
  readonly onReconnect: () => void;
  /** Reconnect delays: first, then doubled up to max (ms). */
  readonly backoff?: { readonly firstMs: number; readonly maxMs: number };
}

export function createReloadListener(options: ReloadListenerOptions): ReloadListener {
  const { firstMs, maxMs } = options.backoff ?? { firstMs: 250, maxMs: 10_000 };
  const listen = compileSql(sql`LISTEN ${ident(options.channel)}`).text;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  let stopped = false;

  // Losing `client` (an 'error', an 'end', a failed connect) starts a retry, once per client.
  const lost = (client: pg.Client, err: Error | undefined): void => {
    if (current !== client) return;
    current = undefined;
    client.end().catch(() => undefined);
    if (stopped) return;
    log('LISTEN connection lost (%s); reconnecting', err?.message ?? 'closed');
    scheduleRetry();
  };

  const open = async (): Promise<void> => {
    const client = options.newClient();
    current = client;
    client.on('error', (err: Error) => lost(client, err));
    client.on('end', () => lost(client, undefined));
    client.on('notification', (message: pg.Notification) => {
      if (message.channel === options.channel) options.onNotify();
    });
    try {
      await client.connect();
      await client.query(listen);
    } catch (err) {
      lost(client, err as Error);
      throw err;
    }
    if (stopped || current !== client) {
      await client.end().catch(() => undefined);
      return;
    }
    failures = 0;
    log('listening on channel %s', options.channel);
  };

  const scheduleRetry = (): void => {
    if (stopped || retry !== undefined) return;
    const delay = Math.min(maxMs, firstMs * 2 ** failures);
    failures++;
    retry = setTimeout(() => {
      retry = undefined;
      if (stopped) return;
      open().then(
        () => {
          if (!stopped) options.onReconnect();
        },
        // lost() has already scheduled the next attempt.
        (err: unknown) => log('LISTEN reconnect failed: %s', err instanceof Error ? err.message : String(err)),
      );
    }, delay);
    retry.unref();
  };

  return {
    async start(): Promise<void> {
      try {
        await open();
      } catch (err) {
        // The first attempt is reported to `ready` instead of retried in the background.
        stopped = true;
        if (retry !== undefined) clearTimeout(retry);
        retry = undefined;
        throw err;
      }
    },
    async stop(): Promise<void> {
      stopped = true;
      if (retry !== undefined) clearTimeout(retry);
      retry = undefined;
      const client = current;
      current = undefined;
      if (client) await client.end().catch(() => undefined);
    },
  };
}

/**
 * Makes LISTEN clients outside the pool: with `reloadClient` (the connection-policy Client of
 * `reload_database_url`) when it is given, else like the pool's own connections (same Client
 * class, TLS and auth options).
 */
export function listenClientFactory(pool: pg.Pool, reloadClient: typeof pg.Client | undefined): () => pg.Client {
  const own = { application_name: 'tablegate-reload', keepAlive: true };
  if (reloadClient !== undefined) return () => new reloadClient(own as pg.ClientConfig);
  const source = pool as unknown as { options?: Record<string, unknown>; Client?: typeof pg.Client };
  if (source.options === undefined) {
    throw new GatewayConfigError(
      'the given pool has no connection options for the schema-reload LISTEN connection; set reload_database_url, or reload_listen = false',
      'reloadDatabaseUrl',
    );
  }
  const base: Record<string, unknown> = { ...source.options };
  // pg-pool keeps the password non-enumerable, so the spread above does not copy it.
  if ('password' in source.options) base['password'] = source.options['password'];
  const Client = source.Client ?? pg.Client;
  const config = { ...base, ...own };
  return () => new Client(config as pg.ClientConfig);
}
