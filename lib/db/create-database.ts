/**
 * Database: runs one plan as one caller. Checks a client out of the pool, sends the tenant
 * context and the statement in one round trip (PipelinedTransaction), and gives the client back,
 * or discards it when its connection failed (check-out.ts: a fault never crashes the process).
 * A batch that a transaction-mode pooler broke by losing a named statement switches the gateway
 * to unnamed statements and is sent once more, unnamed (lib/db/named-statements.ts).
 */
import type pg from 'pg';
import { prepareValue } from 'pg/lib/utils';
import { GatewayError } from '../errors/gateway-error';
import type { Identity } from '../pipeline/identity';
import type { Database, QueryPlan } from '../pipeline/database';
import type { Plan } from '../pipeline/plan';
import type { Result } from '../pipeline/result';
import { checkOut } from './check-out';
import { openExportCursor } from './export-cursor';
import { locateFailingRow } from './locate-failing-row';
import { isLostStatementError, type NamedStatements } from './named-statements';
import { type BatchResult, contextQuery, PipelinedTransaction } from './pipelined-transaction';
import { runTransaction } from './run-transaction';
import { searchPathOf } from './search-path';
import { distributedContextStatements } from './distributed-context';

/**
 * How long past statement_timeout a request waits for the database's answer before the connection
 * is treated as dead (docs/security.md, "When the database restarts"). A live server answers
 * within statement_timeout plus a round trip; one that is frozen or cut off never does.
 */
export const answerGraceMs = 5000;

/**
 * What `ready` found the database to be: `distributed` once it is a Citus coordinator (docs/citus.md),
 * when every transaction also carries its context by SET LOCAL (distributed-context.ts).
 */
export interface Topology {
  distributed: boolean;
}

export function createDatabase(
  pool: pg.Pool,
  options: { statementTimeoutMs: number; exportStatementTimeoutMs?: number; namedStatements: NamedStatements; schemas: readonly string[]; extraSearchPath: readonly string[]; maxResponseBytes?: number; topology?: Topology },
): Database {
  const { statementTimeoutMs, namedStatements } = options;
  const topology: Topology = options.topology ?? { distributed: false };
  const searchPath = searchPathOf(options.schemas, options.extraSearchPath);
  // No statement_timeout (0): no bound either, since a statement may legitimately run that long.
  const deadlineMs = statementTimeoutMs > 0 ? statementTimeoutMs + answerGraceMs : 0;
  const database = {
    async run(identity: Identity, plan: QueryPlan, prepared = namedStatements.enabled): Promise<Result> {
      const lease = await checkOut(pool, deadlineMs);
      const { client } = lease;
      let failure: unknown;
      try {
        return await new Promise<BatchResult>((resolve, reject) => {
          const tx = new PipelinedTransaction(
            {
              tenantId: identity.tenantId,
              userId: identity.userId,
              agentId: identity.agentId,
              statementTimeoutMs,
              // A request that selected one exposed schema (docs/postgrest-dialect.md, "Schemas") runs with it alone first.
              searchPath: plan.schema === undefined ? searchPath : searchPathOf([plan.schema], options.extraSearchPath),
              readOnly: plan.readOnly,
              prepared,
              binaryResults: plan.binaryResults === true,
              ...(plan.binaryResults && options.maxResponseBytes !== undefined ? { maxResultBytes: options.maxResponseBytes } : {}),
              ...(plan.rollback ? { rollback: true } : {}),
              ...(plan.request ? { request: plan.request } : {}),
              ...(plan.estimate ? { estimate: plan.estimate.query } : {}),
              ...(plan.trace ? { trace: plan.trace } : {}),
              ...(topology.distributed ? { distributed: true } : {}),
            },
            plan.query,
            prepareValue,
            (err, result) => (err ? reject(err) : resolve(result)),
          );
          // A Submittable: pg calls tx.submit(connection) when the client is free.
          (client as unknown as { query(s: unknown): void }).query(tx);
        });
      } catch (err) {
        // A connection-level failure leaves the connection unusable: release() discards it.
        failure = err;
        // On Citus the batch is an explicit block, left aborted by the error: rolled back here, or
        // the connection is not reused.
        if (topology.distributed && !lease.timedOut) await client.query('ROLLBACK').catch(() => lease.discard());
        if (lease.timedOut) {
          throw new GatewayError('SERVICE_UNAVAILABLE', 'The database did not answer in time.', { headers: { 'Retry-After': '1' }, hint: 'Retry later.', cause: err });
        }
        if (!prepared || !isLostStatementError(err)) throw err;
        // Nothing of the request ran: the batch stopped at a Parse or Bind and was rolled back.
        namedStatements.disable(`a request failed with "${(err as Error).message}"`);
      } finally {
        lease.release(failure);
      }
      // Sent again, unnamed, on a connection from the pool (this one is back in it).
      return database.run(identity, plan, false);
    },

    stream(identity: Identity, plan: QueryPlan) {
      if (plan.shape.kind !== 'stream') throw new Error(`the plan's result shape is ${plan.shape.kind}, expected stream`);
      const settings = {
        tenantId: identity.tenantId,
        userId: identity.userId,
        agentId: identity.agentId,
        statementTimeoutMs: options.exportStatementTimeoutMs ?? statementTimeoutMs,
        searchPath,
        ...(plan.trace ? { trace: plan.trace } : {}),
        ...(topology.distributed ? { distributed: true } : {}),
      };
      return openExportCursor(pool, settings, plan.query, plan.shape);
    },

    async transaction(identity, { readOnly, statements }, work) {
      // The bound grows with the statements: each may take statement_timeout.
      const lease = await checkOut(pool, statementTimeoutMs > 0 ? statementTimeoutMs * (statements + 2) + answerGraceMs : 0);
      const state = { broken: false };
      let failure: unknown;
      try {
        const context = contextQuery({ tenantId: identity.tenantId, userId: identity.userId, agentId: identity.agentId, statementTimeoutMs, searchPath, readOnly });
        return await runTransaction(lease.client, identity, readOnly, context, work, state);
      } catch (err) {
        failure = err;
        if (lease.timedOut) {
          throw new GatewayError('SERVICE_UNAVAILABLE', 'The database did not answer in time.', { headers: { 'Retry-After': '1' }, hint: 'Retry later.', cause: err });
        }
        throw err;
      } finally {
        if (state.broken) lease.discard();
        else lease.release(failure);
      }
    },

    async locateFailingRow(identity, probe, isRowError) {
      // The same deadline for all probes: they follow a batch the database just answered, and
      // when it cuts a slow probe short only the row number is lost.
      const lease = await checkOut(pool, deadlineMs);
      let failed = false;
      try {
        const settings = { tenantId: identity.tenantId, userId: identity.userId, agentId: identity.agentId, statementTimeoutMs, searchPath, readOnly: false };
        const context = contextQuery(settings);
        // On Citus the context again by SET LOCAL, in the probe's transaction (distributed-context.ts).
        const distributed = topology.distributed ? distributedContextStatements(settings).join('; ') : undefined;
        return await locateFailingRow(lease.client, context, probe, isRowError, distributed);
      } catch {
        // Probing is best effort; a connection that failed mid-transaction is not reused.
        failed = true;
        return undefined;
      } finally {
        if (failed) lease.discard();
        else lease.release();
      }
    },
  } satisfies Database;
  return database;
}
