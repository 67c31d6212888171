import type { GetCommand } from '../../command/command';
import { ident, join, sql, type Sql } from '../../sql/sql';

/** GetCommand -> zero or one row holding the row's JSON text. */
export function compileGet(command: GetCommand): Sql {
  const { table } = command;
  const selected = join(command.select.map((c) => sql`_t.${ident(c.name)}`));
  const key = join(command.key.map(({ column, value }) => sql`_t.${ident(column.name)} = ${value}`), sql` AND `);
  return sql`SELECT to_json(_r)::text FROM ${ident(table.schema, table.name)} AS _t CROSS JOIN LATERAL (SELECT ${selected}) AS _r WHERE ${key}`;
}
