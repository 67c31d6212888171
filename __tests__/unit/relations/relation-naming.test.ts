import { randomBytes } from 'node:crypto';
import { callerOrder, embedsOf, selectedColumns } from '../../../lib/command/read-items';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { relationNames, relationsOf } from '../../../lib/schema/relations';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { MAX_EXPANSIONS, parseExpand } from '../../../lib/doors/rest/parse/parse-expand';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import type { ForeignKey, Relation } from '../../../lib/schema/schema-types';
import type { Embed } from '../../../lib/command/command';
import { makeTable } from '../support/schema-fixture';
import { thrown } from '../support/thrown';
import { orderItems, orders, ordersUser, posts, profiles, shipments, shipmentsRecipient, shipmentsSender, users, weird } from './relations-fixture';

const error = (fn: () => unknown): GatewayError => thrown(fn, GatewayError);
const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));


/** The relation of an expansion (an embed by one foreign key). */
function relationOf(e: Embed): Relation {
  if (e.link.kind !== 'fk') throw new Error('not a foreign-key embed');
  return e.link.relation;
}

describe('relation naming (contract §3)', () => {
  it('names a forward relation by the referenced table, the FK column without _id, and the constraint', () => {
    expect(relationsOf(orders).map((r) => [r.relation.name, r.names, r.relation.direction, r.relation.cardinality])).toEqual([
      ['users', ['users', 'user', 'orders_user_id_fkey'], 'forward', 'one'],
      ['order_items', ['order_items', 'order_items!order', 'order_items_order_id_fkey'], 'reverse', 'many'],
    ]);
  });

  it('tells two FKs to one table apart: the table name is shared, the column names are not', () => {
    const forward = relationsOf(shipments);
    expect(forward.map((r) => r.relation.name)).toEqual(['sender', 'recipient']);
    expect(forward.map((r) => r.relation.foreignKey)).toEqual([shipmentsSender, shipmentsRecipient]);
    expect(relationNames(users)).toEqual(expect.arrayContaining(['orders', 'shipments', 'shipments!sender', 'shipments!recipient', 'user_profiles']));
  });

  it('treats a reverse relation whose FK columns are a unique key as one-to-one', () => {
    const reverse = relationsOf(users).find((r) => r.relation.target === profiles)!;
    expect(reverse.relation.cardinality).toBe('one');
    expect(relationsOf(users).find((r) => r.relation.target === orders)!.relation.cardinality).toBe('many');
  });
});

describe('parseExpand', () => {
  it('resolves forward relations under the name the caller used, with every target column', () => {
    const [byColumn, byTable] = parseExpand(orders, 'user,users', orders.columns);
    expect(relationOf(byColumn!)).toMatchObject({ name: 'user', direction: 'forward', target: users, cardinality: 'one', foreignKey: ordersUser });
    expect(byColumn!.node.items.map((i) => (i.kind === 'field' ? i.field.column : null))).toEqual(users.columns);
    expect(relationOf(byTable!).name).toBe('users');
  });

  it('resolves nested: reverse relations as arrays, including a one-to-one one', () => {
    expect(relationOf(parseExpand(orders, 'nested:order_items', orders.columns)[0]!)).toMatchObject({ name: 'order_items', direction: 'reverse', target: orderItems, cardinality: 'many' });
    expect(relationOf(parseExpand(users, 'user_profiles', users.columns)[0]!).cardinality).toBe('one');
    expect(relationOf(parseExpand(users, 'nested:user_profiles', users.columns)[0]!).cardinality).toBe('many');
  });

  it('returns each relation once when it is named twice', () => {
    expect(parseExpand(orders, 'user,user', orders.columns)).toHaveLength(1);
  });

  it('refuses an unknown relation with UNKNOWN_RELATION and the nearest name', () => {
    const e = error(() => parseExpand(orders, 'usr', orders.columns));
    expect(e.code).toBe('UNKNOWN_RELATION');
    expect(e.status).toBe(400);
    expect(e.hint).toBe('Did you mean `user`?');
  });

  it('refuses an ambiguous name with the candidates in the hint', () => {
    const e = error(() => parseExpand(shipments, 'users', shipments.columns));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.hint).toBe('Name one of: recipient, sender.');
    expect(e.details).toEqual({ table: 'shipments', relation: 'users', candidates: ['recipient', 'sender'] });
  });

  it('says to use nested: for a one-to-many relation, and refuses nested: on a forward one', () => {
    expect(error(() => parseExpand(users, 'orders', users.columns)).hint).toBe('Write expand=nested:orders.');
    const forward = error(() => parseExpand(orders, 'nested:user', orders.columns));
    expect(forward.code).toBe('PARSE_ERROR');
    expect(forward.hint).toBe('Write expand=user.');
  });

  it('refuses a relation named like a selected column, and accepts it when the column is not selected', () => {
    const e = error(() => parseExpand(posts, 'author', posts.columns));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.message).toContain('selected column');
    expect(relationOf(parseExpand(posts, 'author', [posts.columnsByName.get('id')!])[0]!).name).toBe('author');
  });

  it('resolves FK columns with hostile names', () => {
    expect(relationOf(parseExpand(weird, '"a""b"', weird.columns)[0]!).target).toBe(users);
  });

  it.each(['', 'user,', ',user', 'nested:', '"unterminated'])('refuses the malformed list %p with PARSE_ERROR', (text) => {
    expect(error(() => parseExpand(orders, text, orders.columns)).code).toBe('PARSE_ERROR');
  });

  it(`refuses more than ${MAX_EXPANSIONS} relations`, () => {
    const n = MAX_EXPANSIONS + 1;
    const hub = makeTable('hub', [['id', 'integer'], ...Array.from({ length: n }, (_, i) => [`u${i}_id`, 'integer'] as [string, string])], ['id']);
    (hub as unknown as { foreignKeys: ForeignKey[] }).foreignKeys.push(
      ...hub.columns.slice(1).map((c) => ({ name: `${c.name}_fkey`, table: hub, columns: [c], referencedTable: users, referencedColumns: users.primaryKey })),
    );
    const names = Array.from({ length: n }, (_, i) => `u${i}`);
    expect(parseExpand(hub, names.slice(1).join(','), [])).toHaveLength(MAX_EXPANSIONS);
    expect(error(() => parseExpand(hub, names.join(','), [])).message).toBe(`At most ${MAX_EXPANSIONS} relations can be expanded in one request.`);
  });

  it('refuses a relation name longer than 63 bytes, which PostgreSQL would truncate as a column alias', () => {
    const longName = `t${'x'.repeat(60)}`;
    const child = makeTable(longName, [['id', 'integer'], ['owner_id', 'integer']], ['id']);
    const parent = makeTable('owners', [['id', 'integer']], ['id']);
    const fk: ForeignKey = { name: 'c_fk', table: child, columns: [child.columns[1]!], referencedTable: parent, referencedColumns: parent.primaryKey };
    (child as unknown as { foreignKeys: ForeignKey[] }).foreignKeys.push(fk);
    (parent as unknown as { referencedBy: ForeignKey[] }).referencedBy.push(fk);
    const e = error(() => parseExpand(parent, `nested:${longName}!owner`, parent.columns));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.hint).toBe('Expand the relation by its constraint name.');
    expect(relationOf(parseExpand(parent, 'nested:c_fk', parent.columns)[0]!).target).toBe(child);
  });

  it('is wired into the list parameters and refused with distinct', () => {
    const command = parseList(orders, [['expand', 'user'], ['select', 'id']], config, cursors);
    expect(embedsOf(command.root).map((e) => relationOf(e).name)).toEqual(['user']);
    expect(error(() => parseList(orders, [['expand', 'user'], ['distinct', 'status']], config, cursors)).code).toBe('PARSE_ERROR');
  });
});
