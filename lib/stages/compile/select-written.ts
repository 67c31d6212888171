import type { Column } from '../../schema/schema-types';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { sizeChecked } from './size-checked';

/**
 * Wraps a data-modifying statement (PostgreSQL docs §7.8.4, "Data-Modifying Statements in WITH")
 * so that it returns one row: the written rows' JSON (an array, or the first row's object or
 * NULL when `many` is false) and their count as text. The count is what tells a PATCH or DELETE
 * without any visible row (404) from one that matched. With `maxBytes`, a representation over it
 * fails the statement (size-checked.ts), rolling the write back. The rows are `_p.*`: a bare `_p` would be
 * a column `_p` of the table, if it has one (docs/architecture.md, "Names the compiler writes").
 */
export function selectWritten(statement: Sql, returning: readonly Column[], many: boolean, maxBytes?: number): Sql {
  const returned = returning.length ? join(returning.map((c) => sql`_t.${ident(c.name)}`)) : sql`NULL`;
  const projected = join(returning.map((c) => sql`_w.${ident(c.name)}`));
  const data = many ? sql`coalesce(json_agg(_p.*), '[]')::text` : sql`(json_agg(_p.*) -> 0)::text`;
  const written = sql`WITH _w AS (${statement} RETURNING ${returned})`;
  const rows = sql`SELECT ${data}, count(*)::text FROM _w CROSS JOIN LATERAL (SELECT ${projected}) AS _p`;
  if (maxBytes === undefined) return sql`${written} ${rows}`;
  // The representation's size is checked where it is built (size-checked.ts); the aggregate
  // subquery is evaluated once, whatever names its column twice.
  return sql`${written} SELECT ${sizeChecked(sql`_o.d`, maxBytes)}, _o.n FROM (${rows}) AS _o(d, n)`;
}
