/**
 * ListCommand -> one statement that returns one row: the page as JSON text built by PostgreSQL
 * (PostgREST's json_agg shape), the row count, the last row's ordering keys as text (for
 * next_cursor) and, on request, the total. Node never parses the rows.
 */
import type { ListCommand } from '../../command/command';
import { empty, ident, join, sql, type Sql } from '../../sql/sql';
import { compileAfterCursor, compileOrderBy } from './compile-cursor';
import { compileFilter, compileSearch } from './compile-filter';

const t = sql`_t`;

export function whereClause(conditions: readonly Sql[]): Sql {
  return conditions.length ? sql` WHERE ${join(conditions, sql` AND `)}` : empty;
}

export function compileList(command: ListCommand, searchConfig: string | undefined): Sql {
  const { table, distinct } = command;
  const from = sql`${ident(table.schema, table.name)} AS _t`;
  const conditions = command.filters.map((f) => compileFilter(t, f));
  if (command.search) conditions.push(compileSearch(t, command.search, searchConfig));
  const where = whereClause(conditions);

  // The page is read from `s`: the table itself, or its distinct values of one column.
  const source = distinct ? sql`(SELECT DISTINCT _t.${ident(distinct.name)} FROM ${from}${where}) AS _s` : from;
  const s = distinct ? sql`_s` : t;
  const pageConditions = distinct ? [] : [...conditions];
  if (command.cursor) pageConditions.push(compileAfterCursor(s, command.order, command.cursor.values));

  const selected = join(command.select.map((c) => sql`${s}.${ident(c.name)}`));
  const orderBy = command.order.length ? sql` ORDER BY ${compileOrderBy(s, command.order)}` : empty;
  const page = sql`${whereClause(pageConditions)}${orderBy} LIMIT ${command.limit} OFFSET ${command.offset}`;
  // The total counts every row the filters match (distinct: every distinct value), not just this page.
  const total = command.countExact ? sql`, (SELECT count(*) FROM ${distinct ? source : sql`${from}${where}`})::text` : empty;
  // The ordering keys of the page's last row, as text, for next_cursor.
  const lastKey = (keyNames: readonly string[]): Sql =>
    keyNames.length ? sql`(array_agg(json_build_array(${join(keyNames.map((n) => sql`_p.${ident(n)}::text`))})))[count(*)]::text` : sql`NULL`;

  // json_agg over the page's rows keeps the column names and has no 100-argument limit
  // (json_build_object stops at 50 columns). When every ordering key is selected, the page row
  // itself is aggregated (PostgREST's shape, the cheapest); otherwise the selected columns ride
  // in a LATERAL row beside the ordering keys, which stay out of the JSON.
  if (command.order.every((k) => command.select.includes(k.column))) {
    return sql`SELECT coalesce(json_agg(_p), '[]')::text, count(*)::text, ${lastKey(command.order.map((k) => k.column.name))}${total} FROM (SELECT ${selected} FROM ${source}${page}) AS _p`;
  }
  const keyNames = command.order.map((_, i) => `k${i}`);
  const keys = join(command.order.map((k, i) => sql`${s}.${ident(k.column.name)} AS ${ident(keyNames[i]!)}`));
  return sql`SELECT coalesce(json_agg(_p.r), '[]')::text, count(*)::text, ${lastKey(keyNames)}${total} FROM (SELECT _r AS r, ${keys} FROM ${source} CROSS JOIN LATERAL (SELECT ${selected}) AS _r${page}) AS _p`;
}
