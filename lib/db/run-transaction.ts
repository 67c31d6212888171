/**
 * Several plans in one transaction as one caller (a batch: docs/writing.md#batches). In: a
 * checked-out client, the caller's tenant context statement and the work. Out: the work's value,
 * after COMMIT. Never: leaves the transaction open, commits after a failed plan, or hands the
 * connection back with session state a function left behind.
 *
 * Unlike a single request (pipelined-transaction.ts, one round trip) a batch needs a round trip
 * per statement: an operation may use a value an earlier one returned, so its statement is only
 * known once that one has answered. BEGIN, the context, each statement and COMMIT are separate
 * queries on the one connection; any error, in a statement or in the work between them, rolls the
 * whole transaction back (PostgreSQL manual, "BEGIN", "ROLLBACK"). After COMMIT or ROLLBACK the
 * session is reset as after every request (docs/security.md, "What is reset after each request").
 */
import type pg from 'pg';
import { GatewayError } from '../errors/gateway-error';
import type { Database, QueryPlan } from '../pipeline/database';
import type { Identity } from '../pipeline/identity';
import type { Result } from '../pipeline/result';
import type { CompiledQuery } from '../sql/sql';
import { sessionResetText } from './pipelined-transaction';

/** Every column as PostgreSQL's text: the statements already return JSON text, nothing is parsed. */
const rawText = { getTypeParser: () => (value: string) => value };

/**
 * `context`: the caller's tenant-context statement (contextQuery). Returns the work's value, or
 * throws its error (or the database's) after the rollback. `broken` is set when the connection
 * may hold an open transaction (a failed ROLLBACK): the caller then discards it.
 */
export async function runTransaction<T>(
  client: pg.ClientBase,
  identity: Identity,
  readOnly: boolean,
  context: CompiledQuery,
  work: (db: Database) => Promise<T>,
  state: { broken: boolean },
): Promise<T> {
  let open = false;
  let closed = false;
  try {
    await client.query(readOnly ? 'BEGIN READ ONLY' : 'BEGIN');
    open = true;
    await client.query(context.text, context.values as unknown[]);
    const inTransaction: Database = {
      async run(caller: Identity, plan: QueryPlan): Promise<Result> {
        if (closed) throw new Error('the batch transaction has ended');
        // One identity per transaction: its tenant context was set once, at BEGIN.
        if (caller.tenantId !== identity.tenantId || caller.userId !== identity.userId || caller.agentId !== identity.agentId) {
          throw new Error('a batch runs every operation as the one caller whose context its transaction set');
        }
        // What the one-round-trip path adds around a statement has no place inside a shared
        // transaction: refused, never silently dropped.
        if (plan.rollback || plan.binaryResults || plan.estimate || plan.request || plan.schema !== undefined || plan.shape.kind === 'stream') {
          throw new GatewayError('PARSE_ERROR', 'This operation cannot run inside a batch (a dry run, binary results, an estimate, an export or a schema choice).', {
            hint: 'Send it as a request of its own.',
          });
        }
        const answer = await client.query({ text: plan.query.text, values: plan.query.values as unknown[], rowMode: 'array', types: rawText });
        return { rows: answer.rows as (string | null)[][] };
      },
      // A failing row of a batch insert cannot be probed in a transaction that is already aborted.
      locateFailingRow: () => Promise.resolve(undefined),
    };
    const value = await work(inTransaction);
    closed = true;
    await client.query('COMMIT');
    open = false;
    return value;
  } finally {
    closed = true;
    if (open) {
      try {
        await client.query('ROLLBACK');
      } catch {
        state.broken = true;
      }
    }
    if (!state.broken) {
      try {
        await client.query(sessionResetText);
      } catch {
        state.broken = true;
      }
    }
  }
}
