/**
 * InsertCommand -> one INSERT statement, whatever the batch size (one round trip), returning one
 * row: the written rows as JSON text built by PostgreSQL, and how many there were.
 *
 *   WITH _w AS (INSERT INTO t AS _t (a, b)
 *               SELECT _r.a, _r.b FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS _e(v, n)
 *               CROSS JOIN LATERAL jsonb_populate_record(NULL::t, _e.v) AS _r ORDER BY _e.n
 *               [ON CONFLICT (k) DO UPDATE SET a = EXCLUDED.a | DO NOTHING]
 *               RETURNING _t.c1, _t.c2)
 *   SELECT coalesce(json_agg(_p.*), '[]')::text, count(*)::text FROM _w CROSS JOIN LATERAL (SELECT _w.c1, _w.c2) AS _p
 *
 * The body is bound once, as text cast to jsonb: PostgreSQL parses the numbers itself, so a
 * bigint above 2^53 or a numeric(30,10) is stored exactly (JS numbers would round them). jsonb
 * keeps the last of duplicate keys, as JSON.parse did when parse checked the keys. Rows are
 * inserted in body order (ORDER BY ordinality), and RETURNING yields them in that order.
 * Keys missing from one row of a batch insert NULL; columns missing from every row get their
 * default (they are not in the column list). Never: a value outside a `$n` parameter.
 *
 * `prefix` (batches only) inserts just the first `prefix` rows of the same body: the probe the
 * execute stage uses, after a batch failed in PostgreSQL, to find which row failed.
 */
import type { InsertCommand } from '../../command/command';
import { empty, ident, join, sql, type Sql } from '../../sql/sql';
import { selectWritten } from './select-written';

/** `maxBytes`: the bound on the representation (size-checked.ts); the batch probe's prefix INSERTs need none. */
export function compileInsert(command: InsertCommand, prefix?: number, maxBytes?: number): Sql {
  return selectWritten(insertStatement(command, prefix), command.returning, command.batch, maxBytes);
}

/** The INSERT itself, without RETURNING (a write with answer options reads the written rows back its own way). */
export function insertStatement(command: InsertCommand, prefix?: number): Sql {
  const { table, columns, onConflict } = command;
  const target = ident(table.schema, table.name);
  const elements =
    prefix === undefined
      ? sql`jsonb_array_elements(${command.body}::jsonb) WITH ORDINALITY AS _e(v, n)`
      : sql`(SELECT * FROM jsonb_array_elements(${command.body}::jsonb) WITH ORDINALITY AS _a(v, n) WHERE _a.n <= ${prefix}::bigint) AS _e`;
  const source = command.batch
    ? sql`${elements} CROSS JOIN LATERAL jsonb_populate_record(NULL::${target}, _e.v) AS _r`
    : sql`jsonb_populate_record(NULL::${target}, ${command.body}::jsonb) AS _r`;
  const order = command.batch ? sql` ORDER BY _e.n` : empty;
  // With no column named at all (`{}`), every column takes its default: no column list.
  const list = columns.length ? sql` (${join(columns.map((c) => ident(c.name)))})` : empty;
  const values = join(columns.map((c) => sql`_r.${ident(c.name)}`));
  let conflict = empty;
  if (onConflict) {
    const keys = join(onConflict.columns.map((c) => ident(c.name)));
    if (onConflict.action === 'ignore') conflict = sql` ON CONFLICT (${keys}) DO NOTHING`;
    else {
      // Only the provided non-conflict columns change. With none, the key is set to itself so the
      // existing row is still "updated": RLS checks it (an invisible row fails with 42501 instead
      // of being skipped) and RETURNING reports it.
      const changed = columns.filter((c) => !onConflict.columns.includes(c));
      const set = (changed.length ? changed : onConflict.columns.slice(0, 1)).map((c) => sql`${ident(c.name)} = EXCLUDED.${ident(c.name)}`);
      conflict = sql` ON CONFLICT (${keys}) DO UPDATE SET ${join(set)}`;
    }
  }
  // `Prefer: missing=default`: one VALUES row per body row, DEFAULT where the row lacks the key.
  if (command.missingDefault === true && prefix === undefined) return sql`INSERT INTO ${target} AS _t${list} VALUES ${join(command.rows.map((row) => valuesRow(command, row)))}${conflict}`;
  return sql`INSERT INTO ${target} AS _t${list} SELECT ${values} FROM ${source}${order}${conflict}`;
}

function valuesRow(command: InsertCommand, row: Readonly<Record<string, string>>): Sql {
  const { table } = command;
  const text = `{${Object.entries(row).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
  const record = sql`jsonb_populate_record(NULL::${ident(table.schema, table.name)}, ${text}::jsonb)`;
  return sql`(${join(command.columns.map((c) => (Object.hasOwn(row, c.name) ? givenValue(table, c, sql`(${record}).${ident(c.name)}`) : sql`DEFAULT`)))})`;
}

/**
 * A value the row gives for a column that has a default. When that default draws from a sequence
 * (serial or identity BY DEFAULT: the column's own sequence, pg_get_serial_sequence), the row still draws one value and
 * drops it: rows get the same ids as when every row's defaults are computed first and the given
 * values win, as clients of `missing=default` expect them (docs/postgrest-dialect.md, "Writes").
 * A default of another kind costs nothing here; an identity ALWAYS column takes no given value.
 */
function givenValue(table: InsertCommand['table'], column: InsertCommand['columns'][number], value: Sql): Sql {
  if (!column.hasDefault || column.identity === 'a') return value;
  const sequence = sql`pg_catalog.pg_get_serial_sequence(pg_catalog.format('%I.%I', ${table.schema}::text, ${table.name}::text), ${column.name}::text)::regclass`;
  // Only a caller allowed to draw from it does: the INSERT's own default needs no privilege on
  // the sequence, an explicit nextval does (CASE tries its branches in order).
  return sql`CASE WHEN NOT pg_catalog.has_sequence_privilege(${sequence}, 'USAGE, UPDATE') THEN ${value} WHEN pg_catalog.nextval(${sequence}) IS NULL THEN ${value} ELSE ${value} END`;
}
