/**
 * Command + Result -> HTTP status and body (docs/querying.md, "Response bodies"). The row JSON
 * comes from PostgreSQL as text and is spliced into the envelope as is: no JSON.parse /
 * JSON.stringify of rows.
 */
import type { Command, ListCommand } from '../command/command';
import { assertNever } from '../command/command';
import { GatewayError } from '../errors/gateway-error';
import type { CursorCodec } from '../stages/parse/cursor-codec';
import type { Result } from '../stages/stage-types';
import { listColumns } from '../stages/compile/compile-list';
import { renderAggregate, renderExplain } from './render-aggregate';
import { renderContracts, renderRpc } from './render-rpc';
import { renderDelete, renderInsert, renderUpdate } from './render-writes';

export interface Rendered {
  readonly status: number;
  /** JSON text, or null for a response without a body (204). */
  readonly body: string | null;
}

export function renderResult(command: Command, result: Result, cursors: CursorCodec): Rendered {
  switch (command.kind) {
    case 'list':
      return { status: 200, body: renderList(command, result, cursors) };
    case 'get': {
      const row = result.rows[0]?.[0];
      if (row === undefined || row === null) throw new GatewayError('NOT_FOUND', `No visible row of \`${command.table.name}\` has that key.`);
      return { status: 200, body: `{"data":${row}}` };
    }
    case 'aggregate':
      return renderAggregate(command, result);
    case 'explain':
      return renderExplain(command, result);
    case 'insert':
      return renderInsert(command, result);
    case 'update':
      return renderUpdate(command, result);
    case 'delete':
      return renderDelete(command, result);
    case 'rpc':
      return renderRpc(command, result);
    case 'contracts':
      return renderContracts(command);
    default:
      return assertNever(command, 'command');
  }
}

function renderList(command: ListCommand, result: Result, cursors: CursorCodec): string {
  const row = result.rows[0] ?? [];
  const at = listColumns(command);
  // Child route: the statement also says whether the parent row is visible (RLS) at all.
  if (command.parent && at.parentVisible !== null && row[at.parentVisible] !== 'true') {
    throw new GatewayError('NOT_FOUND', `No visible row of \`${command.parent.table.name}\` has that key.`);
  }
  const data = row[at.data] ?? '[]';
  const lastKey = row[at.lastKey] ?? null;
  const total = at.total === null ? null : (row[at.total] ?? null);
  const count = Number(row[at.count] ?? '0');
  let body = `{"data":${data},"count":${count},"limit":${command.limit},"offset":${command.offset}`;
  if (count > 0 && count === command.limit && lastKey !== null && command.order.length > 0 && hasTieBreaker(command) && !command.noCursor) {
    const values = JSON.parse(lastKey) as (string | null)[];
    body += `,"next_cursor":${JSON.stringify(cursors.encode(command.table, command.order, values))}`;
  }
  if (command.countExact && total !== null) body += `,"total":${Number(total)}`;
  return `${body}}`;
}

/** A cursor is only sound when the ordering ends in a unique key. */
function hasTieBreaker(command: ListCommand): boolean {
  return command.distinct !== null || command.table.primaryKey.length > 0;
}
