/**
 * combineUpdates (lib/command/combine-updates.ts), without a database: the single updates of a
 * bulk PATCH become one UpdateCommand with `rows` only when they are all keyed updates of the same
 * table with the same returning and row conditions; anything else stays one statement per row.
 */
import type { Command, UpdateCommand } from '../../../lib/command/command';
import { combineUpdates } from '../../../lib/command/combine-updates';
import { parseUpdate } from '../../../lib/doors/rest/parse/parse-update';
import { testConfig } from '../auth/config-fixture';
import { makeTable } from '../support/schema-fixture';
import { items, writeRequest } from '../writes/write-fixture';

const config = testConfig({});
const update = (id: string, body: object, query?: string): UpdateCommand => parseUpdate(items, writeRequest('PATCH', JSON.stringify(body), { id, ...(query ? { query } : {}) }), config);
const col = (name: string) => items.columnsByName.get(name)!;

it('combines keyed updates of one table: every row keeps its key, columns and body; columns is their union', () => {
  const combined = combineUpdates([update('1', { qty: 2 }), update('2', { name: 'b', qty: 3 })])!;
  expect(combined.kind).toBe('update');
  expect(combined.rows!.map((r) => [r.key.map((k) => k.value), r.columns.map((c) => c.name), r.body])).toEqual([
    [['1'], ['qty'], '{"qty":2}'],
    [['2'], ['name', 'qty'], '{"name":"b","qty":3}'],
  ]);
  expect(combined.columns).toEqual([col('qty'), col('name')]);
  expect(combined.key).toEqual([]);
});

it('does not combine other tables, other returning, other row conditions, a where update, an answered one, or another kind', () => {
  const one = update('1', { qty: 2 });
  const other = makeTable('other', [['id', 'bigint'], ['qty', 'integer']], ['id'], 'app');
  const condition = { kind: 'compare', field: { column: col('tenant_id'), path: [] }, op: 'eq', value: 't', negate: false } as const;
  expect(combineUpdates([one, { ...one, table: other }])).toBeUndefined();
  expect(combineUpdates([one, update('2', { qty: 1 }, 'returning=id')])).toBeUndefined();
  expect(combineUpdates([one, { ...update('2', { qty: 1 }), rowFilters: [condition] }])).toBeUndefined();
  expect(combineUpdates([{ ...one, rowFilters: [condition] }, { ...update('2', { qty: 1 }), rowFilters: [{ ...condition }] }])).toBeDefined();
  expect(combineUpdates([one, { ...update('2', { qty: 1 }), key: [], where: [condition] }])).toBeUndefined();
  expect(combineUpdates([one, { ...update('2', { qty: 1 }), answer: {} as never }])).toBeUndefined();
  expect(combineUpdates([one, { kind: 'contracts', functions: [] } as Command])).toBeUndefined();
  expect(combineUpdates([])).toBeUndefined();
});
