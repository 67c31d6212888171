import type { ListCommand } from '../../command/command';
import type { ResolvedConfig } from '../../config/resolved-config';
import type { GatewayRequest } from '../../http/gateway-request';
import type { SchemaCache, Table } from '../../schema/schema-types';
import type { CursorCodec } from './cursor-codec';
import { notYet } from './not-yet';

/** `GET /{parent}/:id/{child}?<list params>` -> a ListCommand of the child table scoped to one parent row. */
export function parseChildren(_schema: SchemaCache, _parent: Table, _request: GatewayRequest, _config: ResolvedConfig, _cursors: CursorCodec): ListCommand {
  return notYet('GET /{table}/:id/{child}');
}
