/**
 * Conditions -> SQL: the one condition vocabulary of every read (a list's or aggregate's filters,
 * a read level's `where`, a policy's row conditions, the rows an update or delete selects).
 * Values stay text and are bound as parameters, each cast to the column's comparison type
 * (`typedValue`), so PostgreSQL parses it with that type's input function: `id=abc` on an integer
 * is a VALIDATION_ERROR from PostgreSQL, not ours. In: a condition whose columns are schema-cache
 * objects, the alias of its level, and the aliases of the level's joined embeds. Never: writes a
 * value into the SQL text.
 */
import type { Condition, Embed, FieldRef } from '../../command/command';
import { assertNever } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { catalogType, ident, join, sql, type Sql } from '../../sql/sql';
import { assertComparable, compare, operator, type Comparison } from './comparison-operator';
import { typedValue } from './typed-value';

/** Whether an embedded level has a row: `!inner`, `rel=not.is.null`. */
export function hasRows(e: Embed, alias: Sql): Sql {
  if (e.cardinality === 'one') return sql`${alias}.j IS NOT NULL`;
  // A spread to-many level is an object of arrays, present even without rows: its row count decides.
  if (e.spread) return sql`${alias}.n > 0`;
  return sql`json_array_length(${alias}.j) > 0`;
}


/** A column, or the value a JSON path reaches in it (`->` json, `->>` text); keys and indexes bound. */
export function fieldExpr(field: FieldRef, a: Sql): Sql {
  const c = field.column.computed;
  // A computed field's function takes the whole row, written `a.*`: a bare `a` would be a column `a` of the table first.
  let expr = c === undefined ? sql`${a}.${ident(field.column.name)}` : sql`${ident(c.schema)}.${ident(c.name)}(${a}.*)`;
  for (const step of field.path) {
    const key = step.index ? sql`${Number(step.key)}::integer` : sql`${step.key}::text`;
    expr = step.asText ? sql`(${expr} ->> ${key})` : sql`(${expr} -> ${key})`;
  }
  return expr;
}

/** What a field is compared as: the column's type, text after `->>`, jsonb after `->`. */
function comparable(field: FieldRef, a: Sql): { expr: Sql; typed: (v: string) => Sql; listType: Sql | null; text: boolean } {
  const expr = fieldExpr(field, a);
  const last = field.path[field.path.length - 1];
  if (last === undefined) {
    const c = field.column;
    return { expr, typed: (v) => typedValue(c, v), listType: c.compareListType === null ? null : catalogType(c.compareListType), text: false };
  }
  if (last.asText) return { expr, typed: (v) => sql`${v}::text`, listType: sql`text[]`, text: true };
  return { expr: sql`(${expr})::jsonb`, typed: (v) => sql`${v}::jsonb`, listType: sql`jsonb[]`, text: false };
}

const compareSql: Record<Extract<Condition, { kind: 'compare' }>['op'], Sql> = {
  eq: sql`=`, neq: sql`<>`, gt: sql`>`, gte: sql`>=`, lt: sql`<`, lte: sql`<=`, like: sql`LIKE`, ilike: sql`ILIKE`, match: sql`~`, imatch: sql`~*`,
  isdistinct: sql`IS DISTINCT FROM`, cs: sql`@>`, cd: sql`<@`, ov: sql`&&`, sl: sql`<<`, sr: sql`>>`, nxr: sql`&<`, nxl: sql`&>`, adj: sql`-|-`,
};

const textOps = new Set(['like', 'ilike', 'match', 'imatch']);

/** The comparisons whose operator is the column type's own (comparison-operator.ts). */
const typeComparison: Partial<Record<Extract<Condition, { kind: 'compare' }>['op'], Comparison>> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

export function compileCondition(c: Condition, a: Sql, joined: ReadonlyMap<Embed, Sql>): Sql {
  switch (c.kind) {
    case 'compare': {
      const f = comparable(c.field, a);
      const own = c.field.path.length === 0 ? typeComparison[c.op] : undefined;
      if (own !== undefined) return negated(compare(c.field.column, f.expr, own, f.typed(c.value), c.op), c.negate);
      // The pattern's parameter is typed by the text operator (text LIKE unknown: text).
      const cond = textOps.has(c.op) ? sql`${f.expr}::text ${compareSql[c.op]} ${c.value}` : sql`${f.expr} ${compareSql[c.op]} ${f.typed(c.value)}`;
      return negated(cond, c.negate);
    }
    case 'quantified': {
      const f = comparable(c.field, a);
      const q = c.quantifier === 'any' ? sql`ANY` : sql`ALL`;
      if (textOps.has(c.op)) return negated(sql`${f.expr}::text ${compareSql[c.op]} ${q}(${[...c.values]}::text[])`, c.negate);
      const list = f.listType === null ? sql`${[...c.values]}` : sql`${[...c.values]}::${f.listType}`;
      const own = c.field.path.length === 0 ? typeComparison[c.op] : undefined;
      if (own === undefined) return negated(sql`${f.expr} ${compareSql[c.op]} ${q}(${list})`, c.negate);
      // `<>` has no ANY/ALL spelling as NOT (=): the type's own `<>` or pg_catalog's.
      if (own !== '<>' || c.field.column.operatorSchemas?.['<>'] !== undefined || c.field.column.operatorSchemas === undefined) {
        assertComparable(c.field.column, own === '=' ? 'equality' : own === '<>' ? 'inequality' : 'ordering', c.op);
        return negated(sql`${f.expr} ${operator(c.field.column, own)} ${q}(${list})`, c.negate);
      }
      // neq(any) = NOT (= all), neq(all) = NOT (= any), with the type's qualified `=`.
      assertComparable(c.field.column, 'equality', c.op);
      const flipped = c.quantifier === 'any' ? sql`ALL` : sql`ANY`;
      return negated(sql`NOT (${f.expr} ${operator(c.field.column, '=')} ${flipped}(${list}))`, c.negate);
    }
    case 'in': {
      if (c.field.path.length === 0) return negated(compileIn(fieldExpr(c.field, a), c.field.column, c.values), c.negate);
      const f = comparable(c.field, a);
      return negated(sql`${f.expr} = ANY(${[...c.values]}::${f.listType ?? sql`text[]`})`, c.negate);
    }
    case 'contains': {
      // `array @> array` (GIN-indexable); parse admits only columns whose type is an array. An
      // untyped one-element array parameter takes the column's type (when it may not be named).
      const { column } = c.field;
      const col = fieldExpr(c.field, a);
      const cond = column.compareType === null || column.compareElementType === null ? sql`${col} @> ${[c.value]}` : sql`${col} @> ARRAY[${c.value}::${catalogType(column.compareElementType)}]`;
      return negated(cond, c.negate);
    }
    case 'is': {
      const expr = fieldExpr(c.field, a);
      const test = c.value === 'null' ? sql`IS NULL` : c.value === 'not_null' ? sql`IS NOT NULL` : c.value === 'true' ? sql`IS TRUE` : c.value === 'false' ? sql`IS FALSE` : sql`IS UNKNOWN`;
      return negated(sql`${expr} ${test}`, c.negate);
    }
    case 'fts': {
      const expr = fieldExpr(c.field, a);
      const fn = c.op === 'fts' ? sql`to_tsquery` : c.op === 'plfts' ? sql`plainto_tsquery` : c.op === 'phfts' ? sql`phraseto_tsquery` : sql`websearch_to_tsquery`;
      const isVector = c.field.path.length === 0 && c.field.column.type === 'tsvector';
      const query = c.config === null ? sql`${fn}(${c.query}::text)` : sql`${fn}(${c.config}::regconfig, ${c.query}::text)`;
      const doc = isVector ? expr : c.config === null ? sql`to_tsvector(${expr}::text)` : sql`to_tsvector(${c.config}::regconfig, ${expr}::text)`;
      return negated(sql`${doc} @@ ${query}`, c.negate);
    }
    case 'group': {
      if (c.items.length === 0) return c.op === 'and' ? sql`true` : sql`false`;
      const inner = join(c.items.map((i) => compileCondition(i, a, joined)), c.op === 'and' ? sql` AND ` : sql` OR `);
      return negated(sql`(${inner})`, c.negate);
    }
    case 'embedded': {
      const alias = joined.get(c.embed)!;
      const has = hasRows(c.embed, alias);
      return c.exists ? has : sql`NOT (${has})`;
    }
    default:
      return assertNever(c, 'condition');
  }
}

function negated(cond: Sql, negate: boolean): Sql {
  return negate ? sql`NOT (${cond})` : cond;
}

/**
 * `in`: one parameter whatever the list length, so one SQL text and one plan. Usually the list is
 * bound as an array of the column's type (`= ANY($1::kinds.mood[])`, index-friendly). An array
 * column has no such type (PostgreSQL has no arrays of arrays: `text[][]` is `text[]`), nor has a
 * type without an array type, nor an extension's type (whose array delimiter may not be a comma):
 * then the list is bound as text[] and each item is cast on its own.
 */
function compileIn(col: Sql, column: Column, items: readonly string[]): Sql {
  assertComparable(column, 'equality', 'in');
  const eq = operator(column, '=');
  // An extension's type may not use `,` between array elements (PostGIS geometry: `:`): its items
  // are cast one by one, as below.
  if (column.compareListType !== null && column.operatorSchemas === undefined) return sql`${col} ${eq} ANY(${[...items]}::${catalogType(column.compareListType)})`;
  // A type the role may not name: an untyped array parameter, typed by PostgreSQL after the column.
  if (column.compareType === null) return sql`${col} ${eq} ANY(${[...items]})`;
  return sql`${col} ${eq} ANY(SELECT _in.v::${catalogType(column.compareType)} FROM unnest(${[...items]}::text[]) AS _in(v))`;
}
