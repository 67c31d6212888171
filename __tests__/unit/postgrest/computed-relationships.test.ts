/**
 * Computed relationships of the PostgREST dialect (docs/postgrest-dialect.md, "Computed
 * relationships"), stage by stage without a database: parse finds them by the function's name
 * (over the foreign keys to a same-named table), compile reads the embedded level from the
 * function called with the parent row, the policy wants the function named in the parent's
 * `read_columns`, and the function allow-list governs it.
 */
import type { Command, ReadCommand, ReadNode } from '../../../lib/command/command';
import { readFunctions } from '../../../lib/command/read-functions';
import { GatewayError } from '../../../lib/errors/gateway-error';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import type { ParseContext } from '../../../lib/pipeline/stage-types';
import { buildSchemaCache } from '../../../lib/schema/build-schema-cache';
import type { RawColumn, RawRelation, RawSchema } from '../../../lib/schema/introspect';
import type { Table } from '../../../lib/schema/schema-types';
import { createAllowListStage } from '../../../lib/stages/allow-list/create-allow-list-stage';
import { createCompileStage } from '../../../lib/stages/compile/create-compile-stage';
import { enforceReadPolicy } from '../../../lib/stages/policy/enforce-read-policy';
import type { ColumnSet } from '../../../lib/stages/policy/access-policy';
import { createPostgrestParseStage } from '../../../lib/doors/postgrest/parse/create-postgrest-parse-stage';
import { testConfig } from '../auth/config-fixture';
import { thrown } from '../support/thrown';

const relation = (oid: number, name: string): RawRelation => ({ oid, schema: 'app', name, kind: 'r', rlsEnabled: true, rlsForced: true, rowTypeOid: 7000 + oid });
const column = (relationOid: number, position: number, name: string): RawColumn => ({
  relationOid, position, name, type: 'integer', typeOid: 23, category: 'N', elementType: null, notNull: position === 1, hasDefault: false,
  identity: '', generated: '', compareType: 'integer', compareElementType: null, compareHasArray: true, compareUsable: true,
});
const fn = (oid: number, name: string, argOid: number, returnOid: number, returnsSet: boolean, rows = 1000): RawSchema['functions'][number] => ({
  oid, schema: 'app', name, identityArgs: '', argNames: null, argModes: null, argTypes: ['x'], argTypeOids: [7000 + argOid], argTypeKinds: ['Cc'],
  defaults: 0, variadic: false, returnType: 'x', returnTypeOid: 7000 + returnOid, returnTyptype: 'c', returnAttributes: [['id', 23, 'integer']],
  returnsSet, rows, volatility: 's', executable: true,
});
// app.customers (1) <- app.orders (2).customer_id; orders_of: customers -> many orders; customers
// (named like the table): orders -> one customer, overriding orders' foreign key to customers.
const schema = buildSchemaCache(
  {
    relations: [relation(1, 'customers'), relation(2, 'orders')],
    columns: [column(1, 1, 'id'), column(2, 1, 'id'), column(2, 2, 'customer_id')],
    constraints: [
      { relationOid: 1, name: 'customers_pkey', type: 'p', columns: ['id'], referencedRelationOid: null, referencedColumns: [] },
      { relationOid: 2, name: 'orders_pkey', type: 'p', columns: ['id'], referencedRelationOid: null, referencedColumns: [] },
      { relationOid: 2, name: 'orders_customer_fkey', type: 'f', columns: ['customer_id'], referencedRelationOid: 1, referencedColumns: ['id'] },
    ],
    functions: [fn(500, 'orders_of', 1, 2, true), fn(501, 'customers', 2, 1, true, 1)],
  },
  ['app'],
);
const config = testConfig({ schemas: ['app'] });

function parse(table: string, query: string): ReadCommand {
  const request: GatewayRequest = { id: 'r', method: 'GET', segments: [table], rawSegments: [table], query: [...new URLSearchParams(query)].map(([k, v]) => [k, v] as const), headers: {}, body: undefined, loopback: true };
  return createPostgrestParseStage()({ request, config, schema, identity: {}, db: {} } as unknown as ParseContext) as ReadCommand;
}
const sqlOf = (command: Command): string => (createCompileStage()({ command, config } as never) as { query: { text: string } }).query.text;
const embedOf = (node: ReadNode) => node.items.flatMap((i) => (i.kind === 'embed' ? [i.embed] : []))[0]!;

describe('parse', () => {
  it('embeds a computed relationship by the function\'s name, to-many for SETOF', () => {
    const e = embedOf(parse('customers', 'select=id,orders_of(id)').root);
    expect(e.link.kind).toBe('computed');
    expect(e.cardinality).toBe('many');
    expect(e.node.table.name).toBe('orders');
  });

  it('a function named like the related table overrides its foreign keys; SETOF ROWS 1 is to-one', () => {
    const e = embedOf(parse('orders', 'select=id,customers(id)').root);
    expect(e.link).toMatchObject({ kind: 'computed', relation: { name: 'customers' } });
    expect(e.cardinality).toBe('one');
    // The foreign key is still found by its column's name.
    expect(embedOf(parse('orders', 'select=id,customer_id(id)').root).link.kind).toBe('fk');
  });
});

describe('compile', () => {
  it('reads the embedded level from the function called with the parent row, cast to its row type, with no join condition', () => {
    const text = sqlOf(parse('customers', 'select=id,orders_of(id)&orders_of.id=gt.3'));
    // The whole parent row is `"_n0".*`: a bare `"_n0"` would be a column of that name first.
    expect(text).toMatch(/FROM "app"\."orders_of"\(\("_n0"\.\*\)::"app"\."customers"\) AS "(_n\d+)".* WHERE "\1"\."id" > \$\d+::integer\) AS/);
    expect(text).not.toContain('"customer_id" =');
  });
});

describe('policy', () => {
  const permit = (read: Record<string, ColumnSet>) => (table: Table) => ({ read: read[table.name] ?? { kind: 'all' as const }, rows: [] });
  const only = (...names: string[]): ColumnSet => ({ kind: 'only', names: new Set(names) });
  const root = parse('customers', 'select=id,orders_of(id)').root;

  it('wants the function named in the parent\'s read_columns list', () => {
    expect(thrown(() => enforceReadPolicy(permit({}), root), GatewayError).code).toBe('FORBIDDEN');
    expect(thrown(() => enforceReadPolicy(permit({ customers: only('id') }), root), GatewayError).code).toBe('FORBIDDEN');
    expect(thrown(() => enforceReadPolicy(permit({ customers: { kind: 'except', names: new Set() } }), root), GatewayError).code).toBe('FORBIDDEN');
    expect(embedOf(enforceReadPolicy(permit({ customers: only('id', 'orders_of') }), root)).link.kind).toBe('computed');
  });

  it('also when the embed is named only by a condition', () => {
    const byCondition = parse('customers', 'select=id,orders_of()&orders_of=not.is.null').root;
    expect(thrown(() => enforceReadPolicy(permit({ customers: only('id') }), byCondition), GatewayError).code).toBe('FORBIDDEN');
  });
});

describe('function allow-list', () => {
  const command = parse('orders', 'select=id,customers(id,orders_of(id))');

  it('lists the functions of every computed relationship of the tree', () => {
    expect(readFunctions(command.root).map((f) => [f.fn.name, f.as])).toEqual([['customers', 'computed relationship'], ['orders_of', 'computed relationship']]);
  });

  it('refuses a read whose computed relationship\'s function is not on it, before any SQL', () => {
    const allowList = (names: string[]) => createAllowListStage({ functions: { allows: (f) => names.includes(f.name) } });
    expect(thrown(() => allowList(['customers'])({ command } as never), GatewayError).code).toBe('RPC_NOT_ALLOWED');
    expect(allowList(['customers', 'orders_of'])({ command } as never)).toBe(command);
  });
});
