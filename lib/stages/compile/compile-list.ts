/**
 * A read with the `page` media (command.ts) -> one statement that returns one row: the page as JSON text built by PostgreSQL
 * (the json_agg shape), the row count, the last row's ordering keys as text (for
 * next_cursor), on request the total and, on the child route, whether the parent row is visible.
 * Node never parses the rows. Expansions are correlated subqueries over the already limited page,
 * in the same statement: one round trip whatever the page size (no N+1).
 * Never: names one of its aliases bare. A whole row is `_p.*`, a column `_p."name"`: PostgreSQL
 * resolves a bare name to a column first, and a table may have a column `_p` or `_r`
 * (docs/architecture.md, "Names the compiler writes").
 */
import type { ParentScope, ReadCommand } from '../../command/command';
import { selects } from '../../command/read-items';
import type { Column } from '../../schema/schema-types';
import { empty, ident, integerLiteral, join, sql, type Sql } from '../../sql/sql';
import { compileAfterCursor, compileOrderBy } from './compile-cursor';
import { mayBeMissing, orderColumns, orderValue } from './compile-order-value';
import { correlatedColumns, flatColumns } from './compile-expand';
import { compileConditions, compileKeyed } from './compile-where';
import { typedValue } from './typed-value';

const t = sql`_t`;
const q = sql`_q`;

export function whereClause(conditions: readonly Sql[]): Sql {
  return conditions.length ? sql` WHERE ${join(conditions, sql` AND `)}` : empty;
}

/** Output columns of the list statement, by position (read by renderList). */
export function listColumns(command: ReadCommand): { data: 0; count: 1; lastKey: 2; total: number | null; parentVisible: number | null } {
  const total = command.count === 'exact' ? 3 : null;
  const parentVisible = command.parent ? (total === null ? 3 : 4) : null;
  return { data: 0, count: 1, lastKey: 2, total, parentVisible };
}

export function compileList(command: ReadCommand, searchConfig: string | undefined): Sql {
  const { distinct, root } = command;
  const { from, where, source, row, rows, pageClause, columns, keys } = listSource(command, searchConfig);
  // The total counts every row the filters match (distinct: every distinct value), not just this page.
  const total = command.count === 'exact' ? sql`, (SELECT count(*) FROM ${distinct ? source : sql`${from}${where}`})::text` : empty;
  // Child route: a parent that does not exist or that RLS hides is a 404, not an empty page.
  const parentVisible = command.parent ? sql`, (${compileParentExists(command.parent)})::text` : empty;

  // json_agg over the page's rows keeps the column names and has no 100-argument limit
  // (json_build_object stops at 50 columns). When every ordering key is selected, the page row
  // itself is aggregated (the json_agg shape, the cheapest); otherwise the selected columns ride
  // in a LATERAL row beside the ordering keys (`k0`, `k1`, ...), which stay out of the JSON.
  const orderSelected = root.order.every((k) => !mayBeMissing(k) && selects(root, k.field.column));
  const keyNames = orderSelected ? root.order.map((k) => k.field.column.name) : root.order.map((_, i) => `k${i}`);
  const pageRows = orderSelected
    ? sql`SELECT ${columns} FROM ${rows}${pageClause}`
    : sql`SELECT to_json(_r.*) AS r, ${join(keys.map((k, i) => sql`${k} AS ${ident(keyNames[i]!)}`))} FROM ${rows} CROSS JOIN LATERAL (SELECT ${columns}) AS _r${pageClause}`;
  const data = orderSelected ? sql`json_agg(_p.*)` : sql`json_agg(_p.r)`;
  return sql`SELECT coalesce(${data}, '[]')::text, count(*)::text, ${lastKey(keyNames)}${total}${parentVisible} FROM (${pageRows}) AS _p`;
}

/**
 * The rows of a list, for a page (compileList) and for an export (compile-export.ts): `SELECT
 * ${columns} FROM ${rows}${pageClause}` reads them in order, each selected column (and each
 * expansion, named after its relation) over the alias `row`.
 */
export function listSource(command: ReadCommand, searchConfig: string | undefined): { from: Sql; where: Sql; source: Sql; row: Sql; rows: Sql; pageClause: Sql; columns: Sql; keys: Sql[] } {
  const { table, distinct, root } = command;
  const { order } = root;
  const from = sql`${ident(table.schema, table.name)} AS _t`;
  const conditions = compileConditions(t, command, searchConfig);
  if (command.parent) conditions.push(compileParentCondition(t, command.parent));
  const where = whereClause(conditions);

  // The page is read from `s`: the table itself, or its distinct values of one column.
  const source = distinct ? sql`(SELECT DISTINCT _t.${ident(distinct.name)} FROM ${from}${where}) AS _s` : from;
  const s = distinct ? sql`_s` : t;
  const pageConditions = distinct ? [] : [...conditions];
  if (command.cursor) pageConditions.push(compileAfterCursor(s, order, command.cursor.values));

  const orderBy = order.length ? sql` ORDER BY ${compileOrderBy(s, order)}` : empty;
  const page = sql`${whereClause(pageConditions)}${orderBy} LIMIT ${integerLiteral(root.limit ?? 0)} OFFSET ${offsetOf(root.limit ?? 0, root.offset)}`;

  // The page's rows, `row` naming one of them. Without expand: the source itself, limited by the
  // page query below. With expand, the page is limited first (`_q`, carrying the selected columns
  // plus the FK and ordering columns the outer query needs), and only its rows get their related
  // rows. The expanded values are columns named after their relation, so they land in the row
  // JSON; parse refuses a relation name equal to a selected column. Unselected FK columns stay out.
  // The ordering keys over `row` (for next_cursor). A related term's value is read from the page
  // row again, so `_q` carries the columns its first relation starts from.
  let rows = source;
  let row = s;
  let pageClause = page;
  if (root.items.some((i) => i.kind === 'embed')) {
    const inner: Column[] = [];
    const fields = root.items.flatMap((i) => (i.kind === 'field' ? [i.field.column] : []));
    const correlated = root.items.flatMap((i) => (i.kind === 'embed' ? correlatedColumns(i.embed) : []));
    for (const c of [...fields, ...order.flatMap(orderColumns), ...correlated]) {
      if (!inner.includes(c)) inner.push(c);
    }
    rows = sql`(SELECT ${join(inner.map((c) => sql`${s}.${ident(c.name)}`))} FROM ${source}${page}) AS _q`;
    row = q;
    pageClause = empty;
  }
  const keys = order.map((k, i) => orderValue(row, k, String(i)));
  const columns = join(flatColumns(row, root.items));
  return { from, where, source, row, rows, pageClause, columns, keys };
}

/** Offsets written into the text: whole pages, at most this many pages in. */
const literalOffsetPages = 10;

/**
 * LIMIT is a literal, and so is the OFFSET of the first pages: with parameters the planner costs a
 * generic plan as if it fetched and skipped a tenth of the table, so PostgreSQL re-plans the
 * prepared statement on every request; with the page known, it reuses one cached plan
 * (docs/architecture.md, "Page size in the text"). Each literal offset is a statement of its own
 * on every connection, so only whole pages up to `literalOffsetPages` in are written; any other
 * offset (deep paging, which cursors serve better) stays a parameter and is planned each time.
 */
function offsetOf(limit: number, offset: number): Sql {
  const literal = limit > 0 ? offset % limit === 0 && offset <= literalOffsetPages * limit : offset === 0;
  return literal ? integerLiteral(offset) : sql`${offset}`;
}

/**
 * The ordering keys of the page's last row, as a JSON array of text, for next_cursor. One
 * array_agg per key and one json_build_array at the end, not a JSON array per row. Read only when
 * the page is full (renderList), so an empty page's `[null]` never reaches a cursor.
 */
function lastKey(keyNames: readonly string[]): Sql {
  if (keyNames.length === 0) return sql`NULL`;
  return sql`json_build_array(${join(keyNames.map((n) => sql`(array_agg(_p.${ident(n)}::text))[count(*)]`))})::text`;
}

/** The child rows: FK = the parent's key values, or via the parent row when the FK references a non-key unique. */
function compileParentCondition(row: Sql, parent: ParentScope): Sql {
  const fk = parent.foreignKey;
  const byKey = fk.referencedColumns.every((r) => parent.key.some((k) => k.column === r)) && fk.referencedColumns.length === parent.key.length;
  if (byKey) {
    return join(
      fk.columns.map((c, i) => {
        const key = parent.key.find((k) => k.column === fk.referencedColumns[i])!;
        return sql`${row}.${ident(c.name)} = ${typedValue(key.column, key.value)}`;
      }),
      sql` AND `,
    );
  }
  const referenced = join(fk.referencedColumns.map((c) => sql`_pa.${ident(c.name)}`));
  return sql`(${join(fk.columns.map((c) => sql`${row}.${ident(c.name)}`))}) IN (SELECT ${referenced} FROM ${ident(parent.table.schema, parent.table.name)} AS _pa WHERE ${parentKey(parent)})`;
}

/** One row, one column: `'true'` when the parent row of a child route is visible (an export's parentCheck). */
export function compileParentVisible(parent: ParentScope): Sql {
  return sql`SELECT (${compileParentExists(parent)})::text`;
}

function compileParentExists(parent: ParentScope): Sql {
  return sql`EXISTS (SELECT 1 FROM ${ident(parent.table.schema, parent.table.name)} AS _pa WHERE ${parentKey(parent)})`;
}

function parentKey(parent: ParentScope): Sql {
  return compileKeyed(sql`_pa`, parent.key, parent.rowFilters);
}
