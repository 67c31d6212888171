import type { UpdateCommand } from '../../command/command';
import type { ResolvedConfig } from '../../config/resolved-config';
import type { GatewayRequest } from '../../http/gateway-request';
import type { Table } from '../../schema/schema-types';
import { notYet } from './not-yet';

/** `PATCH /{table}/:id` -> UpdateCommand. */
export function parseUpdate(_table: Table, _request: GatewayRequest, _config: ResolvedConfig): UpdateCommand {
  return notYet('PATCH /{table}/:id');
}
