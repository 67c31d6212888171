/**
 * execute: Plan -> Result.
 * In: compiled SQL and the caller's identity. Out: the raw text rows of the statement.
 * Never: runs SQL outside the caller's transaction, or without the tenant context set first.
 */
import { toGatewayError } from '../../db/to-gateway-error';
import type { ExecuteContext, Result, Stages } from '../stage-types';

export function createExecuteStage(): Stages['execute'] {
  return async function execute(ctx: ExecuteContext): Promise<Result> {
    try {
      return await ctx.db.run(ctx.identity, ctx.plan);
    } catch (err) {
      throw toGatewayError(err) ?? err;
    }
  };
}
