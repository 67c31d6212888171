/**
 * DeleteCommand -> one DELETE of the row with the key, returning the count (0: no visible row,
 * 404) and, only when the caller asked with `returning`, the deleted row's JSON. Without
 * `returning` no column is read (the response is 204).
 */
import type { DeleteCommand } from '../../command/command';
import { ident, sql, type Sql } from '../../sql/sql';
import { compileKeyed } from './compile-where';
import { selectWritten } from './select-written';

export function compileDelete(command: DeleteCommand, maxBytes?: number): Sql {
  const { table } = command;
  const key = compileKeyed(sql`_t`, command.key, command.rowFilters);
  const statement = sql`DELETE FROM ${ident(table.schema, table.name)} AS _t WHERE ${key}`;
  return selectWritten(statement, command.explicitReturning ? command.returning : [], false, maxBytes);
}
