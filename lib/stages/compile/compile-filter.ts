/**
 * Filters -> WHERE conditions. Values stay text and are bound as parameters, each cast to the
 * column's comparison type (`typedValue`), so PostgreSQL parses it with that type's input
 * function: `id=abc` on an integer is a VALIDATION_ERROR from PostgreSQL, not ours.
 */
import type { Filter, Search } from '../../command/command';
import { assertNever } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { catalogType, ident, join, sql, type Sql } from '../../sql/sql';
import { assertComparable, compare, operator } from './comparison-operator';
import { typedValue } from './typed-value';

export function compileFilter(alias: Sql, filter: Filter): Sql {
  const { column } = filter;
  const col = sql`${alias}.${ident(column.name)}`;
  switch (filter.op) {
    // The column type's own operators: qualified when they live outside pg_catalog (comparison-operator.ts).
    case 'eq':
      return compare(column, col, '=', typedValue(column, filter.value), 'eq');
    case 'ne':
      return compare(column, col, '<>', typedValue(column, filter.value), 'ne');
    case 'gt':
      return compare(column, col, '>', typedValue(column, filter.value), 'gt');
    case 'gte':
      return compare(column, col, '>=', typedValue(column, filter.value), 'gte');
    case 'lt':
      return compare(column, col, '<', typedValue(column, filter.value), 'lt');
    case 'lte':
      return compare(column, col, '<=', typedValue(column, filter.value), 'lte');
    case 'in':
      return compileIn(col, column, filter.value);
    case 'like':
      return sql`${col}::text LIKE ${filter.value}`;
    case 'ilike':
      return sql`${col}::text ILIKE ${filter.value}`;
    case 'is_null':
      return filter.value ? sql`${col} IS NULL` : sql`${col} IS NOT NULL`;
    case 'contains':
      // `array @> array` (GIN-indexable); parse admits only columns whose type is an array. An
      // untyped one-element array parameter takes the column's type (when it may not be named).
      return column.compareType === null || column.compareElementType === null
        ? sql`${col} @> ${[filter.value]}`
        : sql`${col} @> ARRAY[${filter.value}::${catalogType(column.compareElementType)}]`;
    default:
      return assertNever(filter, 'filter');
  }
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

/** The WHERE conditions of a list or aggregate: its filters and a policy's, ANDed, and its search. */
export function compileConditions(
  alias: Sql,
  command: { readonly filters: readonly Filter[]; readonly rowFilters?: readonly Filter[]; readonly search: Search | null },
  searchConfig: string | undefined,
): Sql[] {
  const conditions = [...command.filters, ...(command.rowFilters ?? [])].map((f) => compileFilter(alias, f));
  if (command.search) conditions.push(compileSearch(alias, command.search, searchConfig));
  return conditions;
}

/** `<key conditions> AND <row filters>` for the statements that address one row by key. */
export function compileKeyed(alias: Sql, key: readonly { readonly column: Column; readonly value: string }[], rowFilters: readonly Filter[] | undefined): Sql {
  const conditions = [...key.map(({ column, value }) => compare(column, sql`${alias}.${ident(column.name)}`, '=', typedValue(column, value), 'key')), ...(rowFilters ?? []).map((f) => compileFilter(alias, f))];
  return join(conditions, sql` AND `);
}

/** `search`: websearch_to_tsquery over the text columns (PostgreSQL docs §12.3.2). */
export function compileSearch(alias: Sql, search: Search, searchConfig: string | undefined): Sql {
  const document = concatWords(search.columns.map((c) => sql`${alias}.${ident(c.name)}`));
  return searchConfig === undefined
    ? sql`to_tsvector(${document}) @@ websearch_to_tsquery(${search.query})`
    : sql`to_tsvector(${searchConfig}::regconfig, ${document}) @@ websearch_to_tsquery(${searchConfig}::regconfig, ${search.query})`;
}

/** Arguments of one concat_ws call besides the separator: a function takes at most 100 (FUNC_MAX_ARGS). */
const CONCAT_ARGS = 99;

/**
 * `concat_ws(' ', a, b, ...)`; a table with more text columns than one call takes is concatenated
 * in groups, whose (possibly empty) results are concatenated again: the extra spaces change no
 * lexeme or position of the tsvector.
 */
function concatWords(items: readonly Sql[]): Sql {
  let level = items;
  while (level.length > CONCAT_ARGS) {
    const groups: Sql[] = [];
    for (let i = 0; i < level.length; i += CONCAT_ARGS) groups.push(sql`concat_ws(' ', ${join(level.slice(i, i + CONCAT_ARGS))})`);
    level = groups;
  }
  return sql`concat_ws(' ', ${join(level)})`;
}
