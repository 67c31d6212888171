/**
 * compile for insert / update / delete: the exact SQL text and values. The body is always one
 * parameter (the caller's text), whatever the batch size; names are always quoted identifiers.
 */
import { compileSql } from '../../../lib/sql/sql';
import { compileDelete } from '../../../lib/stages/compile/compile-delete';
import { compileInsert } from '../../../lib/stages/compile/compile-insert';
import { compileUpdate } from '../../../lib/stages/compile/compile-update';
import { parseDelete } from '../../../lib/doors/rest/parse/parse-delete';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import { parseUpdate } from '../../../lib/doors/rest/parse/parse-update';
import { testConfig } from '../auth/config-fixture';
import { weird } from '../support/schema-fixture';
import { items, writeRequest } from './write-fixture';

const config = testConfig();
const insertSql = (body: string, options: Parameters<typeof writeRequest>[2] = {}) => compileSql(compileInsert(parseInsert(items, writeRequest('POST', body, options), config)));
const T = '"app"."items"';

describe('compileInsert', () => {
  it('inserts one object through jsonb_populate_record, the body as the only parameter', () => {
    const body = '{"sku":"a","big":9223372036854775807}';
    const q = insertSql(body, { query: 'returning=sku,big' });
    expect(q.text).toBe(
      `WITH _w AS (INSERT INTO ${T} AS _t ("sku", "big") SELECT _r."sku", _r."big" FROM jsonb_populate_record(NULL::${T}, $1::jsonb) AS _r RETURNING _t."sku", _t."big") ` +
        'SELECT (json_agg(_p.*) -> 0)::text, count(*)::text FROM _w CROSS JOIN LATERAL (SELECT _w."sku", _w."big") AS _p',
    );
    expect(q.values).toEqual([body]);
  });

  it('inserts a batch in one statement, in body order, with one parameter whatever its size', () => {
    const body = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ sku: `s${i}`, qty: i })));
    const q = insertSql(body, { query: 'returning=id' });
    expect(q.text).toBe(
      `WITH _w AS (INSERT INTO ${T} AS _t ("sku", "qty") SELECT _r."sku", _r."qty" FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS _e(v, n) ` +
        `CROSS JOIN LATERAL jsonb_populate_record(NULL::${T}, _e.v) AS _r ORDER BY _e.n RETURNING _t."id") ` +
        `SELECT coalesce(json_agg(_p.*), '[]')::text, count(*)::text FROM _w CROSS JOIN LATERAL (SELECT _w."id") AS _p`,
    );
    expect(q.values).toEqual([body]);
  });

  it('omits the column list for {} so every column takes its default', () => {
    expect(insertSql('{}', { query: 'returning=id' }).text).toContain(`INSERT INTO ${T} AS _t SELECT  FROM`);
  });

  it('upserts: DO UPDATE of the provided non-conflict columns, or DO NOTHING', () => {
    const merge = insertSql('{"sku":"a","name":"n","qty":1}', { headers: { 'x-upsert': 'true', 'x-on-conflict': 'sku' }, query: 'returning=sku' });
    expect(merge.text).toContain('ON CONFLICT ("sku") DO UPDATE SET "name" = EXCLUDED."name", "qty" = EXCLUDED."qty" RETURNING');
    const keyOnly = insertSql('{"sku":"a"}', { headers: { 'x-upsert': 'true', 'x-on-conflict': 'sku' }, query: 'returning=sku' });
    expect(keyOnly.text).toContain('ON CONFLICT ("sku") DO UPDATE SET "sku" = EXCLUDED."sku" RETURNING');
    const ignore = insertSql('[{"sku":"a"}]', { headers: { prefer: 'resolution=ignore-duplicates', 'x-on-conflict': 'sku' }, query: 'returning=sku' });
    expect(ignore.text).toContain('ORDER BY _e.n ON CONFLICT ("sku") DO NOTHING RETURNING');
  });

  it('quotes hostile identifiers', () => {
    const table = weird;
    const q = compileSql(compileInsert(parseInsert(table, writeRequest('POST', '{"a\\"b":"x","col with space":"y"}', { query: 'returning=select' }), config)));
    expect(q.text).toContain('INSERT INTO "public"."we""ird table" AS _t ("a""b", "col with space") SELECT _r."a""b", _r."col with space"');
    expect(q.text).toContain('RETURNING _t."select"');
  });
});

describe('compileUpdate / compileDelete', () => {
  it('updates the given columns from the bound body, the key as a parameter', () => {
    const body = '{"name":"x","qty":2}';
    const q = compileSql(compileUpdate(parseUpdate(items, writeRequest('PATCH', body, { id: '7', query: 'returning=qty' }), config)));
    expect(q.text).toBe(
      `WITH _w AS (UPDATE ${T} AS _t SET "name" = _r."name", "qty" = _r."qty" FROM jsonb_populate_record(NULL::${T}, $1::jsonb) AS _r WHERE _t."id" = $2::bigint RETURNING _t."qty") ` +
        'SELECT (json_agg(_p.*) -> 0)::text, count(*)::text FROM _w CROSS JOIN LATERAL (SELECT _w."qty") AS _p',
    );
    expect(q.values).toEqual([body, '7']);
  });

  it('deletes by key, reading no column without returning', () => {
    const q = compileSql(compileDelete(parseDelete(items, writeRequest('DELETE', undefined, { id: '7' }))));
    expect(q.text).toBe(`WITH _w AS (DELETE FROM ${T} AS _t WHERE _t."id" = $1::bigint RETURNING NULL) SELECT (json_agg(_p.*) -> 0)::text, count(*)::text FROM _w CROSS JOIN LATERAL (SELECT ) AS _p`);
    expect(q.values).toEqual(['7']);
    const returning = compileSql(compileDelete(parseDelete(items, writeRequest('DELETE', undefined, { id: '7', query: 'returning=sku' }))));
    expect(returning.text).toContain('RETURNING _t."sku"');
  });
});
