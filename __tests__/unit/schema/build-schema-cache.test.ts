import { buildSchemaCache } from '../../../lib/schema/build-schema-cache';
import type { RawColumn, RawConstraint, RawRelation, RawSchema } from '../../../lib/schema/introspect';

function relation(oid: number, schema: string, name: string, kind = 'r'): RawRelation {
  return { oid, schema, name, kind, rlsEnabled: true, rlsForced: false };
}

function column(relationOid: number, position: number, name: string, type = 'integer', extra: Partial<RawColumn> = {}): RawColumn {
  return {
    relationOid,
    position,
    name,
    type,
    typeOid: 23,
    category: 'N',
    elementType: null,
    notNull: false,
    hasDefault: false,
    identity: '',
    generated: '',
    compareType: type,
    compareElementType: null,
    compareHasArray: true,
    compareUsable: true,
    ...extra,
  };
}

function key(relationOid: number, type: 'p' | 'u', name: string, columns: string[]): RawConstraint {
  return { relationOid, name, type, columns, referencedRelationOid: null, referencedColumns: [] };
}

function fk(relationOid: number, name: string, columns: string[], referencedRelationOid: number, referencedColumns: string[]): RawConstraint {
  return { relationOid, name, type: 'f', columns, referencedRelationOid, referencedColumns };
}

// Oids: 10 app.orders, 11 app.order_lines, 12 app.customers, 20 public.customers (shadowed),
// 21 public.notes, 99 audit.users (outside the configured schemas).
const raw: RawSchema = {
  relations: [
    relation(21, 'public', 'notes'),
    relation(20, 'public', 'customers'),
    relation(11, 'app', 'order_lines'),
    relation(10, 'app', 'orders'),
    relation(12, 'app', 'customers', 'v'),
    relation(99, 'audit', 'users'),
  ],
  columns: [
    // Deliberately out of position order: the cache must sort by attnum.
    column(10, 2, 'customer_id'),
    column(10, 1, 'id', 'bigint', { notNull: true, identity: 'a' }),
    column(10, 3, 'tags', 'text[]', { category: 'A', elementType: 'text' }),
    column(10, 4, 'total_cents', 'bigint', { generated: 's', hasDefault: true }),
    column(11, 1, 'line_no', 'integer', { notNull: true }),
    column(11, 2, 'order_id', 'bigint', { notNull: true }),
    column(11, 3, 'sku', 'text', { category: 'S' }),
    column(12, 1, 'id'),
    column(20, 1, 'id'),
    column(21, 1, 'id'),
    column(21, 2, 'author_id'),
    column(99, 1, 'id'),
  ],
  constraints: [
    // Composite key declared (order_id, line_no): key order differs from column order.
    key(11, 'p', 'order_lines_pkey', ['order_id', 'line_no']),
    key(11, 'u', 'order_lines_sku_key', ['sku']),
    key(10, 'p', 'orders_pkey', ['id']),
    fk(11, 'order_lines_order_fkey', ['order_id'], 10, ['id']),
    fk(21, 'notes_author_fkey', ['author_id'], 99, ['id']),
    fk(10, 'orders_unknown_column_fkey', ['no_such_column'], 12, ['id']),
  ],
  functions: [
    {
      oid: 500,
      schema: 'app',
      name: 'search',
      identityArgs: 'q text, VARIADIC tags text[]',
      argNames: ['q', 'result', 'tags'],
      argModes: ['i', 'o', 'v'],
      argTypes: ['text', 'integer', 'text[]'],
      argTypeOids: [25, 23, 1009],
      argTypeKinds: ['Sb', 'Nb', 'Ab'],
      defaults: 1,
      variadic: true,
      returnType: 'integer',
      returnTypeOid: 23,
      returnTyptype: 'b',
      returnAttributes: [],
      returnsSet: true,
      volatility: 's',
      executable: true,
    },
    {
      oid: 501,
      schema: 'audit',
      name: 'hidden',
      identityArgs: '',
      argNames: null,
      argModes: null,
      argTypes: [],
      argTypeOids: [],
      argTypeKinds: [],
      defaults: 0,
      variadic: false,
      returnType: 'void',
      returnTypeOid: 2278,
      returnTyptype: 'p',
      returnAttributes: [],
      returnsSet: false,
      volatility: 'v',
      executable: true,
    },
    ...uncallable(),
  ],
};

/** A callable `app` function returning integer, with `over` applied. */
function rawFn(over: Partial<RawSchema['functions'][number]>): RawSchema['functions'][number] {
  return { oid: 600, schema: 'app', name: 'f', identityArgs: '', argNames: null, argModes: null, argTypes: [], argTypeOids: [], argTypeKinds: [], defaults: 0, variadic: false, returnType: 'integer', returnTypeOid: 23, returnTyptype: 'b', returnAttributes: [], returnsSet: false, volatility: 'v', executable: true, ...over };
}

function uncallable(): RawSchema['functions'][number][] {
  return [
    rawFn({ oid: 601, name: 'first_of', argTypes: ['anyarray'], argTypeOids: [2277], argTypeKinds: ['Pp'], returnType: 'anyelement', returnTypeOid: 2283, returnTyptype: 'p' }),
    rawFn({ oid: 602, name: 'on_insert', returnType: 'trigger', returnTypeOid: 2279, returnTyptype: 'p' }),
    rawFn({ oid: 603, name: 'raw_records', returnType: 'record', returnTypeOid: 2249, returnTyptype: 'p', returnsSet: true }),
  ];
}

const cache = buildSchemaCache(raw, ['app', 'public']);
const table = (name: string) => {
  const t = cache.tablesByName.get(name);
  if (!t) throw new Error(`missing table ${name}`);
  return t;
};

describe('buildSchemaCache', () => {
  test('keeps composite primary-key columns in key order, not column order', () => {
    const lines = table('order_lines');
    expect(lines.columns.map((c) => c.name)).toEqual(['line_no', 'order_id', 'sku']);
    expect(lines.primaryKey.map((c) => c.name)).toEqual(['order_id', 'line_no']);
    expect(lines.primaryKey[0]).toBe(lines.columnsByName.get('order_id'));
  });

  test('lists the primary key among unique keys, first and marked primary', () => {
    const keys = table('order_lines').uniqueKeys;
    expect(keys.map((k) => [k.name, k.primary])).toEqual([
      ['order_lines_pkey', true],
      ['order_lines_sku_key', false],
    ]);
    expect(keys[0]?.columns).toEqual(table('order_lines').primaryKey);
  });

  test('shares one ForeignKey object between the referencing and the referenced table', () => {
    const lines = table('order_lines');
    const orders = table('orders');
    expect(lines.foreignKeys).toHaveLength(1);
    const forward = lines.foreignKeys[0];
    expect(orders.referencedBy).toHaveLength(1);
    expect(orders.referencedBy[0]).toBe(forward);
    expect(forward?.table).toBe(lines);
    expect(forward?.referencedTable).toBe(orders);
    expect(forward?.columns[0]).toBe(lines.columnsByName.get('order_id'));
    expect(forward?.referencedColumns[0]).toBe(orders.columnsByName.get('id'));
  });

  test('resolves an unqualified name to the first configured schema that has it', () => {
    const customers = table('customers');
    expect(customers.schema).toBe('app');
    expect(customers.kind).toBe('v');
    expect(cache.tables.filter((t) => t.name === 'customers').map((t) => t.schema)).toEqual(['app', 'public']);
    expect(table('notes').schema).toBe('public');
  });

  test('drops tables, foreign keys and functions outside the configured schemas', () => {
    expect(cache.tablesByName.has('users')).toBe(false);
    expect(cache.tables.some((t) => t.schema === 'audit')).toBe(false);
    expect(table('notes').foreignKeys).toEqual([]);
    expect(cache.functions.map((f) => f.name)).toEqual(['search']);
  });

  test('skips a constraint that names an unknown column instead of throwing', () => {
    expect(table('orders').foreignKeys).toEqual([]);
    expect(table('customers').referencedBy).toEqual([]);
  });

  test('maps column flags', () => {
    const orders = table('orders');
    expect(orders.columnsByName.get('id')).toMatchObject({ nullable: false, identity: 'a', hasDefault: true, generated: false });
    expect(orders.columnsByName.get('total_cents')).toMatchObject({ generated: true, hasDefault: true });
    expect(orders.columnsByName.get('tags')).toMatchObject({ category: 'A', elementType: 'text', nullable: true });
    expect(orders.rlsEnabled).toBe(true);
    expect(orders.rlsForced).toBe(false);
  });

  test('derives the comparison types: the list type of a non-array, none for an array or a type the role may not name', () => {
    const cache = buildSchemaCache(
      {
        relations: [relation(30, 'app', 'kinds')],
        columns: [
          column(30, 1, 'pair', 'app.pair', { compareType: 'app.pair' }),
          column(30, 2, 'moods', 'app.mood[]', { category: 'A', compareType: 'app.mood[]', compareElementType: 'app.mood', compareHasArray: false }),
          column(30, 3, 'vec', 'int2vector', { category: 'A', compareType: 'int2vector', compareHasArray: false }),
          column(30, 4, 'hue', 'hidden.hue', { compareType: 'hidden.hue', compareUsable: false }),
        ],
        constraints: [],
        functions: [],
      },
      ['app'],
    );
    const columns = cache.tablesByName.get('kinds')!.columnsByName;
    const compare = (name: string) => {
      const c = columns.get(name)!;
      return [c.compareType, c.compareElementType, c.compareListType];
    };
    expect(compare('pair')).toEqual(['app.pair', null, 'app.pair[]']);
    expect(compare('moods')).toEqual(['app.mood[]', 'app.mood', null]);
    expect(compare('vec')).toEqual(['int2vector', null, null]);
    expect(compare('hue')).toEqual([null, null, null]);
  });

  test('keeps only input arguments of a function and marks trailing defaults', () => {
    const fn = cache.functions[0];
    expect(fn?.args).toEqual([
      { name: 'q', type: 'text', typeOid: 25, category: 'S', mode: 'i', hasDefault: false, variadic: false },
      { name: 'tags', type: 'text[]', typeOid: 1009, category: 'A', mode: 'v', hasDefault: true, variadic: true },
    ]);
    expect(fn).toMatchObject({ variadic: true, returnsSet: true, volatility: 's', defaults: 1 });
  });

  test('describes the result: OUT parameters and composite types are rows, void is void', () => {
    expect(cache.functions[0]).toMatchObject({ returns: 'row', resultColumns: [{ name: 'result', type: 'integer', typeOid: 23 }] });
    const built = buildSchemaCache({ ...raw, functions: [rawFn({ name: 'latest', returnType: 'orders', returnTypeOid: 9001, returnTyptype: 'c', returnAttributes: [['id', 20, 'bigint'], ['total', 1700, 'numeric']] })] }, ['app']);
    expect(built.functions[0]).toMatchObject({ returns: 'row', resultColumns: [{ name: 'id', typeOid: 20 }, { name: 'total', typeOid: 1700 }] });
    expect(buildSchemaCache({ ...raw, functions: [rawFn({ name: 'n' })] }, ['app']).functions[0]).toMatchObject({ returns: 'scalar', resultColumns: [] });
  });

  test('leaves out functions a JSON body cannot call: polymorphic arguments, pseudo-type results', () => {
    expect(cache.functions.map((f) => f.name)).not.toEqual(expect.arrayContaining(['first_of', 'on_insert', 'raw_records']));
    expect(cache.functions.map((f) => f.name)).toEqual(['search']);
  });

  test('freezes every object of the cache, cycles included', () => {
    const lines = table('order_lines');
    const fkey = lines.foreignKeys[0];
    const mutable = [
      cache,
      cache.tables,
      cache.functions,
      cache.schemas,
      lines,
      lines.columns,
      lines.columns[0],
      lines.primaryKey,
      lines.uniqueKeys,
      lines.uniqueKeys[0],
      lines.uniqueKeys[0]?.columns,
      lines.foreignKeys,
      fkey,
      fkey?.columns,
      fkey?.referencedColumns,
      fkey?.referencedTable.referencedBy,
      cache.functions[0]?.args,
      cache.functions[0]?.args[0],
    ];
    for (const value of mutable) expect(Object.isFrozen(value)).toBe(true);
    expect(() => (cache.tablesByName as Map<string, unknown>).set('x', {})).toThrow(TypeError);
    expect(() => (lines.columnsByName as Map<string, unknown>).delete('sku')).toThrow(TypeError);
    expect(() => (cache.tablesByName as Map<string, unknown>).clear()).toThrow(TypeError);
    expect(lines.columnsByName.get('sku')?.name).toBe('sku');
  });

  test('does not share state between two builds from the same rows', () => {
    const again = buildSchemaCache(raw, ['public', 'app']);
    expect(again.tablesByName.get('customers')?.schema).toBe('public');
    expect(again.tablesByName.get('customers')).not.toBe(table('customers'));
    expect(table('customers').schema).toBe('app');
  });
});

describe('computed fields and computed relationships: the argument matched by row type OID', () => {
  // app.customers (row type 7012) and public.customers (row type 7020) have the same name: a
  // function of either is the other's neither, whatever format_type() printed for its argument
  // (a bare `customers` when its schema is on the search_path).
  const rel = (oid: number, schema: string, name: string): RawRelation => ({ ...relation(oid, schema, name), rowTypeOid: 7000 + oid });
  const fn = (oid: number, name: string, argOid: number, over: Partial<RawSchema['functions'][number]> = {}) =>
    rawFn({ oid, name, argTypes: ['customers'], argTypeOids: [argOid], argTypeKinds: ['Cc'], returnType: 'text', returnTypeOid: 25, ...over });
  const rowsOf = (oid: number) => ({ returnType: 'customers', returnTypeOid: 7000 + oid, returnTyptype: 'c', returnAttributes: [['id', 23, 'integer']] as const });
  const built = buildSchemaCache(
    {
      relations: [rel(12, 'app', 'customers'), rel(20, 'public', 'customers'), rel(10, 'app', 'orders')],
      columns: [column(12, 1, 'id'), column(20, 1, 'id'), column(10, 1, 'id')],
      constraints: [],
      functions: [
        fn(700, 'shout', 7020),
        fn(701, 'app_shout', 7012),
        fn(702, 'orders_of', 7012, { ...rowsOf(10), returnsSet: true }),
        fn(703, 'newest_order', 7012, { ...rowsOf(10), returnsSet: true, rows: 1 }),
        fn(704, 'one_order', 7020, rowsOf(10)),
      ],
    },
    ['app', 'public'],
  );
  const find = (schema: string, name: string) => built.tables.find((t) => t.schema === schema && t.name === name)!;

  test('a computed field belongs to the table whose row type its argument is, only', () => {
    expect([...(find('app', 'customers').computedFields?.keys() ?? [])]).toEqual(['app_shout']);
    expect([...(find('public', 'customers').computedFields?.keys() ?? [])]).toEqual(['shout']);
    expect(find('app', 'orders').computedFields).toBeUndefined();
  });

  test('a computed relationship: source and target by row type OID, to-one unless a set of more than one row', () => {
    const app = find('app', 'customers').computedRelations!;
    expect([...app.keys()].sort()).toEqual(['newest_order', 'orders_of']);
    expect(app.get('orders_of')).toMatchObject({ source: find('app', 'customers'), target: find('app', 'orders'), cardinality: 'many' });
    expect(app.get('newest_order')!.cardinality).toBe('one');
    const pub = find('public', 'customers').computedRelations!;
    expect([...pub.keys()]).toEqual(['one_order']);
    expect(pub.get('one_order')!.cardinality).toBe('one');
    expect(find('app', 'orders').computedRelations).toBeUndefined();
  });

  test('a cache built without row type OIDs has neither', () => {
    expect(cache.tables.every((t) => t.computedFields === undefined && t.computedRelations === undefined)).toBe(true);
  });
});
