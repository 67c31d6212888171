/**
 * Keys through views (lib/schema/infer-view-keys.ts, via buildSchemaCache): which foreign keys a
 * view inherits from the key dependency rows, without a database. The rows mirror what
 * introspect-view-keys.ts reads (the integration test postgrest-view-relationships reads real ones).
 */
import { buildSchemaCache } from '../../../lib/schema/build-schema-cache';
import type { RawColumn, RawRelation, RawSchema } from '../../../lib/schema/introspect';
import type { RawViewKeyDependency } from '../../../lib/schema/introspect-view-keys';

const relation = (oid: number, schema: string, name: string, kind = 'r'): RawRelation => ({ oid, schema, name, kind, rlsEnabled: true, rlsForced: true });
const column = (relationOid: number, position: number, name: string): RawColumn => ({
  relationOid, position, name, type: 'integer', typeOid: 23, category: 'N', elementType: null, notNull: false, hasDefault: false,
  identity: '', generated: '', compareType: 'integer', compareElementType: null, compareHasArray: true, compareUsable: true,
});

// 1 private.t1 (a, b) primary key (a, b); 2 private.t2 (id, t1_a, t1_b) FK (t1_a, t1_b) -> t1 (a, b);
// 10 api.v1 over t1; 11 api.v2 over t2 exposing t1_a twice and t1_b twice (PostgREST's i2459 case);
// 12 api.v3 over t2 exposing only t1_a (a partial key: no row); 13 api.t3, a table with FK -> t1 in private (dropped).
const fkRow = { tableOid: 2, columns: ['t1_a', 't1_b'], referencedTableOid: 1, referencedColumns: ['a', 'b'], oneToOne: false };
const deps: RawViewKeyDependency[] = [
  { viewOid: 10, constraintOid: 100, constraintName: 't1_pkey', type: 'p', columns: [['a', ['a']], ['b', ['b']]], foreignKey: null },
  { viewOid: 10, constraintOid: 200, constraintName: 't2_t1_fkey', type: 'f_ref', columns: [['a', ['a']], ['b', ['b']]], foreignKey: fkRow },
  { viewOid: 11, constraintOid: 200, constraintName: 't2_t1_fkey', type: 'f', columns: [['t1_a', ['a1', 'a2']], ['t1_b', ['b1', 'b2']]], foreignKey: fkRow },
];
const raw: RawSchema = {
  relations: [relation(1, 'private', 't1'), relation(2, 'private', 't2'), relation(10, 'api', 'v1', 'v'), relation(11, 'api', 'v2', 'v'), relation(12, 'api', 'v3', 'v')],
  columns: [
    column(1, 1, 'a'), column(1, 2, 'b'), column(2, 1, 'id'), column(2, 2, 't1_a'), column(2, 3, 't1_b'),
    column(10, 1, 'a'), column(10, 2, 'b'),
    column(11, 1, 'a1'), column(11, 2, 'a2'), column(11, 3, 'b1'), column(11, 4, 'b2'),
    column(12, 1, 't1_a'),
  ],
  constraints: [],
  functions: [],
  viewKeys: deps,
};

const cache = buildSchemaCache(raw, ['api']);
const t = (name: string) => cache.tablesByName.get(name)!;

describe('keys inferred through views', () => {
  test('a view inherits the primary key of the table columns it exposes', () => {
    expect(t('v1').inferred?.primaryKey.map((c) => c.name)).toEqual(['a', 'b']);
    expect(t('v1').primaryKey).toEqual([]);
  });

  test('a view repeating key columns gives one foreign key per choice of columns, in PostgREST order', () => {
    const fks = t('v2').inferred!.foreignKeys;
    expect(fks.map((fk) => `${fk.table.name}(${fk.columns.map((c) => c.name)}) -> ${fk.referencedTable.name}(${fk.referencedColumns.map((c) => c.name)})`)).toEqual([
      'v2(a1,b1) -> v1(a,b)',
      'v2(a1,b2) -> v1(a,b)',
      'v2(a2,b1) -> v1(a,b)',
      'v2(a2,b2) -> v1(a,b)',
    ]);
    expect(fks.every((fk) => fk.name === 't2_t1_fkey' && fk.inferred?.oneToOne === false)).toBe(true);
    // The same objects, seen from the referenced view.
    expect(t('v1').inferred!.referencedBy).toEqual(fks);
  });

  test('nothing to or from a relation outside the exposed schemas, nothing for a view without a row', () => {
    expect(cache.tables.map((x) => x.name).sort()).toEqual(['v1', 'v2', 'v3']);
    expect(t('v3').inferred).toBeUndefined();
    // The declared keys stay what the catalog says: views declare none.
    expect(t('v2').foreignKeys).toEqual([]);
  });

  test('table -> view and view -> table when the base tables are exposed too', () => {
    const both = buildSchemaCache({ ...raw, relations: raw.relations.map((r) => ({ ...r, schema: 'api' })) }, ['api']);
    const names = (x: string) => both.tablesByName.get(x)!.inferred?.foreignKeys.map((fk) => `${fk.table.name}(${fk.columns.map((c) => c.name)}) -> ${fk.referencedTable.name}`) ?? [];
    expect(names('t2')).toEqual(['t2(t1_a,t1_b) -> v1']);
    expect(names('v2').sort()).toEqual(['v2(a1,b1) -> t1', 'v2(a1,b1) -> v1', 'v2(a1,b2) -> t1', 'v2(a1,b2) -> v1', 'v2(a2,b1) -> t1', 'v2(a2,b1) -> v1', 'v2(a2,b2) -> t1', 'v2(a2,b2) -> v1']);
    // The base tables' own key is not repeated among the inferred ones.
    expect(both.tablesByName.get('t1')!.inferred?.referencedBy.some((fk) => fk.table.name === 't2')).toBe(false);
  });
});
