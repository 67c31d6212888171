/**
 * Insert / update / delete results -> HTTP (contract §3): 201 for inserts, 200 for an update,
 * 200 with `returning` or 204 for a delete; 404 when no visible row matched the key.
 */
import type { DeleteCommand, InsertCommand, UpdateCommand } from '../command/command';
import type { Result } from '../stages/stage-types';
import type { Rendered } from './render-result';

export function renderInsert(_command: InsertCommand, _result: Result): Rendered {
  throw new Error('renderInsert is not implemented yet');
}

export function renderUpdate(_command: UpdateCommand, _result: Result): Rendered {
  throw new Error('renderUpdate is not implemented yet');
}

export function renderDelete(_command: DeleteCommand, _result: Result): Rendered {
  throw new Error('renderDelete is not implemented yet');
}
