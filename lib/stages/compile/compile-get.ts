import type { GetCommand } from '../../command/command';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { flatColumns } from './compile-expand';
import { compileKeyed } from './compile-where';

const t = sql`_t`;

/**
 * A read that addresses one row by its key (GetCommand) -> zero or one row holding the row's JSON text, expansions included (one statement).
 * `to_json(_r.*)`, not `to_json(_r)`: a bare `_r` would be a column `_r` of the table, if it has
 * one (docs/architecture.md, "Names the compiler writes").
 */
export function compileGet(command: Pick<GetCommand, 'table' | 'root' | 'key'>): Sql {
  const { table, root } = command;
  const selected = join(flatColumns(t, root.items));
  const key = compileKeyed(t, command.key, root.rowFilters);
  return sql`SELECT to_json(_r.*)::text FROM ${ident(table.schema, table.name)} AS _t CROSS JOIN LATERAL (SELECT ${selected}) AS _r WHERE ${key}`;
}
