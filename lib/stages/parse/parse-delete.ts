import type { DeleteCommand } from '../../command/command';
import type { GatewayRequest } from '../../http/gateway-request';
import type { Table } from '../../schema/schema-types';
import { notYet } from './not-yet';

/** `DELETE /{table}/:id` -> DeleteCommand. */
export function parseDelete(_table: Table, _request: GatewayRequest): DeleteCommand {
  return notYet('DELETE /{table}/:id');
}
