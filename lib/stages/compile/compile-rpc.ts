/**
 * RpcCommand -> one statement calling the function.
 *
 * The argument values arrive as one JSON object (one parameter) and become typed values through
 * `jsonb_to_record(...) AS a(<key> <declared type>, ...)`: PostgreSQL's own JSON-to-type
 * conversion, the one the write routes use (arrays from JSON arrays, composites from objects,
 * every scalar through its input function), and the declared types pin the overload that parse
 * chose. The call is schema-qualified, so search_path plays no part in finding the function; inside
 * it, unqualified names resolve through the request's search_path (docs/rpc.md).
 *
 * Text results (the default) are built as JSON by PostgreSQL (docs/rpc.md, "The response"): an
 * array for a set, an object for a row, the bare value for a scalar, null for void. Binary results
 * (`x-gw-result-format: binary`) are the function's own columns in binary format, decoded and
 * rendered by the default door (lib/doors/rest/respond/render-rpc.ts); a column of a type the decoder does not know is
 * sent as to_json(column) instead, and the session TimeZone comes last, for timestamptz.
 * The rows of a set are `r.*` and columns `r."name"`, `a."key"`: a function may return a column
 * named `r` (docs/architecture.md, "Names the compiler writes").
 */
import type { ReadCommand, RpcCommand } from '../../command/command';
import { isBinaryDecodable } from '../../db/binary/binary-to-json';
import { maxAffectedMarker } from '../../errors/statement-markers';
import { catalogType, empty, ident, join, sql, type Sql } from '../../sql/sql';
import { compileCountEstimate, compileRead } from './compile-read';

export function compileRpc(command: RpcCommand): Sql {
  const { fn } = command;
  if (command.resultFormat === 'binary' && fn.returns !== 'void') return compileBinary(command);
  const call = callOf(command);
  const from = fromClause(command);
  // The value as it is (docs/postgrest-dialect.md, "Functions"): bytea as hex (rendering sends its
  // bytes: hex whatever the session's bytea_output), a text type as its text.
  const raw = command.answer?.raw;
  if (raw) return raw.bytes ? sql`SELECT encode(${call}, 'hex')${from()}` : sql`SELECT (${call})::text${from()}`;
  switch (fn.returns) {
    case 'void':
      return sql`SELECT (${call})::text${from()}`;
    case 'scalar':
      return fn.returnsSet ? sql`SELECT coalesce(json_agg(r.v), '[]')::text${from(sql`${call} AS r(v)`)}` : sql`SELECT to_json(${call})::text${from()}`;
    // A single row is converted in the select list: a function that returns no row (NULL) is
    // null there, where `FROM fn()` would give a row whose every column is null.
    case 'row':
      return fn.returnsSet ? sql`SELECT coalesce(json_agg(r.*), '[]')::text${from(sql`(SELECT * FROM ${call}) AS r`)}` : sql`SELECT to_json(${call})::text${from()}`;
  }
}

function compileBinary(command: RpcCommand): Sql {
  const { fn } = command;
  const call = callOf(command);
  const from = fromClause(command);
  const zone = sql`current_setting('TimeZone')`;
  // A single row: its JSON, in binary (json's binary form is its text), so that NULL stays null.
  if (fn.returns === 'row' && !fn.returnsSet) return sql`SELECT to_json(${call}), ${zone}${from()}`;
  if (fn.returns === 'row') {
    const columns = fn.resultColumns.map((c) => decodable(sql`r.${ident(c.name)}`, c.typeOid));
    return sql`SELECT ${join([...columns, zone])}${from(sql`(SELECT * FROM ${call}) AS r`)}`;
  }
  return fn.returnsSet ? sql`SELECT ${decodable(sql`r.v`, fn.returnTypeOid)}, ${zone}${from(sql`${call} AS r(v)`)}` : sql`SELECT ${decodable(call, fn.returnTypeOid)}, ${zone}${from()}`;
}

/** ` FROM <arguments> [CROSS JOIN LATERAL <item>]`, or ` FROM <item>` / nothing for a call without arguments. */
function fromClause(command: RpcCommand): (item?: Sql) => Sql {
  const source = argumentSource(command);
  return (item) => {
    if (item === undefined) return source === null ? empty : sql` FROM ${source}`;
    return source === null ? sql` FROM ${item}` : sql` FROM ${source} CROSS JOIN LATERAL ${item}`;
  };
}

/** The value itself when the gateway decodes its type from binary, else PostgreSQL's JSON of it. */
function decodable(value: Sql, typeOid: number): Sql {
  return isBinaryDecodable(typeOid) ? value : sql`to_json(${value})`;
}

/**
 * A call whose rows are read like a table's (`answer.read`): the read (select, filters,
 * order, page, embeds) over `fn(args) AS _n0`, as over a table (docs/postgrest-dialect.md, "Functions").
 */
export function compileRpcRead(command: RpcCommand, read: ReadCommand, estimateCap?: number): Sql {
  const statement = compileRead(read, rowsOfCall(command), estimateCap);
  const body = valueBody(command, read);
  return body === null ? statement : sql`SELECT ${body}, _q.n, _q.t FROM (${statement}) AS _q(b, n, t)`;
}

/**
 * The JSON body of a read over a call that does not return a set of rows, from the read's body
 * `_q.b` (an array of row objects, or the one object; docs/postgrest-dialect.md, "Functions"): a
 * single row is the first object or null; a scalar's value is the key `pgrst_scalar` of its
 * object (the one column of its rows, parse checked the select), a set of them the array of those
 * values. Null: the body as the read built it (a set of rows; CSV, whose header is
 * `pgrst_scalar`; the singular object of a set of scalars).
 */
function valueBody(command: RpcCommand, read: ReadCommand): Sql | null {
  const { fn } = command;
  if (fn.returns === 'row' && fn.returnsSet) return null;
  const media = read.media === 'plan' ? (read.plan?.for ?? 'json') : read.media;
  const scalar = fn.returns === 'scalar';
  if (media === 'json') {
    if (fn.returnsSet) return sql`(SELECT coalesce(json_agg(e.v -> 'pgrst_scalar' ORDER BY e.i), '[]') FROM json_array_elements(_q.b::json) WITH ORDINALITY AS e(v, i))::text`;
    return scalar ? sql`coalesce(_q.b::json -> 0 -> 'pgrst_scalar', 'null')::text` : sql`coalesce(_q.b::json -> 0, 'null')::text`;
  }
  if (media === 'object' && !fn.returnsSet) return scalar ? sql`coalesce(_q.b::json -> 'pgrst_scalar', 'null')::text` : sql`coalesce(_q.b, 'null')`;
  return null;
}

/** `count=planned|estimated` of such a call: the planner's estimate of its rows, as for a table. */
export function compileRpcCountEstimate(command: RpcCommand, read: ReadCommand): Sql {
  return compileCountEstimate(read, rowsOfCall(command));
}

/**
 * A call's statement (compileRpc's text result, or compileRpcRead's body, count, total) with the
 * call's `answer.maxAffected` check (docs/postgrest-dialect.md, "Functions"): more rows than
 * allowed and the statement fails with `maxAffectedMarker` and the count, so the call's
 * transaction, and what the function wrote, rolls back. The count: the rows of the
 * answered read of a set of rows (after filters and limit), the elements of any other set's
 * array, 1 for a function returning one value (or void). The check sits in a column the caller
 * reads, never in one a wrapper could drop unevaluated. A plan (EXPLAIN) and a binary result are
 * left as they are: the function does not run, or no door asks.
 */
export function maxAffectedChecked(command: RpcCommand, statement: Sql): Sql {
  const max = command.answer?.maxAffected;
  if (max === undefined || command.resultFormat === 'binary') return statement;
  const fail = (count: Sql): Sql => sql`pg_catalog.int4in((${maxAffectedMarker}::text || ':' || ${count})::cstring)::text`;
  const read = command.answer?.read;
  if (read) {
    if (read.media === 'plan') return statement;
    // A function returning one value counts 1, whatever its filters left (as without a read).
    const n = command.fn.returnsSet ? sql`_q.n` : sql`(_q.n::bigint * 0 + 1)`;
    return sql`SELECT _q.b, CASE WHEN ${n}::bigint > ${max}::bigint THEN ${fail(n)} ELSE _q.n END, _q.t FROM (${statement}) AS _q(b, n, t)`;
  }
  const { fn } = command;
  // One value: the count is 1, written so that it is not a constant the planner would fold (and raise) whatever the limit.
  const count = fn.returnsSet && fn.returns !== 'void' ? sql`json_array_length(_q.v::json)::bigint` : sql`(coalesce(octet_length(_q.v), 0) * 0 + 1)::bigint`;
  return sql`SELECT CASE WHEN ${count} > ${max}::bigint THEN ${fail(count)} ELSE _q.v END FROM (${statement}) AS _q(v)`;
}

/** `fn(args) AS <alias>`; a scalar's one column named `pgrst_scalar` (parse's table of it). */
function rowsOfCall(command: RpcCommand): (alias: Sql) => Sql {
  const source = argumentSource(command);
  const call = callOf(command);
  const columns = command.fn.returns === 'scalar' ? sql`(pgrst_scalar)` : empty;
  return (alias) => (source === null ? sql`${call} AS ${alias}${columns}` : sql`${source} CROSS JOIN LATERAL ${call} AS ${alias}${columns}`);
}

function callOf(command: RpcCommand): Sql {
  const { fn } = command;
  return sql`${ident(fn.schema, fn.name)}(${join(command.args.map(({ arg, key }) => argument(command, arg.name, arg.variadic, key)))})`;
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
