import type { InsertCommand } from '../../command/command';
import type { Sql } from '../../sql/sql';

/** InsertCommand -> SQL. */
export function compileInsert(_command: InsertCommand): Sql {
  throw new Error('compileInsert is not implemented yet');
}
