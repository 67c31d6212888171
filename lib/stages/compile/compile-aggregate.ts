/**
 * A read answered with its aggregate (`aggregate` set) -> one row holding `{"fn":..,"column":..,"value":..}` as JSON text, built by
 * PostgreSQL so a numeric sum keeps every digit (never a JavaScript float on the way).
 * Never: puts the function or column name anywhere but a bound parameter or a quoted identifier;
 * the function keyword itself comes from the fixed table below, written in our source.
 */
import type { AggregateFn, AggregateList } from '../../command/command';
import { ident, sql, type Sql } from '../../sql/sql';
import { compileConditions } from './compile-where';
import { whereClause } from './compile-list';

const t = sql`_t`;

const functions: Record<Exclude<AggregateFn, 'count'>, Sql> = { sum: sql`sum`, avg: sql`avg`, min: sql`min`, max: sql`max` };

export function compileAggregate(command: AggregateList, searchConfig: string | undefined): Sql {
  const { table } = command;
  const { fn, column } = command.aggregate;
  const from = sql`FROM ${ident(table.schema, table.name)} AS _t${whereClause(compileConditions(t, command, searchConfig))}`;
  if (fn === 'count' || column === null) {
    return sql`SELECT json_build_object('fn', 'count', 'value', count(*))::text ${from}`;
  }
  const value = sql`${functions[fn]}(${t}.${ident(column.name)})`;
  return sql`SELECT json_build_object('fn', ${fn}::text, 'column', ${column.name}::text, 'value', ${value})::text ${from}`;
}
