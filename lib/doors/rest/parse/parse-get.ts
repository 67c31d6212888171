import type { GetCommand } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Table } from '../../../schema/schema-types';
import { parseExpand } from './parse-expand';
import { parseKey } from './parse-key';
import { parseSelect } from './parse-list';
import { columnItems } from '../../../command/read-items';
import { clip } from '../../shared/resolve-names';
import { none, unpaged } from './unpaged';

const parameters = ['select', 'expand'] as const;

/** `GET /{table}/:id?select=&expand=` -> a read that addresses one row by its key (GetCommand). */
export function parseGet(table: Table, request: GatewayRequest, tenantColumn?: string): GetCommand {
  const given = new Map<string, string>();
  for (const [key, value] of request.query) {
    if (!(parameters as readonly string[]).includes(key)) {
      throw new GatewayError('PARSE_ERROR', `\`${clip(key)}\` is not a parameter of a single-row read.`, { hint: 'A single-row read accepts select and expand.' });
    }
    if (given.has(key)) throw new GatewayError('PARSE_ERROR', `The \`${key}\` parameter is given more than once.`);
    given.set(key, value);
  }
  const selectText = given.get('select');
  const select = parseSelect(table, selectText);
  // The page fields are their defaults: the key addresses the row (the allow-list pattern names none of them).
  const explicitSelect = selectText !== undefined;
  const items = columnItems(select, explicitSelect, parseExpand(table, given.get('expand'), select));
  return Object.freeze({
    kind: 'read',
    table,
    root: Object.freeze({ table, items, explicitSelect, where: none, order: none, limit: 1, offset: 0 }),
    schema: table.schema,
    ...unpaged,
    key: parseKey(table, request.rawSegments[1] ?? '', tenantColumn),
  });
}
