/**
 * A bulk update (UpdateCommand with `rows`, docs/writing.md "Bulk updates") -> ONE UPDATE of
 * every row by its key, each row setting its own columns to its own values. The rows are bound
 * once as a jsonb array of `{"k": {key column: key text}, "v": <the row's body as received>}`:
 *
 *   WITH _b AS (SELECT e, i FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS _x(e, i)),
 *   _w(o, d) AS (UPDATE t AS _t SET a = CASE WHEN (_b.e -> 'v') ? 'a' THEN _r.a ELSE _t.a END, ...
 *                FROM _b CROSS JOIN LATERAL jsonb_populate_record(NULL::t, _b.e -> 'v') AS _r
 *                WHERE _t.k = (_b.e -> 'k' ->> 'k')::<key type> AND <row conditions>
 *                RETURNING _b.i, <the returned columns' JSON>),
 *   _u(dup) AS (SELECT count(DISTINCT <key>) < count(*) FROM _b)
 *   SELECT _w.d, '1', (_w.o - 1)::text, _u.dup::text FROM _w CROSS JOIN _u ORDER BY _w.o
 *
 * (`_w.d` size-checked over all the rows, as a single write's representation is: sizeChecked below.)
 *
 * `_b` is named twice, so PostgreSQL computes it once (a CTE referenced more than once is
 * materialized). Values are converted by PostgreSQL from the caller's exact text with the table's own column
 * types (jsonb_populate_record), as the single update does; a column a row does not name keeps
 * its value in that row (the "was given" test `?`). Key values are compared as the single update
 * compares them (cast to the column's type without its modifier). Names come from the schema
 * cache only; column names in the `?` tests are bound values.
 *
 * RLS: a row the caller cannot see is not updated and answers no row (the gateway fails the
 * whole request with 404, or skips it with `Prefer: missing=ignore`); WITH CHECK refuses the
 * statement (42501), so nothing is written. Two rows with the same key would update the row once
 * (PostgreSQL picks one source row): `dup` says so, and the gateway then runs the rows one by one.
 */
import type { Column } from '../../schema/schema-types';
import type { KeyedChange, UpdateCommand } from '../../command/command';
import { catalogType, ident, integerLiteral, join, sql, type Sql } from '../../sql/sql';
import { responseSizeMarker } from '../../errors/response-too-large';
import { compileCondition } from './compile-condition';
import { compare } from './comparison-operator';

export function compileBulkUpdate(command: UpdateCommand, rows: readonly KeyedChange[], maxBytes?: number): Sql {
  const { table } = command;
  const target = ident(table.schema, table.name);
  const set = join(command.columns.map((c) => sql`${ident(c.name)} = ${setValue(c, rows)}`));
  const keyColumns = rows[0]!.key.map((k) => k.column);
  const where = join(
    [...keyColumns.map((c) => compare(c, sql`_t.${ident(c.name)}`, '=', keyValue(c, target), 'key')), ...(command.rowFilters ?? []).map((c) => compileCondition(c, sql`_t`, new Map()))],
    sql` AND `,
  );
  const returned = sql`(SELECT to_json(_p.*) FROM (SELECT ${join(command.returning.map((c) => sql`_t.${ident(c.name)}`))}) AS _p)::text`;
  const distinctKey = keyColumns.length === 1 ? keyValue(keyColumns[0]!, target) : sql`(${join(keyColumns.map((c) => keyValue(c, target)))})`;
  return sql`WITH _b AS (SELECT _x.e, _x.i FROM jsonb_array_elements(${bodyOf(rows)}::jsonb) WITH ORDINALITY AS _x(e, i)), _w(o, d) AS (UPDATE ${target} AS _t SET ${set} FROM _b CROSS JOIN LATERAL jsonb_populate_record(NULL::${target}, _b.e -> 'v') AS _r WHERE ${where} RETURNING _b.i, ${returned}), _u(dup) AS (SELECT count(DISTINCT ${distinctKey}) < count(*) FROM _b) SELECT ${maxBytes === undefined ? sql`_w.d` : sizeChecked(maxBytes)}, '1', (_w.o - 1)::text, _u.dup::text FROM _w CROSS JOIN _u ORDER BY _w.o`;
}

/**
 * The rows' JSON, or the statement's failure when all of them together are over `max_response_bytes`
 * (size-checked.ts): the written rows are rolled back and never reach the gateway.
 */
function sizeChecked(maxBytes: number): Sql {
  const total = sql`sum(octet_length(_w.d)) OVER ()`;
  return sql`CASE WHEN ${total} > ${integerLiteral(maxBytes)} THEN pg_catalog.int4in((${responseSizeMarker}::text || ':' || ${total})::cstring)::text ELSE _w.d END`;
}

/** The new value: the row's own, or (when some row does not name the column) the old one for the rows that do not. */
function setValue(column: Column, rows: readonly KeyedChange[]): Sql {
  const value = sql`_r.${ident(column.name)}`;
  if (rows.every((r) => r.columns.includes(column))) return value;
  return sql`CASE WHEN (_b.e -> 'v') ? ${column.name} THEN ${value} ELSE _t.${ident(column.name)} END`;
}

/** A key value of the current row, cast as typed-value.ts casts the single update's key. */
function keyValue(column: Column, target: Sql): Sql {
  if (column.compareType !== null) return sql`(_b.e -> 'k' ->> ${column.name})::${catalogType(column.compareType)}`;
  // A type the gateway's role may not name: converted with the table's own column type instead.
  return sql`(jsonb_populate_record(NULL::${target}, _b.e -> 'k')).${ident(column.name)}`;
}

/** The rows as one JSON array text: the key texts as JSON strings, each body as it was received. */
function bodyOf(rows: readonly KeyedChange[]): string {
  return `[${rows.map((r) => `{"k":{${r.key.map((k) => `${JSON.stringify(k.column.name)}:${JSON.stringify(k.value)}`).join(',')}},"v":${r.body}}`).join(',')}]`;
}
