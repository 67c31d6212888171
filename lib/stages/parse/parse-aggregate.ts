import type { AggregateCommand } from '../../command/command';
import type { Table } from '../../schema/schema-types';
import { notYet } from './not-yet';

/** `GET /{table}/aggregate?fn=&column=&<filters>` -> AggregateCommand. */
export function parseAggregate(_table: Table, _query: readonly (readonly [string, string])[]): AggregateCommand {
  return notYet('GET /{table}/aggregate');
}
