/**
 * After a batch INSERT failed in PostgreSQL (a unique, check or not-null violation, a bad
 * literal, an RLS WITH CHECK failure), find which row it was. The batch is one statement, and
 * PostgreSQL's error does not say which element of the JSON array it was evaluating.
 *
 * Prefix probes: inserting the first k rows fails for every k at or past the first failing row
 * and succeeds before it (a row's constraints do not depend on the rows after it), so a binary
 * search over k finds that row in log2(batch size) statements: 10 for 1,000 rows. They run in
 * one transaction, as the caller and with the caller's tenant context, each under a savepoint
 * that is rolled back, and the transaction itself is always rolled back: probing never writes.
 * Afterwards the session is reset to the role's defaults, as after every request.
 * This costs round trips only on the failure path; a successful batch is still one.
 */
import type pg from 'pg';
import type { FailingRow } from '../pipeline/database';
import type { RowProbe } from '../pipeline/plan';
import type { CompiledQuery } from '../sql/sql';
import { sessionResetText } from './pipelined-transaction';

/**
 * `context` sets the caller's tenant context (the same statement the batch ran after);
 * `distributedContext`, on Citus, its SET LOCAL statements (distributed-context.ts).
 * `isRowError` says whether a probe's error is a row's fault; any other error (a timeout, a
 * lost connection) stops the search, and the caller reports the batch's own error unchanged.
 */
export async function locateFailingRow(
  client: pg.ClientBase,
  context: CompiledQuery,
  probe: RowProbe,
  isRowError: (err: unknown) => boolean,
  distributedContext?: string,
): Promise<FailingRow | undefined> {
  await client.query('BEGIN');
  try {
    await client.query(context.text, context.values as unknown[]);
    if (distributedContext !== undefined) await client.query(distributedContext);
    await client.query('SAVEPOINT tablegate_probe');
    // Invariant: the first `ok` rows insert; the first `failing` rows do not.
    let ok = 0;
    let failing = probe.rows;
    let error: unknown;
    const attempt = async (prefix: number): Promise<boolean> => {
      const { text, values } = probe.query(prefix);
      try {
        await client.query(text, values as unknown[]);
        return true;
      } catch (err) {
        if (!isRowError(err)) throw err;
        error = err;
        return false;
      } finally {
        await client.query('ROLLBACK TO SAVEPOINT tablegate_probe');
      }
    };
    while (failing - ok > 1) {
      const mid = Math.floor((ok + failing) / 2);
      if (await attempt(mid)) ok = mid;
      else failing = mid;
    }
    // The whole batch was never probed here (it failed in its own transaction): confirm it still
    // fails before blaming its last row.
    if (error === undefined && (await attempt(failing))) return undefined;
    return { index: failing - 1, error };
  } finally {
    await client.query('ROLLBACK');
    // The rollback undid every setting made in the transaction, but not session-level advisory
    // locks; the reset leaves the connection as a pipelined batch does (docs/security.md).
    await client.query(sessionResetText);
  }
}
