/**
 * execute: Plan -> Result.
 * In: compiled SQL and the caller's identity. Out: the raw text rows of the statement.
 * Never: runs SQL outside the caller's transaction, or without the tenant context set first.
 *
 * A batch that PostgreSQL rejects because of one row's data is probed (rolled back, as the same
 * caller) to name that row in `details.row`, as parse does for errors it finds before SQL.
 */
import { operationOf, type Command } from '../../command/command';
import { BinaryRowsTooLargeError } from '../../db/binary-row-tap';
import { StreamListenerError } from '../../db/catch-stream-errors';
import { type ErrorContext, toGatewayError } from '../../db/to-gateway-error';
import { GatewayError } from '../../errors/gateway-error';
import { isRowError, isUnresolvedCall } from '../../errors/sqlstate-meaning';
import { responseSizeMarker, responseTooLarge } from '../../errors/response-too-large';
import { markedCount } from '../../errors/statement-markers';
import type { QueryPlan } from '../../pipeline/database';
import type { Result } from '../../pipeline/result';
import type { RowStream } from '../../pipeline/row-stream';
import type { ExecuteContext, Stages } from '../../pipeline/stage-types';
import type { ExecuteHooks } from '../../pipeline/door';
import { withEstimate } from './with-estimate';

/**
 * `hooks`: what the door this gateway serves adds (lib/pipeline/door.ts): the `request.*`
 * settings of the transaction, and its own meaning of a database error, tried first.
 */
export function createExecuteStage(hooks: ExecuteHooks = {}): Stages['execute'] {
  const { requestSettings, translateError } = hooks;
  return async function execute(ctx: ExecuteContext): Promise<Result> {
    const { plan } = ctx;
    if (plan.query === null) return NO_ROWS;
    try {
      if (plan.shape.kind === 'stream') return await openStream(ctx, { ...plan, query: plan.query });
      const result = await ctx.db.run(ctx.identity, { ...plan, query: plan.query, ...(requestSettings ? { request: requestSettings(ctx) } : {}) });
      return plan.estimate ? withEstimate(result, plan) : result;
    } catch (err) {
      const size = markedCount(err, responseSizeMarker);
      if (size !== undefined) throw responseTooLarge(ctx.config.maxResponseBytes, Number(size));
      // A value the size check did not see and the driver could not hold (catch-stream-errors.ts).
      if (err instanceof StreamListenerError && err.stringTooLong) throw responseTooLarge(ctx.config.maxResponseBytes, undefined, err);
      // Binary results over the bound, counted from the rows' headers (lib/db/binary-row-tap.ts).
      if (err instanceof StreamListenerError && err.cause instanceof BinaryRowsTooLargeError) throw responseTooLarge(ctx.config.maxResponseBytes, err.cause.bytes, err);
      const translated = translateError?.(err);
      if (translated) throw translated;
      if (ctx.command.kind === 'rpc' && isUnresolvedCall(err)) throw unresolvedCall(ctx, err);
      const context = errorContextOf(ctx.command);
      const mapped = toGatewayError(err, context);
      const probe = ctx.plan.rowProbe;
      if (mapped && probe && isRowError(err)) {
        const failing = await ctx.db.locateFailingRow(ctx.identity, probe, isRowError);
        if (failing) throw withRow(toGatewayError(failing.error, context) ?? mapped, failing.index);
      }
      throw mapped ?? err;
    }
  };
}

/**
 * An export (docs/querying.md, "Exports"): the Database opens the cursor and reads the first
 * batch (an error there is thrown here, like any other); a database error in a later batch is
 * mapped the same way before rendering sees it.
 */
async function openStream(ctx: ExecuteContext, plan: QueryPlan): Promise<Result> {
  if (!ctx.db.stream) throw new Error('the Database cannot stream an export');
  // A child route whose parent row is hidden or missing is a 404, as on the page route. Checked
  // in its own short transaction first: the cursor's first batch cannot tell "no children" from
  // "no visible parent".
  if (plan.parentCheck && ctx.command.kind === 'read' && ctx.command.parent) {
    const checked = await ctx.db.run(ctx.identity, { query: plan.parentCheck, readOnly: true, shape: { kind: 'value', value: 0 } });
    if (checked.rows[0]?.[0] !== 'true') throw new GatewayError('NOT_FOUND', `No visible row of \`${ctx.command.parent.table.name}\` has that key.`);
  }
  const stream = await ctx.db.stream(ctx.identity, plan);
  const context = errorContextOf(ctx.command);
  const mapped: RowStream = {
    next: () => stream.next().catch((err: unknown) => Promise.reject(toGatewayError(err, context) ?? err)),
    close: () => stream.close(),
  };
  return Object.freeze({ rows: NO_ROWS.rows, stream: mapped });
}

function unresolvedCall(ctx: ExecuteContext, err: unknown): GatewayError {
  const command = ctx.command as Extract<ExecuteContext['command'], { kind: 'rpc' }>;
  const name = `${command.fn.schema}.${command.fn.name}(${command.fn.identityArgs})`;
  const options = { hint: 'The function changed since discovery; the gateway is re-reading the schema, retry shortly.', details: { sqlstate: (err as { code: string }).code }, cause: err };
  return ctx.config.rpcSignatureCheck
    ? new GatewayError('RPC_SIGNATURE_MISMATCH', `The database no longer resolves the call to \`${name}\`.`, options)
    : new GatewayError('NOT_FOUND', `The function \`${name}\` is no longer available.`, options);
}

/** What the statement ran for, so the error's hint and code name only causes that are certain (docs/errors.md). */
function errorContextOf(command: Command): ErrorContext {
  switch (command.kind) {
    case 'read':
      return { kind: operationOf(command), relation: command.table };
    case 'update':
    case 'delete':
      return { kind: command.kind, relation: command.table };
    case 'insert':
      return { kind: command.kind, relation: command.table, onConflict: command.onConflict !== null };
    case 'rpc':
    case 'contracts':
      return { kind: command.kind };
  }
}

const NO_ROWS: Result = Object.freeze({ rows: Object.freeze([]) });

function withRow(error: GatewayError, row: number): GatewayError {
  const details = typeof error.details === 'object' && error.details !== null ? error.details : {};
  return new GatewayError(error.code, `Row ${row} of the batch: ${error.message}`, {
    details: { ...details, row },
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    headers: { ...error.headers },
    status: error.status,
    cause: error.cause,
  });
}
