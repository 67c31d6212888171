/**
 * At `ready`: do named prepared statements survive from one transaction to the next on this
 * pool's connections? Not behind a pooler that hands each transaction whichever server connection
 * is free (PgBouncer in transaction mode before 1.21, or later without max_prepared_statements);
 * sending them anyway makes most requests fail with "prepared statement ... does not exist" or
 * "... already exists" (docs/scaling-out.md).
 *
 * In: the pool. Out: a verdict; `lost` only on proof. Never: leaves a transaction open, holds a
 * connection while waiting for another one, or creates a statement on a direct connection.
 *
 * 1. One unnamed `SELECT pg_backend_pid()`. On a direct connection it is the process id the server
 *    announced at connect (BackendKeyData, PostgreSQL docs §55.2.1); a pooler announces a key of
 *    its own. Equal: direct, statements are kept.
 * 2. Behind a pooler: prepare a probe statement P (`SELECT pg_backend_pid()`) on client c1 and run
 *    it (server session S). Then a second client c2 opens a transaction and asks for its pid.
 *    - c2 got S (PgBouncer reuses the most recently freed server connection first): sessions are
 *      shared between clients per transaction. c2 prepares P too: "already exists" proves that the
 *      pooler passes statements through unmanaged; success means it manages them (1.21+).
 *    - c2 got another session: c2 ends its transaction (its session is now the most recently
 *      freed) and c1 runs P again. "does not exist" proves c1 moved to a session without P; success
 *      means the pooler carried P (or c1 stayed on S: nothing proven, statements stay on, and the
 *      request-time fallback in create-database.ts still covers it).
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

export interface NamedStatementsVerdict {
  readonly kept: boolean;
  /** Why, in words for the log. */
  readonly why: string;
}

const PID = 'SELECT pg_backend_pid() AS pid';

export async function probeNamedStatements(pool: pg.Pool): Promise<NamedStatementsVerdict> {
  const c1 = await pool.connect();
  let c2: pg.PoolClient | undefined;
  let broken: Error | undefined;
  try {
    const announced = (c1 as unknown as { processID?: unknown }).processID;
    if (announced === (await pidOf(c1, PID))) return { kept: true, why: 'a direct connection to PostgreSQL' };

    const probe = { name: `tablegate_probe_${randomBytes(6).toString('hex')}`, text: PID };
    const first = await pidOf(c1, probe);
    // Only a pool that can lend a second connection without waiting for the first.
    const max = (pool as { options?: { max?: unknown } }).options?.max;
    if (typeof max !== 'number' || max < 2) return { kept: true, why: 'a pooler sits in between; a pool of one connection cannot tell more' };
    c2 = await pool.connect();
    await c2.query('BEGIN');
    if ((await pidOf(c2, PID)) === first) {
      const prepared = await c2.query(probe).then(() => undefined, (err: unknown) => err);
      await c2.query('ROLLBACK');
      if (sqlstateOf(prepared) === '42P05') return { kept: false, why: 'two client connections share one server session and its prepared statements' };
      if (prepared) throw prepared;
      return { kept: true, why: 'the pooler manages prepared statements' };
    }
    await c2.query('ROLLBACK');
    c2.release();
    c2 = undefined;
    const again = await c1.query(probe).then(() => undefined, (err: unknown) => err);
    if (sqlstateOf(again) === '26000') return { kept: false, why: 'a prepared statement was gone in the next transaction on the same connection' };
    if (again) throw again;
    return { kept: true, why: 'a prepared statement was still there in the next transaction' };
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    // A client whose probe failed half-way may sit in a transaction: do not give it back.
    c2?.release(broken ?? false);
    c1.release(broken ?? false);
  }
}

async function pidOf(client: pg.PoolClient, query: string | { name: string; text: string }): Promise<number> {
  const { rows } = await client.query<{ pid: number }>(query);
  const pid = rows[0]?.pid;
  if (typeof pid !== 'number') throw new Error('pg_backend_pid() returned no number');
  return pid;
}

function sqlstateOf(err: unknown): unknown {
  return (err as { code?: unknown } | undefined)?.code;
}
