/**
 * Whether the database is a Citus coordinator (docs/citus.md): the `citus` extension is installed
 * in it. Asked at `ready` (and again at each start), never on the request path. On Citus every
 * transaction carries its context by SET LOCAL as well (distributed-context.ts).
 */
import type pg from 'pg';

export async function detectCitus(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ citus: boolean }>("SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus') AS citus");
  return rows[0]?.citus === true;
}
