/**
 * The clients of a pool that are checked out right now, so that a drain that timed out can close
 * them (docs/scaling-out.md, "Shutting down").
 *
 * In: a pg-pool, watched through its public 'acquire' and 'release' events. Out: `endAll()`,
 * which ends every checked-out client; node-postgres then fails the statement running on it
 * ("Connection terminated"), its owner releases it, and `pool.end()` can finish. Never: touches a
 * pool it was not given, or ends an idle client (pool.end() does that).
 */
import type pg from 'pg';

export interface CheckedOutClients {
  endAll(): number;
}

export function trackCheckedOutClients(pool: pg.Pool): CheckedOutClients {
  const out = new Set<pg.PoolClient>();
  pool.on('acquire', (client: pg.PoolClient) => out.add(client));
  pool.on('release', (_err: Error | undefined, client: pg.PoolClient) => out.delete(client));
  return {
    endAll(): number {
      const clients = [...out];
      out.clear();
      // end() with a statement in flight destroys the socket rather than waiting for it.
      for (const client of clients) (client as unknown as pg.Client).end().catch(() => undefined);
      return clients.length;
    },
  };
}
