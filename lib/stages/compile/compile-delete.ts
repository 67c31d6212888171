import type { DeleteCommand } from '../../command/command';
import type { Sql } from '../../sql/sql';

/** DeleteCommand -> SQL. */
export function compileDelete(_command: DeleteCommand): Sql {
  throw new Error('compileDelete is not implemented yet');
}
