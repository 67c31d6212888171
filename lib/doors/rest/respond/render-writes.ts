/**
 * Insert / update / delete results -> HTTP (docs/writes.md): 201 for inserts, 200 for an update,
 * 200 with `returning` or 204 for a delete; 404 when no visible row matched the key.
 * In: the command, the plan's `written` shape and the one result row (rows JSON text, count text). Out: the
 * status and the envelope with PostgreSQL's JSON spliced in as is. Never: parses the rows.
 */
import type { DeleteCommand, InsertCommand, UpdateCommand } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import type { WrittenShape } from '../../../pipeline/plan';
import type { Result } from '../../../pipeline/result';
import type { Rendered } from './rendered';

export function renderInsert(command: InsertCommand, shape: WrittenShape, result: Result): Rendered {
  const { data, count } = written(shape, result);
  // An ignored duplicate (Prefer: resolution=ignore-duplicates) writes nothing: a single-object
  // insert then answers {"data":null}, a batch lists only the rows it inserted.
  if (command.batch) return { status: 201, body: `{"data":${data ?? '[]'},"count":${count}}` };
  return { status: 201, body: `{"data":${data ?? 'null'}}` };
}

export function renderUpdate(command: UpdateCommand, shape: WrittenShape, result: Result): Rendered {
  const { data, count } = written(shape, result);
  if (count === 0 || data === null) throw notFound(command.table.name);
  return { status: 200, body: `{"data":${data}}` };
}

export function renderDelete(command: DeleteCommand, shape: WrittenShape, result: Result): Rendered {
  const { data, count } = written(shape, result);
  if (count === 0) throw notFound(command.table.name);
  if (!command.explicitReturning || data === null) return { status: 204, body: null };
  return { status: 200, body: `{"data":${data}}` };
}

function written(shape: WrittenShape, result: Result): { data: string | null; count: number } {
  const row = result.rows[0] ?? [];
  return { data: row[shape.data] ?? null, count: Number(row[shape.count] ?? '0') };
}

function notFound(table: string): GatewayError {
  return new GatewayError('NOT_FOUND', `No visible row of \`${table}\` has that key.`);
}
