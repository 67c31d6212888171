/**
 * An export's statement (docs/querying.md, "Exports"): the rows of the list command, in the same
 * order, with the same filters, policy conditions, cursor and expansions as a page
 * (listSource in compile-list.ts), one result row per row instead of one aggregated row:
 *   csv: the selected columns (then the expansions' JSON) themselves, as PostgreSQL's text
 *        rendering; lib/doors/rest/respond/write-export.ts quotes them. Building the CSV line in SQL instead
 *        cost PostgreSQL about twice what the rows alone do, and PostgreSQL bounds an export
 *        (bench/export.js, docs/performance.md#exports).
 *   json, ndjson: the same columns, each as the text its JSON value follows from exactly
 *        (jsonColumns): integers, finite numbers, booleans, strings and json as their own text,
 *        every other type as `to_json(<column>)::text`; lib/doors/rest/respond/write-export.ts joins them into
 *        the row's object, byte for byte PostgreSQL's `to_json` of the row, as in a page's
 *        `data` (__tests__/integration/export-json-text.test.ts compares them). `to_json` of
 *        the whole row in SQL made PostgreSQL's work three times COPY's.
 * Never: puts a value anywhere but a bound parameter (the statement runs in a cursor declared
 * with the same parameters), or names an alias bare (docs/architecture.md, "Names the compiler
 * writes").
 */
import type { ExportFormat, ReadCommand, SelectItem } from '../../command/command';
import type { JsonText } from '../../pipeline/plan';
import type { Column } from '../../schema/schema-types';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { compileExpansion, plainColumn } from './compile-expand';
import { listSource } from './compile-list';

export function compileExport(command: ReadCommand, format: ExportFormat, searchConfig: string | undefined): Sql {
  const { rows, pageClause, columns, row } = listSource(command, searchConfig);
  if (format === 'csv') return sql`SELECT ${columns} FROM ${rows}${pageClause}`;
  const values = command.root.items.map((i) => {
    if (i.kind === 'embed') return sql`${compileExpansion(row, i.embed)} AS ${ident(i.embed.key)}`;
    const c = plainColumn(i);
    return jsonTextOf(c) === undefined ? sql`to_json(${row}.${ident(c.name)})::text` : sql`${row}.${ident(c.name)}`;
  });
  return sql`SELECT ${join(values)} FROM ${rows}${pageClause}`;
}

/**
 * For each JSON or NDJSON column (shape `json`): how write-export turns its text into its JSON
 * value. A column of a type not in jsonTexts is `to_json(<column>)::text` already (raw), and so
 * is an expansion (json).
 */
export function jsonColumns(command: ReadCommand): readonly JsonText[] {
  return Object.freeze(command.root.items.map((i): JsonText => (i.kind === 'field' ? (jsonTextOf(i.field.column) ?? 'raw') : 'raw')));
}

/**
 * The types whose JSON (PostgreSQL's to_json) follows exactly from their text, by type OID:
 * int2, int4, int8 are JSON numbers as they are; float4, float8 and numeric too, except NaN and
 * the infinities, which to_json makes strings; bool's t and f are true and false; text, varchar,
 * bpchar and name are escaped strings, uuid a string needing no escape; json and jsonb are
 * their own text. Not oid, money, dates and times (to_json writes ISO 8601), nor domains, enums,
 * arrays, ranges or composites: PostgreSQL renders those.
 */
const jsonTexts: ReadonlyMap<number, JsonText> = new Map<number, JsonText>([
  [21, 'raw'],
  [23, 'raw'],
  [20, 'raw'],
  [700, 'number'],
  [701, 'number'],
  [1700, 'number'],
  [16, 'bool'],
  [25, 'string'],
  [1043, 'string'],
  [1042, 'string'],
  [19, 'string'],
  [2950, 'plainString'],
  [114, 'raw'],
  [3802, 'raw'],
]);

function jsonTextOf(column: Column): JsonText | undefined {
  return jsonTexts.get(column.typeOid);
}

/** The names of an export's columns, in order: the CSV header line (selected columns, then expansions). */
export function exportColumns(command: ReadCommand): readonly string[] {
  return Object.freeze(command.root.items.map((i) => keyOf(i)));
}

function keyOf(item: SelectItem): string {
  return item.kind === 'embed' ? item.embed.key : item.key;
}

/**
 * For each CSV column: true when its type's text never holds a comma, a quote, CR or LF in any
 * DateStyle or IntervalStyle, so it is written without the quoting test. Not every numeric type:
 * `money` renders `$1,000.00`. int2, int4, int8, oid, float4, float8, numeric, bool, date, time,
 * timetz, timestamp, timestamptz, interval, uuid; an expansion's JSON is never plain.
 */
export function plainColumns(command: ReadCommand): readonly boolean[] {
  return Object.freeze(command.root.items.map((i) => i.kind === 'field' && isPlain(i.field.column)));
}

const plainTypeOids: ReadonlySet<number> = new Set([21, 23, 20, 26, 700, 701, 1700, 16, 1082, 1083, 1266, 1114, 1184, 1186, 2950]);

function isPlain(column: Column): boolean {
  return plainTypeOids.has(column.typeOid);
}
