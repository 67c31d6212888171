import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { keyed } from '../support/keyed-read';
import { compileGet } from '../../../lib/stages/compile/compile-get';
import { compileList } from '../../../lib/stages/compile/compile-list';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseKey } from '../../../lib/doors/rest/parse/parse-key';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { compileSql, ident, integerLiteral, sql } from '../../../lib/sql/sql';
import { orders, orderTags, weird } from '../support/schema-fixture';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const compileQuery = (query: string, table = orders, searchConfig?: string) =>
  compileSql(compileList(parseList(table, [...new URLSearchParams(query)], config, cursors), searchConfig));

describe('sql fragments', () => {
  it('quotes identifiers, doubling embedded quotes, and binds every hole as a parameter', () => {
    const q = compileSql(sql`SELECT ${ident('we"ird table', 'a"b')} FROM t WHERE x = ${"'; DROP TABLE t; --"}`);
    expect(q.text).toBe('SELECT "we""ird table"."a""b" FROM t WHERE x = $1');
    expect(q.values).toEqual(["'; DROP TABLE t; --"]);
  });

  it('refuses NUL in identifiers', () => {
    expect(() => ident('a\u0000b')).toThrow(TypeError);
  });
});

describe('compile list', () => {
  it('builds the page JSON in PostgreSQL with bound filters, order and paging', () => {
    const q = compileQuery('status=paid&total.gte=10&select=id,total&sort=-total&limit=20&offset=40');
    expect(q.text).toBe(
      'SELECT coalesce(json_agg(_p.*), \'[]\')::text, count(*)::text, json_build_array((array_agg(_p."total"::text))[count(*)], (array_agg(_p."id"::text))[count(*)])::text FROM (SELECT _t."id", _t."total" FROM "public"."orders" AS _t WHERE _t."status" = $1::text AND _t."total" >= $2::numeric ORDER BY _t."total" DESC NULLS FIRST, _t."id" ASC NULLS LAST LIMIT 20 OFFSET 40) AS _p',
    );
    expect(q.values).toEqual(['paid', '10']);
  });

  it('writes LIMIT and OFFSET as literals, so the planner knows the page size of a cached plan', () => {
    const first = compileQuery('status=paid&limit=20');
    const third = compileQuery('status=shipped&limit=20&offset=40');
    expect(first.text).toContain(' LIMIT 20 OFFSET 0) AS _p');
    expect(third.text).toContain(' LIMIT 20 OFFSET 40) AS _p');
    expect(third.text.replace('OFFSET 40', 'OFFSET 0')).toBe(first.text);
    expect(first.values).toEqual(['paid']);
    expect(third.values).toEqual(['shipped']);
  });

  it('binds any other offset: not a whole page, or more than ten pages in (deep paging)', () => {
    const at = (query: string) => compileQuery(`status=paid&${query}`);
    expect(at('limit=20&offset=200').text).toContain(' LIMIT 20 OFFSET 200) AS _p');
    expect(at('limit=20&offset=200').values).toEqual(['paid']);
    for (const [query, offset] of [['limit=20&offset=220', 220], ['limit=20&offset=45', 45], ['limit=0&offset=20', 20]] as const) {
      const q = at(query);
      expect(q.text).toMatch(/ LIMIT \d+ OFFSET \$2\) AS _p$/);
      expect(q.values).toEqual(['paid', offset]);
    }
    expect(at('limit=0').text).toContain(' LIMIT 0 OFFSET 0) AS _p');
  });

  it('writes only non-negative safe integers as literals', () => {
    expect(compileSql(sql`LIMIT ${integerLiteral(0)} OFFSET ${integerLiteral(Number.MAX_SAFE_INTEGER)}`)).toEqual({ text: `LIMIT 0 OFFSET ${Number.MAX_SAFE_INTEGER}`, values: [] });
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '1; DROP TABLE t' as unknown as number]) {
      expect(() => integerLiteral(bad)).toThrow(TypeError);
    }
  });

  it('keeps ordering keys that are not selected out of the JSON (LATERAL row shape)', () => {
    const q = compileQuery('select=status&sort=-total&limit=5');
    expect(q.text).toBe(
      'SELECT coalesce(json_agg(_p.r), \'[]\')::text, count(*)::text, json_build_array((array_agg(_p."k0"::text))[count(*)], (array_agg(_p."k1"::text))[count(*)])::text FROM (SELECT to_json(_r.*) AS r, _t."total" AS "k0", _t."id" AS "k1" FROM "public"."orders" AS _t CROSS JOIN LATERAL (SELECT _t."status") AS _r ORDER BY _t."total" DESC NULLS FIRST, _t."id" ASC NULLS LAST LIMIT 5 OFFSET 0) AS _p',
    );
  });

  it('compiles every operator to a parameterised condition', () => {
    const q = compileQuery('status=in.(a,b)&notes=like.x*&notes.ilike=*Y&total=is_null&placed_at.is_null=false&tags=contains.vip&id=ne.3&id.lt=9&id.lte=8&id.gt=1');
    expect(q.text).toContain('_t."status" = ANY($1::text[]) AND _t."notes"::text LIKE $2 AND _t."notes"::text ILIKE $3 AND _t."total" IS NULL AND _t."placed_at" IS NOT NULL AND _t."tags" @> ARRAY[$4::text] AND _t."id" <> $5::bigint AND _t."id" < $6::bigint AND _t."id" <= $7::bigint AND _t."id" > $8::bigint');
    expect(q.values.slice(0, 8)).toEqual([['a', 'b'], 'x%', '%Y', 'vip', '3', '9', '8', '1']);
  });

  it('uses websearch_to_tsquery over the text columns, with an optional bound config', () => {
    expect(compileQuery('search=a+b').text).toContain(`to_tsvector(concat_ws(' ', _t."status", _t."notes")) @@ websearch_to_tsquery($1)`);
    const q = compileQuery('search=a&search_columns=notes', orders, 'english');
    expect(q.text).toContain(`to_tsvector($1::regconfig, concat_ws(' ', _t."notes")) @@ websearch_to_tsquery($2::regconfig, $3)`);
    expect(q.values.slice(0, 3)).toEqual(['english', 'english', 'a']);
  });

  it('adds a keyset condition for a cursor, null-aware for nullable keys', () => {
    const order = parseList(orders, [['sort', '-total']], config, cursors).root.order;
    const q = compileQuery(`sort=-total&cursor=${cursors.encode(orders, order, ['12.50', '7'])}`);
    expect(q.text).toContain('WHERE ((_t."total" < $1::numeric) OR (_t."total" = $2::numeric AND _t."id" > $3::bigint))');
    expect(q.values.slice(0, 3)).toEqual(['12.50', '12.50', '7']);
    const nullKey = compileQuery(`sort=-total&cursor=${cursors.encode(orders, order, [null, '7'])}`);
    expect(nullKey.text).toContain('WHERE ((_t."total" IS NOT NULL) OR (_t."total" IS NULL AND _t."id" > $1::bigint))');
  });

  it('uses a row comparison when every key is non-null and sorted one way', () => {
    const order = parseList(orders, [['sort', 'placed_at']], config, cursors).root.order;
    const q = compileQuery(`sort=placed_at&cursor=${cursors.encode(orders, order, ['2024-01-01', '5'])}`);
    expect(q.text).toContain('WHERE (_t."placed_at", _t."id") > ($1::timestamp with time zone, $2::bigint)');
  });

  it('pages distinct values of one column and counts them on request', () => {
    const q = compileQuery('distinct=status&status=ne.x&count=exact');
    expect(q.text).toBe(
      'SELECT coalesce(json_agg(_p.*), \'[]\')::text, count(*)::text, json_build_array((array_agg(_p."status"::text))[count(*)])::text, (SELECT count(*) FROM (SELECT DISTINCT _t."status" FROM "public"."orders" AS _t WHERE _t."status" <> $1::text) AS _s)::text FROM (SELECT _s."status" FROM (SELECT DISTINCT _t."status" FROM "public"."orders" AS _t WHERE _t."status" <> $2::text) AS _s ORDER BY _s."status" ASC NULLS LAST LIMIT 100 OFFSET 0) AS _p',
    );
  });

  it('counts the filtered rows for count=exact (regression: total ignored the filters)', () => {
    const q = compileQuery('status=paid&count=exact');
    expect(q.text).toContain(', (SELECT count(*) FROM "public"."orders" AS _t WHERE _t."status" = $1::text)::text FROM');
    expect(q.values[0]).toBe('paid');
  });

  it('quotes hostile identifiers from the schema cache', () => {
    const q = compileQuery('select="a""b","col with space",naïve_ünïcode&select.eq=x', weird);
    expect(q.text).toContain('FROM "public"."we""ird table" AS _t CROSS JOIN LATERAL (SELECT _t."a""b", _t."col with space", _t."naïve_ünïcode") AS _r WHERE _t."select" = $1::text');
  });
});

describe('compile get', () => {
  it('matches every key column, composite keys in key order', () => {
    const q = compileSql(compileGet(keyed(orderTags, orderTags.columns, parseKey(orderTags, '5,a%2Cb'))));
    expect(q.text).toBe('SELECT to_json(_r.*)::text FROM "public"."order_tags" AS _t CROSS JOIN LATERAL (SELECT _t."order_id", _t."tag") AS _r WHERE _t."order_id" = $1::bigint AND _t."tag" = $2::text');
    expect(q.values).toEqual(['5', 'a,b']);
  });
});
