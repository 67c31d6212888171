/**
 * Database: runs one plan as one caller. Checks a client out of the pool, sends the tenant
 * context and the statement in one round trip (PipelinedTransaction), and gives the client back.
 */
import type pg from 'pg';
import { prepareValue } from 'pg/lib/utils';
import type { Identity } from '../stages/auth/identity';
import type { Database, QueryPlan } from '../stages/execute/database';
import type { Plan, Result } from '../stages/stage-types';
import { locateFailingRow } from './locate-failing-row';
import { type BatchResult, contextQuery, PipelinedTransaction } from './pipelined-transaction';
import { searchPathOf } from './search-path';

export function createDatabase(
  pool: pg.Pool,
  options: { statementTimeoutMs: number; preparedStatements: boolean; schemas: readonly string[]; extraSearchPath: readonly string[] },
): Database {
  const { statementTimeoutMs, preparedStatements } = options;
  const searchPath = searchPathOf(options.schemas, options.extraSearchPath);
  return {
    async run(identity: Identity, plan: QueryPlan): Promise<Result> {
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
              searchPath,
              readOnly: plan.readOnly,
              prepared: preparedStatements,
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
        throw err;
      } finally {
        client.release(broken);
      }
    },

    async locateFailingRow(identity, probe, isRowError) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        const context = contextQuery({ tenantId: identity.tenantId, userId: identity.userId, agentId: identity.agentId, statementTimeoutMs, searchPath, readOnly: false });
        return await locateFailingRow(client, context, probe, isRowError);
      } catch (err) {
        // Probing is best effort; a connection that failed mid-transaction is not reused.
        broken = err as Error;
        return undefined;
      } finally {
        client.release(broken);
      }
    },
  };
}
