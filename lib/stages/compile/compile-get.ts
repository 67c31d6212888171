import type { GetCommand } from '../../command/command';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { expansionColumns } from './compile-expand';
import { compileKeyed } from './compile-where';

const t = sql`_t`;

/**
 * A list that addresses one row by its key (GetCommand) -> zero or one row holding the row's JSON text, expansions included (one statement).
 * `to_json(_r.*)`, not `to_json(_r)`: a bare `_r` would be a column `_r` of the table, if it has
 * one (docs/architecture.md, "Names the compiler writes").
 */
export function compileGet(command: Pick<GetCommand, 'table' | 'select' | 'key' | 'expand' | 'rowFilters'>): Sql {
  const { table } = command;
  const selected = join([...command.select.map((c) => sql`${t}.${ident(c.name)}`), ...expansionColumns(t, command.expand)]);
  const key = compileKeyed(t, command.key, command.rowFilters);
  return sql`SELECT to_json(_r.*)::text FROM ${ident(table.schema, table.name)} AS _t CROSS JOIN LATERAL (SELECT ${selected}) AS _r WHERE ${key}`;
}
