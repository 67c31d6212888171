/**
 * RpcCommand -> one statement calling the function.
 *
 * The argument values arrive as one JSON object (one parameter) and become typed values through
 * `jsonb_to_record(...) AS a(<key> <declared type>, ...)`: PostgreSQL's own JSON-to-type
 * conversion, the one the write routes use (arrays from JSON arrays, composites from objects,
 * every scalar through its input function), and the declared types pin the overload that parse
 * chose. The call is schema-qualified, so search_path plays no part.
 *
 * The result is built as JSON by PostgreSQL (contract §3): an array for a set, an object for a
 * row, the bare value for a scalar, null for void.
 */
import type { RpcCommand } from '../../command/command';
import { catalogType, empty, ident, join, sql, type Sql } from '../../sql/sql';

export function compileRpc(command: RpcCommand): Sql {
  const { fn } = command;
  const call = sql`${ident(fn.schema, fn.name)}(${join(command.args.map(({ arg, key }) => argument(command, arg.name, arg.variadic, key)))})`;
  const source = argumentSource(command);
  const from = source === null ? empty : sql` FROM ${source}`;
  const lateral = (item: Sql): Sql => (source === null ? sql` FROM ${item}` : sql` FROM ${source} CROSS JOIN LATERAL ${item}`);
  switch (fn.returns) {
    case 'void':
      return sql`SELECT (${call})::text${from}`;
    case 'scalar':
      return fn.returnsSet ? sql`SELECT coalesce(json_agg(r.v), '[]')::text${lateral(sql`${call} AS r(v)`)}` : sql`SELECT to_json(${call})::text${from}`;
    case 'row':
      return fn.returnsSet
        ? sql`SELECT coalesce(json_agg(r), '[]')::text${lateral(sql`(SELECT * FROM ${call}) AS r`)}`
        : sql`SELECT to_json(r)::text${lateral(sql`(SELECT * FROM ${call}) AS r`)}`;
  }
}

/** `jsonb_to_record($1::jsonb) AS a("key" type, ...)`, or null for a call without arguments. */
export function argumentSource(command: RpcCommand): Sql | null {
  if (command.args.length === 0) return null;
  const columns = command.args.map(({ arg, key }) => sql`${ident(key)} ${catalogType(arg.type)}`);
  return sql`jsonb_to_record(${command.values}::jsonb) AS a(${join(columns)})`;
}

/** `name => a."name"` or `a."1"`; a VARIADIC argument passes its array, marked VARIADIC. */
export function argument(command: RpcCommand, name: string, variadic: boolean, key: string): Sql {
  const marker = variadic ? sql`VARIADIC ` : empty;
  return command.notation === 'named' ? sql`${marker}${ident(name)} => a.${ident(key)}` : sql`${marker}a.${ident(key)}`;
}
