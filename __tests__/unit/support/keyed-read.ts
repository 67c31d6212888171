import type { GetCommand, KeyValue } from '../../../lib/command/command';
import { columnItems } from '../../../lib/command/read-items';
import type { Column, Table } from '../../../lib/schema/schema-types';
import { unpaged } from '../../../lib/doors/rest/parse/unpaged';

/** A read of one row by key selecting `columns` (what `GET /{table}/:id?select=` parses into), for compile tests. */
export function keyed(table: Table, columns: readonly Column[], key: readonly KeyValue[]): GetCommand {
  return {
    kind: 'read',
    table,
    root: { table, items: columnItems(columns, true, []), explicitSelect: true, where: [], order: [], limit: 1, offset: 0 },
    schema: table.schema,
    ...unpaged,
    key,
  };
}
