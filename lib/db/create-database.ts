/**
 * Database: runs one plan as one caller. Checks a client out of the pool, sends the tenant
 * context and the statement in one round trip (PipelinedTransaction), and gives the client back.
 * A batch that a transaction-mode pooler broke by losing a named statement switches the gateway
 * to unnamed statements and is sent once more, unnamed (lib/db/named-statements.ts).
 */
import type pg from 'pg';
import { prepareValue } from 'pg/lib/utils';
import type { Identity } from '../stages/auth/identity';
import type { Database, QueryPlan } from '../stages/execute/database';
import type { Plan, Result } from '../stages/stage-types';
import { locateFailingRow } from './locate-failing-row';
import { isLostStatementError, type NamedStatements } from './named-statements';
import { type BatchResult, contextQuery, PipelinedTransaction } from './pipelined-transaction';

export function createDatabase(pool: pg.Pool, options: { statementTimeoutMs: number; namedStatements: NamedStatements }): Database {
  const { statementTimeoutMs, namedStatements } = options;
  const database = {
    async run(identity: Identity, plan: QueryPlan, prepared = namedStatements.enabled): Promise<Result> {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        return await new Promise<BatchResult>((resolve, reject) => {
          const tx = new PipelinedTransaction(
            {
              tenantId: identity.tenantId,
              userId: identity.userId,
              agentId: identity.agentId,
              statementTimeoutMs,
              readOnly: plan.readOnly,
              prepared,
              binaryResults: plan.binaryResults === true,
            },
            plan.query,
            prepareValue,
            (err, result) => (err ? reject(err) : resolve(result)),
          );
          // A Submittable: pg calls tx.submit(connection) when the client is free.
          (client as unknown as { query(s: unknown): void }).query(tx);
        });
      } catch (err) {
        // A protocol-level failure (no SQLSTATE) may leave the connection unusable: discard it.
        if (!(err && typeof (err as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((err as { code: string }).code))) broken = err as Error;
        if (!prepared || !isLostStatementError(err)) throw err;
        // Nothing of the request ran: the batch stopped at a Parse or Bind and was rolled back.
        namedStatements.disable(`a request failed with "${(err as Error).message}"`);
      } finally {
        client.release(broken);
      }
      // Sent again, unnamed, on a connection from the pool (this one is back in it).
      return database.run(identity, plan, false);
    },

    async locateFailingRow(identity, probe, isRowError) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        const context = contextQuery({ tenantId: identity.tenantId, userId: identity.userId, agentId: identity.agentId, statementTimeoutMs, readOnly: false });
        return await locateFailingRow(client, context, probe, isRowError);
      } catch (err) {
        // Probing is best effort; a connection that failed mid-transaction is not reused.
        broken = err as Error;
        return undefined;
      } finally {
        client.release(broken);
      }
    },
  } satisfies Database;
  return database;
}
