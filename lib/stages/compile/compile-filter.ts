/**
 * Filters -> WHERE conditions. Values stay text and are bound as parameters; PostgreSQL infers
 * each parameter's type from the column it is compared with and parses it with that type's
 * input function, so `id=abc` on an integer is a VALIDATION_ERROR from PostgreSQL, not ours.
 */
import type { Filter, Search } from '../../command/command';
import { assertNever } from '../../command/command';
import { ident, join, sql, type Sql } from '../../sql/sql';

export function compileFilter(alias: Sql, filter: Filter): Sql {
  const col = sql`${alias}.${ident(filter.column.name)}`;
  switch (filter.op) {
    case 'eq':
      return sql`${col} = ${filter.value}`;
    case 'ne':
      return sql`${col} <> ${filter.value}`;
    case 'gt':
      return sql`${col} > ${filter.value}`;
    case 'gte':
      return sql`${col} >= ${filter.value}`;
    case 'lt':
      return sql`${col} < ${filter.value}`;
    case 'lte':
      return sql`${col} <= ${filter.value}`;
    case 'in':
      // One array parameter, typed as the column's array type: any list length, one plan.
      return sql`${col} = ANY(${[...filter.value]})`;
    case 'like':
      return sql`${col}::text LIKE ${filter.value}`;
    case 'ilike':
      return sql`${col}::text ILIKE ${filter.value}`;
    case 'is_null':
      return filter.value ? sql`${col} IS NULL` : sql`${col} IS NOT NULL`;
    case 'contains':
      // `array @> array`: the one-element parameter takes the column's array type (GIN-indexable).
      return sql`${col} @> ${[filter.value]}`;
    default:
      return assertNever(filter, 'filter');
  }
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
export function compileKeyed(alias: Sql, key: readonly { readonly column: { readonly name: string }; readonly value: string }[], rowFilters: readonly Filter[] | undefined): Sql {
  const conditions = [...key.map(({ column, value }) => sql`${alias}.${ident(column.name)} = ${value}`), ...(rowFilters ?? []).map((f) => compileFilter(alias, f))];
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
