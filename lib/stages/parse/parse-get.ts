import type { GetCommand } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { GatewayRequest } from '../../http/gateway-request';
import type { Table } from '../../schema/schema-types';
import { parseKey } from './parse-key';
import { parseSelect } from './parse-list';

/** `GET /{table}/:id?select=` -> GetCommand. */
export function parseGet(table: Table, request: GatewayRequest): GetCommand {
  let selectText: string | undefined;
  for (const [key, value] of request.query) {
    if (key !== 'select') throw new GatewayError('PARSE_ERROR', `\`${key}\` is not a parameter of a single-row read.`, { hint: 'A single-row read accepts select.' });
    if (selectText !== undefined) throw new GatewayError('PARSE_ERROR', 'The `select` parameter is given more than once.');
    selectText = value;
  }
  return Object.freeze({
    kind: 'get',
    table,
    select: parseSelect(table, selectText),
    explicitSelect: selectText !== undefined,
    key: parseKey(table, request.rawSegments[1] ?? ''),
    expand: Object.freeze([]),
  });
}
