/**
 * An export's statement (docs/querying.md, "Exports"): the rows of the list command, in the same
 * order, with the same filters, policy conditions, cursor and expansions as a page
 * (listSource in compile-list.ts), but one text column per row instead of one aggregated row:
 *   json, ndjson: `to_json(_p.*)::text`, the row exactly as it appears in a page's `data`;
 *   csv: the row's RFC 4180 line, built by PostgreSQL from each column's text rendering.
 * The line is built in PostgreSQL so that Node never parses a row (bench/export.js measured it).
 * Never: puts a value anywhere but a bound parameter (the statement runs in a cursor declared
 * with the same parameters), or names an alias bare (docs/architecture.md, "Names the compiler
 * writes").
 */
import type { ExportFormat, ListCommand } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { listSource } from './compile-list';

export function compileExport(command: ListCommand, format: ExportFormat, searchConfig: string | undefined): Sql {
  const { rows, pageClause, columns } = listSource(command, searchConfig);
  const inner = sql`SELECT ${columns} FROM ${rows}${pageClause}`;
  if (format === 'csv') return sql`SELECT ${csvLine(command)} FROM (${inner}) AS _p`;
  return sql`SELECT to_json(_p.*)::text FROM (${inner}) AS _p`;
}

/** The names of an export's columns, in order: the CSV header line (selected columns, then expansions). */
export function exportColumns(command: ListCommand): readonly string[] {
  return Object.freeze([...command.select.map((c) => c.name), ...command.expand.map((e) => e.relation.name)]);
}

/**
 * Types whose text never holds a comma, a quote or a line break in any DateStyle or IntervalStyle:
 * written as they are, which halves PostgreSQL's work for a typical row (bench/export.js). Not
 * every numeric type: `money` renders `$1,000.00`. int2, int4, int8, oid, float4, float8,
 * numeric, bool, date, time, timetz, timestamp, timestamptz, interval, uuid.
 */
const plainTypeOids: ReadonlySet<number> = new Set([21, 23, 20, 26, 700, 701, 1700, 16, 1082, 1083, 1266, 1114, 1184, 1186, 2950]);

function csvLine(command: ListCommand): Sql {
  const fields = [...command.select.map((c) => csvField(c.name, c)), ...command.expand.map((e) => csvField(e.relation.name, null))];
  return join(fields, sql` || ',' || `);
}

/**
 * One field as RFC 4180 and PostgreSQL's own CSV (COPY ... CSV) write it: NULL is empty, an
 * empty string is `""`, and a value with a comma, a quote, CR or LF is quoted with its quotes
 * doubled.
 */
function csvField(name: string, column: Column | null): Sql {
  const v = sql`_p.${ident(name)}`;
  if (column !== null && plainTypeOids.has(column.typeOid)) return sql`coalesce(${v}::text, '')`;
  // The pattern holds a real CR and LF (the template's \r\n): no E'' string, no backslash for PostgreSQL to read.
  return sql`CASE WHEN ${v} IS NULL THEN '' WHEN ${v}::text ~ '^$|[",\r\n]' THEN '"' || replace(${v}::text, '"', '""') || '"' ELSE ${v}::text END`;
}
