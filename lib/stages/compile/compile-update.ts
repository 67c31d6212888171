/**
 * UpdateCommand -> one UPDATE of the row with the key, returning its JSON and the count (0: no
 * visible row, 404). The body is bound once as jsonb and expanded with jsonb_populate_record,
 * so values are converted by PostgreSQL from the caller's exact text:
 *
 *   WITH _w AS (UPDATE t AS _t SET a = _r.a, b = _r.b FROM jsonb_populate_record(NULL::t, $1::jsonb) AS _r
 *               WHERE _t.k = $2 RETURNING _t.c1) SELECT ...
 *
 * RLS: the USING policy hides other tenants' rows (count 0 -> 404, row untouched); WITH CHECK
 * refuses a change that would move the row out of the caller's tenant (42501 -> 403).
 */
import type { UpdateCommand } from '../../command/command';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { compileBulkUpdate } from './compile-bulk-update';
import { compileKeyed } from './compile-where';
import { selectWritten } from './select-written';

export function compileUpdate(command: UpdateCommand, maxBytes?: number): Sql {
  // A bulk update: every row in one statement (compile-bulk-update.ts).
  if (command.rows) return compileBulkUpdate(command, command.rows, maxBytes);
  const { table } = command;
  const target = ident(table.schema, table.name);
  const set = join(command.columns.map((c) => sql`${ident(c.name)} = _r.${ident(c.name)}`));
  const key = compileKeyed(sql`_t`, command.key, command.rowFilters);
  const statement = sql`UPDATE ${target} AS _t SET ${set} FROM jsonb_populate_record(NULL::${target}, ${command.body}::jsonb) AS _r WHERE ${key}`;
  return selectWritten(statement, command.returning, false, maxBytes);
}
