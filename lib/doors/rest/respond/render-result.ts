/**
 * Command + Plan.shape + Result -> HTTP status and body (docs/querying.md, "Response bodies").
 * In: the command, the plan's result shape (which column holds what) and the raw result. Out: the
 * status and the envelope, with the row JSON PostgreSQL built spliced in as is.
 * Never: JSON.parse / JSON.stringify of rows, or knowledge of how compile built the statement:
 * every column position comes from `plan.shape`.
 */
import type { Command, ReadCommand } from '../../../command/command';
import { assertNever } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import type { CursorCodec } from '../../../pipeline/cursor-codec';
import type { ListShape, Plan, ResultShape } from '../../../pipeline/plan';
import type { Result } from '../../../pipeline/result';
import { renderAggregate, renderExplain } from './render-aggregate';
import type { Rendered } from './rendered';
import { renderContracts, renderRpc } from './render-rpc';
import { renderDelete, renderInsert, renderUpdate } from './render-writes';

export type { Rendered } from './rendered';

export function renderResult(command: Command, plan: Pick<Plan, 'shape'>, result: Result, cursors: CursorCodec): Rendered {
  const { shape } = plan;
  switch (command.kind) {
    case 'read': {
      // A read of another door or a replacement parse (a tree of table levels): its body as is.
      if (command.media !== 'page') return { status: 200, body: result.rows[0]?.[expectShape(shape, 'read').body] ?? '[]' };
      if (command.key) {
        const row = result.rows[0]?.[expectShape(shape, 'row').data];
        if (row === undefined || row === null) throw new GatewayError('NOT_FOUND', `No visible row of \`${command.table.name}\` has that key.`);
        return { status: 200, body: `{"data":${row}}` };
      }
      if (command.plan) return renderExplain(command, expectShape(shape, 'value'), result);
      if (command.aggregate) return renderAggregate(command, expectShape(shape, 'value'), result);
      return { status: 200, body: renderList(command, expectShape(shape, 'list'), result, cursors) };
    }
    case 'insert':
      return renderInsert(command, expectShape(shape, 'written'), result);
    case 'update':
      return renderUpdate(command, expectShape(shape, 'written'), result);
    case 'delete':
      return renderDelete(command, expectShape(shape, 'written'), result);
    case 'rpc':
      return renderRpc(command, shape.kind === 'binary-call' ? shape : expectShape(shape, 'call'), result);
    case 'contracts':
      return renderContracts(command);
    default:
      return assertNever(command, 'command');
  }
}

/** The shape a command's result must have; a replacement compile stage that gets it wrong is a bug (500), never a misread body. */
function expectShape<K extends ResultShape['kind']>(shape: ResultShape | undefined, kind: K): Extract<ResultShape, { kind: K }> {
  if (shape?.kind !== kind) throw new Error(`the plan's result shape is ${shape?.kind ?? 'missing'}, expected ${kind}`);
  return shape as Extract<ResultShape, { kind: K }>;
}

function renderList(command: ReadCommand, at: ListShape, result: Result, cursors: CursorCodec): string {
  const row = result.rows[0] ?? [];
  // Child route: the statement also says whether the parent row is visible (RLS) at all.
  if (command.parent && at.parentVisible !== null && row[at.parentVisible] !== 'true') {
    throw new GatewayError('NOT_FOUND', `No visible row of \`${command.parent.table.name}\` has that key.`);
  }
  const data = row[at.data] ?? '[]';
  const lastKey = row[at.lastKey] ?? null;
  const total = at.total === null ? null : (row[at.total] ?? null);
  const count = Number(row[at.count] ?? '0');
  const { limit, offset, order } = command.root;
  let body = `{"data":${data},"count":${count},"limit":${limit},"offset":${offset}`;
  if (count > 0 && count === limit && lastKey !== null && order.length > 0 && hasTieBreaker(command) && !command.noCursor) {
    const values = JSON.parse(lastKey) as (string | null)[];
    body += `,"next_cursor":${JSON.stringify(cursors.encode(command.table, order, values))}`;
  }
  if (command.count === 'exact' && total !== null) body += `,"total":${Number(total)}`;
  return `${body}}`;
}

/** A cursor is only sound when the ordering ends in a unique key. */
function hasTieBreaker(command: ReadCommand): boolean {
  return command.distinct !== undefined || command.table.primaryKey.length > 0;
}
