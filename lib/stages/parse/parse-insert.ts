import type { InsertCommand } from '../../command/command';
import type { ResolvedConfig } from '../../config/resolved-config';
import type { GatewayRequest } from '../../http/gateway-request';
import type { Table } from '../../schema/schema-types';
import { notYet } from './not-yet';

/** `POST /{table}` -> InsertCommand. */
export function parseInsert(_table: Table, _request: GatewayRequest, _config: ResolvedConfig): InsertCommand {
  return notYet('POST /{table}');
}
