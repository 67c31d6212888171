/**
 * Values compared with a column are cast to the column's comparison type (typed-value.ts), so
 * PostgreSQL never infers an anonymous record or an array of arrays: exact SQL for composites,
 * enum arrays, 2-D arrays, domains and quoted type names, and the untyped fallback for a type the
 * gateway's role may not name. The behaviour against PostgreSQL is in kinds-read.test.ts.
 */
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayError } from '../../../lib/errors/gateway-error';
import type { Column } from '../../../lib/schema/schema-types';
import { compileSql } from '../../../lib/sql/sql';
import { keyed } from '../support/keyed-read';
import { compileGet } from '../../../lib/stages/compile/compile-get';
import { compileList } from '../../../lib/stages/compile/compile-list';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseKey } from '../../../lib/doors/rest/parse/parse-key';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { makeTable } from '../support/schema-fixture';
import { thrown } from '../support/thrown';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));

const named = (compareType: string, extra: Partial<Column> = {}): Partial<Column> => ({
  compareType,
  compareElementType: compareType.endsWith('[]') ? compareType.slice(0, -2) : null,
  compareListType: compareType.endsWith('[]') ? null : `${compareType}[]`,
  ...extra,
});
const gadgets = makeTable(
  'gadgets',
  [
    ['id', 'integer'],
    ['pair', 'kinds.pair', { category: 'C', ...named('kinds.pair') }],
    ['moods', 'kinds.mood[]', { category: 'A', ...named('kinds.mood[]') }],
    ['grid', 'integer[]', { category: 'A', ...named('integer[]') }],
    ['name', 'kinds.short_text', { category: 'S', ...named('text') }],
    ['spot', 'kinds."Odd Point"', { category: 'C', ...named('kinds."Odd Point"') }],
    ['bits', 'bit(4)', { category: 'V', ...named('"bit"') }],
    ['amount', 'numeric(40,10)', { category: 'N', ...named('numeric') }],
    ['vec', 'int2vector', { category: 'A', ...named('int2vector') }],
    // Types in a schema the role has no USAGE on: not named in SQL.
    ['hue', 'hidden.hue', { category: 'E', compareType: null, compareElementType: null, compareListType: null }],
    ['hues', 'hidden.hue[]', { category: 'A', compareType: null, compareElementType: 'hidden.hue', compareListType: null }],
    ['tint', 'hidden.tint', { category: 'C', compareType: null, compareElementType: null, compareListType: null }],
  ],
  ['pair', 'id'],
  'kinds',
);
const compile = (query: string) => compileSql(compileList(parseList(gadgets, [...new URLSearchParams(query)], config, cursors), undefined));
const where = (query: string) => {
  const text = compile(`select=id&${query}`).text;
  return text.slice(text.indexOf(' WHERE ') + 7, text.indexOf(' ORDER BY '));
};

describe('compile: values cast to the column type', () => {
  it.each([
    ['pair=eq.(1,one)', '_t."pair" = $1::kinds.pair'],
    ['pair=gte.(1,one)', '_t."pair" >= $1::kinds.pair'],
    ['spot=ne.(1,NaN)', '_t."spot" <> $1::kinds."Odd Point"'],
    ['moods=eq.{ok}', '_t."moods" = $1::kinds.mood[]'],
    ['name=gt.a', '_t."name" > $1::text'],
    ['bits=eq.1010', '_t."bits" = $1::"bit"'],
    ['amount=eq.1.5', '_t."amount" = $1::numeric'],
  ])('%s -> %s', (query, condition) => {
    expect(where(query)).toBe(condition);
  });

  it('binds an in-list on a scalar or composite column as one array of the column type', () => {
    expect(where('pair=in.("(1,a)","(2,b)")')).toBe('_t."pair" = ANY($1::kinds.pair[])');
    expect(compile('pair=in.("(1,a)","(2,b)")').values[0]).toEqual(['(1,a)', '(2,b)']);
  });

  it('binds an in-list on an array column as text[] and casts each item (there is no array-of-array type)', () => {
    const sql = 'ANY(SELECT _in.v::kinds.mood[] FROM unnest($1::text[]) AS _in(v))';
    expect(where('moods=in.("{ok,sad}","{}")')).toBe(`_t."moods" = ${sql}`);
    expect(where('grid.in="{{1,2},{3,4}}"')).toBe('_t."grid" = ANY(SELECT _in.v::integer[] FROM unnest($1::text[]) AS _in(v))');
    const q = compile('select=id&moods=in.("{ok,sad}","{}")&grid=in.()');
    expect(q.values.slice(0, 2)).toEqual([['{ok,sad}', '{}'], []]);
    // One SQL text whatever the list length.
    expect(compile('moods=in.("{a}")').text).toBe(compile('moods=in.("{a}","{b}","{c}")').text);
  });

  it('contains casts the value to the element type', () => {
    expect(where('moods=contains.ok')).toBe('_t."moods" @> ARRAY[$1::kinds.mood]');
    expect(where('grid=contains.5')).toBe('_t."grid" @> ARRAY[$1::integer]');
  });

  it('casts cursor values back to each key type, in both condition shapes', () => {
    const sorted = parseList(gadgets, [['sort', 'pair,-moods']], config, cursors);
    const mixed = compile(`select=id&sort=pair,-moods&cursor=${cursors.encode(gadgets, sorted.root.order, ['(1,"a,b")', '{ok}', '3'])}`);
    expect(mixed.text).toContain(
      'WHERE ((_t."pair" > $1::kinds.pair) OR (_t."pair" = $2::kinds.pair AND _t."moods" < $3::kinds.mood[]) OR (_t."pair" = $4::kinds.pair AND _t."moods" = $5::kinds.mood[] AND _t."id" > $6::integer))',
    );
    const keyOnly = parseList(gadgets, [], config, cursors);
    const rows = compile(`select=id&cursor=${cursors.encode(gadgets, keyOnly.root.order, ['(1,"a,b")', '3'])}`);
    expect(rows.text).toContain('WHERE (_t."pair", _t."id") > ($1::kinds.pair, $2::integer)');
    expect(rows.values.slice(0, 2)).toEqual(['(1,"a,b")', '3']);
  });

  it('casts key values of /:id to each key column type', () => {
    const q = compileSql(compileGet(keyed(gadgets, [gadgets.columns[0]!], parseKey(gadgets, '(1%2C"a%2Cb"),7'))));
    expect(q.text).toContain('WHERE _t."pair" = $1::kinds.pair AND _t."id" = $2::integer');
    expect(q.values).toEqual(['(1,"a,b")', '7']);
  });
});

describe('compile: a type the role may not name stays an untyped parameter', () => {
  it.each([
    ['hue=eq.red', '_t."hue" = $1'],
    ['hue=in.(red,blue)', '_t."hue" = ANY($1)'],
    ['hues=contains.red', '_t."hues" @> $1'],
    ['hues=eq.{red}', '_t."hues" = $1'],
  ])('%s -> %s', (query, condition) => {
    expect(where(query)).toBe(condition);
  });

  it.each([['tint=eq.(red,1)'], ['tint=in.("(red,1)")'], ['tint.gt=(red,1)'], ['hues=in.("{red}")']])('refuses %s, which PostgreSQL cannot type from the column', (query) => {
    const error = thrown(() => compile(query), GatewayError);
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.hint).toBe("Grant the gateway's role USAGE on the schema of the column's type.");
  });

  it('still allows like, ilike and is_null on such a composite', () => {
    expect(where('tint=like.(red*')).toBe('_t."tint"::text LIKE $1');
    expect(where('tint=is_null')).toBe('_t."tint" IS NULL');
  });
});

describe('parse: contains needs a true array', () => {
  it('refuses int2vector (category A, but fixed-size: no element type to contain)', () => {
    const error = thrown(() => compile('vec=contains.1'), GatewayError);
    expect(error.code).toBe('PARSE_ERROR');
    expect(error.message).toContain('needs an array column');
  });
});
