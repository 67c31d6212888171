import type { UpdateCommand } from '../../command/command';
import type { Sql } from '../../sql/sql';

/** UpdateCommand -> SQL. */
export function compileUpdate(_command: UpdateCommand): Sql {
  throw new Error('compileUpdate is not implemented yet');
}
