import type { ExplainCommand } from '../../command/command';
import type { Sql } from '../../sql/sql';

/** ExplainCommand -> SQL. */
export function compileExplain(_command: ExplainCommand): Sql {
  throw new Error('compileExplain is not implemented yet');
}
