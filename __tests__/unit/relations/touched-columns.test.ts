/**
 * touchedColumns(command): the tables and columns a policy must check. A table or column that the
 * compiled SQL reads but this map leaves out would let a policy pass a command it should refuse.
 */
import { randomBytes } from 'node:crypto';
import type { Column, Table } from '../../../lib/schema/schema-types';
import type { Command } from '../../../lib/command/command';
import { touchedColumns } from '../../../lib/command/touched-columns';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseAggregate } from '../../../lib/doors/rest/parse/parse-aggregate';
import { parseChildren } from '../../../lib/doors/rest/parse/parse-children';
import { parseExplain } from '../../../lib/doors/rest/parse/parse-explain';
import { parseGet } from '../../../lib/doors/rest/parse/parse-get';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { orderItems, orders, schema, users } from './relations-fixture';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const params = (query: string) => [...new URLSearchParams(query)];
const request = (path: string, query = ''): GatewayRequest =>
  ({ method: 'GET', segments: path.split('/'), rawSegments: path.split('/'), query: params(query) }) as unknown as GatewayRequest;

/** The map as plain `{ table: [columns...] }`, columns sorted, for readable expectations. */
function names(command: Command): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [table, columns] of touchedColumns(command)) out[table.name] = [...columns].map((c: Column) => c.name).sort();
  return out;
}

describe('touchedColumns', () => {
  it('lists the selected, filtered, sorted and searched columns of a list', () => {
    const command = parseList(orders, params('select=status&total=gt.5&sort=-placed_at&search=x&search_columns=status'), config, cursors);
    expect(names(command)).toEqual({ orders: ['id', 'placed_at', 'status', 'total'] });
  });

  it('adds every expanded table with its columns and both sides of the join', () => {
    const command = parseList(orders, params('select=id&expand=user,nested:order_items'), config, cursors);
    expect(names(command)).toEqual({
      orders: ['id', 'user_id'],
      users: ['email', 'id', 'name'],
      order_items: ['id', 'order_id', 'price'],
    });
    const map = touchedColumns(command);
    expect([...map.keys()].every((t: Table) => [orders, users, orderItems].includes(t))).toBe(true);
  });

  it('adds the parent table and key of a child route', () => {
    const command = parseChildren(schema, users, request('users/1/orders', 'select=id'), config, cursors);
    expect(names(command)).toEqual({ orders: ['id', 'user_id'], users: ['id'] });
  });

  it('covers get (key and expand), aggregate (column, filters) and explain (its list)', () => {
    expect(names(parseGet(orders, request('orders/1', 'select=status&expand=user')))).toEqual({ orders: ['id', 'status', 'user_id'], users: ['email', 'id', 'name'] });
    expect(names(parseAggregate(orders, [['fn', 'sum'], ['column', 'total'], ['status', 'paid']]))).toEqual({ orders: ['status', 'total'] });
    expect(names(parseAggregate(orders, [['fn', 'count']]))).toEqual({ orders: [] });
    expect(names(parseExplain(orders, params('select=id&expand=user'), config, cursors))).toEqual({ orders: ['id', 'user_id'], users: ['email', 'id', 'name'] });
  });
});
