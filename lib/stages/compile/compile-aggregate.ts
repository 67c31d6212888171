import type { AggregateCommand } from '../../command/command';
import type { Sql } from '../../sql/sql';

/** AggregateCommand -> SQL. */
export function compileAggregate(_command: AggregateCommand): Sql {
  throw new Error('compileAggregate is not implemented yet');
}
