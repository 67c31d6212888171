/**
 * execute: Plan -> Result.
 * In: compiled SQL and the caller's identity. Out: the raw text rows of the statement.
 * Never: runs SQL outside the caller's transaction, or without the tenant context set first.
 *
 * A batch that PostgreSQL rejects because of one row's data is probed (rolled back, as the same
 * caller) to name that row in `details.row`, as parse does for errors it finds before SQL.
 */
import { toGatewayError } from '../../db/to-gateway-error';
import { GatewayError } from '../../errors/gateway-error';
import type { ExecuteContext, Result, Stages } from '../stage-types';

export function createExecuteStage(): Stages['execute'] {
  return async function execute(ctx: ExecuteContext): Promise<Result> {
    try {
      return await ctx.db.run(ctx.identity, ctx.plan);
    } catch (err) {
      const mapped = toGatewayError(err);
      const probe = ctx.plan.rowProbe;
      if (mapped && probe && isRowError(err)) {
        const failing = await ctx.db.locateFailingRow(ctx.identity, probe, isRowError);
        if (failing) throw withRow(toGatewayError(failing.error) ?? mapped, failing.index);
      }
      throw mapped ?? err;
    }
  };
}

/**
 * SQLSTATEs a single row's data can cause: data exceptions (22, a bad literal or out-of-range
 * value), integrity violations (23), the same upsert key twice (21000) and RLS WITH CHECK (42501).
 */
export function isRowError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (/^2[23]/.test(code) || code === '21000' || code === '42501');
}

function withRow(error: GatewayError, row: number): GatewayError {
  const details = typeof error.details === 'object' && error.details !== null ? error.details : {};
  return new GatewayError(error.code, `Row ${row} of the batch: ${error.message}`, {
    details: { ...details, row },
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    headers: { ...error.headers },
    cause: error.cause,
  });
}
