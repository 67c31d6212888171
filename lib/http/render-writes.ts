/**
 * Insert / update / delete results -> HTTP (contract §3): 201 for inserts, 200 for an update,
 * 200 with `returning` or 204 for a delete; 404 when no visible row matched the key.
 * In: the command and the one result row of `selectWritten` (rows JSON text, count text). Out: the
 * status and the envelope with PostgreSQL's JSON spliced in as is. Never: parses the rows.
 */
import type { DeleteCommand, InsertCommand, UpdateCommand } from '../command/command';
import { GatewayError } from '../errors/gateway-error';
import type { Result } from '../stages/stage-types';
import type { Rendered } from './render-result';

export function renderInsert(command: InsertCommand, result: Result): Rendered {
  const { data, count } = written(result);
  // An ignored duplicate (Prefer: resolution=ignore-duplicates) writes nothing: a single-object
  // insert then answers {"data":null}, a batch lists only the rows it inserted.
  if (command.batch) return { status: 201, body: `{"data":${data ?? '[]'},"count":${count}}` };
  return { status: 201, body: `{"data":${data ?? 'null'}}` };
}

export function renderUpdate(command: UpdateCommand, result: Result): Rendered {
  const { data, count } = written(result);
  if (count === 0 || data === null) throw notFound(command.table.name);
  return { status: 200, body: `{"data":${data}}` };
}

export function renderDelete(command: DeleteCommand, result: Result): Rendered {
  const { data, count } = written(result);
  if (count === 0) throw notFound(command.table.name);
  if (!command.explicitReturning || data === null) return { status: 204, body: null };
  return { status: 200, body: `{"data":${data}}` };
}

function written(result: Result): { data: string | null; count: number } {
  const [data = null, count = '0'] = result.rows[0] ?? [];
  return { data, count: Number(count ?? '0') };
}

function notFound(table: string): GatewayError {
  return new GatewayError('NOT_FOUND', `No visible row of \`${table}\` has that key.`);
}
