/**
 * The WHERE of the reads with the `page` media and of the statements that address one row by key: the caller's
 * conditions and a policy's, ANDed (each compiled by compileCondition, the one condition
 * vocabulary), the key, and the full-text `search` over a table's text columns.
 */
import type { Condition, Embed, Search } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { compileCondition } from './compile-condition';
import { compare } from './comparison-operator';
import { typedValue } from './typed-value';

/** Flat reads join no embedded level a condition could name. */
const noEmbeds: ReadonlyMap<Embed, Sql> = new Map();

/** The WHERE conditions of a page or aggregate: the root's conditions and a policy's, ANDed, and the search. */
export function compileConditions(
  alias: Sql,
  command: { readonly root: { readonly where: readonly Condition[]; readonly rowFilters?: readonly Condition[] }; readonly search?: Search | undefined },
  searchConfig: string | undefined,
): Sql[] {
  const { root } = command;
  const conditions = [...root.where, ...(root.rowFilters ?? [])].map((c) => compileCondition(c, alias, noEmbeds));
  if (command.search) conditions.push(compileSearch(alias, command.search, searchConfig));
  return conditions;
}

/** `<key conditions> AND <row filters>` for the statements that address one row by key. */
export function compileKeyed(alias: Sql, key: readonly { readonly column: Column; readonly value: string }[], rowFilters: readonly Condition[] | undefined): Sql {
  const conditions = [...key.map(({ column, value }) => compare(column, sql`${alias}.${ident(column.name)}`, '=', typedValue(column, value), 'key')), ...(rowFilters ?? []).map((c) => compileCondition(c, alias, noEmbeds))];
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
