/**
 * AggregateCommand -> one row holding `{"fn":..,"column":..,"value":..}` as JSON text, built by
 * PostgreSQL so a numeric sum keeps every digit (never a JavaScript float on the way).
 * Never: puts the function or column name anywhere but a bound parameter or a quoted identifier;
 * the function keyword itself comes from the fixed table below, written in our source.
 */
import type { AggregateCommand, AggregateFn } from '../../command/command';
import { ident, sql, type Sql } from '../../sql/sql';
import { compileConditions } from './compile-where';
import { whereClause } from './compile-list';

const t = sql`_t`;

const functions: Record<Exclude<AggregateFn, 'count'>, Sql> = { sum: sql`sum`, avg: sql`avg`, min: sql`min`, max: sql`max` };

export function compileAggregate(command: AggregateCommand, searchConfig: string | undefined): Sql {
  const { table } = command;
  const from = sql`FROM ${ident(table.schema, table.name)} AS _t${whereClause(compileConditions(t, command, searchConfig))}`;
  if (command.fn === 'count' || command.column === null) {
    return sql`SELECT json_build_object('fn', 'count', 'value', count(*))::text ${from}`;
  }
  const value = sql`${functions[command.fn]}(${t}.${ident(command.column.name)})`;
  return sql`SELECT json_build_object('fn', ${command.fn}::text, 'column', ${command.column.name}::text, 'value', ${value})::text ${from}`;
}
