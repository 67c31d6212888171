/**
 * An export's statement (docs/querying.md, "Exports"): the rows of the list command, in the same
 * order, with the same filters, policy conditions, cursor and expansions as a page
 * (listSource in compile-list.ts), one result row per row instead of one aggregated row:
 *   json, ndjson: one column, `to_json(_p.*)::text`, the row exactly as in a page's `data`;
 *   csv: the selected columns (then the expansions' JSON) themselves, as PostgreSQL's text
 *        rendering; lib/http/write-export.ts quotes them. Building the CSV line in SQL instead
 *        cost PostgreSQL about twice what the rows alone do, and PostgreSQL bounds an export
 *        (bench/export.js, docs/performance.md#exports).
 * Never: puts a value anywhere but a bound parameter (the statement runs in a cursor declared
 * with the same parameters), or names an alias bare (docs/architecture.md, "Names the compiler
 * writes").
 */
import type { ExportFormat, ListCommand } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { sql, type Sql } from '../../sql/sql';
import { listSource } from './compile-list';

export function compileExport(command: ListCommand, format: ExportFormat, searchConfig: string | undefined): Sql {
  const { rows, pageClause, columns } = listSource(command, searchConfig);
  const inner = sql`SELECT ${columns} FROM ${rows}${pageClause}`;
  if (format === 'csv') return inner;
  return sql`SELECT to_json(_p.*)::text FROM (${inner}) AS _p`;
}

/** The names of an export's columns, in order: the CSV header line (selected columns, then expansions). */
export function exportColumns(command: ListCommand): readonly string[] {
  return Object.freeze([...command.select.map((c) => c.name), ...command.expand.map((e) => e.relation.name)]);
}

/**
 * For each CSV column: true when its type's text never holds a comma, a quote, CR or LF in any
 * DateStyle or IntervalStyle, so it is written without the quoting test. Not every numeric type:
 * `money` renders `$1,000.00`. int2, int4, int8, oid, float4, float8, numeric, bool, date, time,
 * timetz, timestamp, timestamptz, interval, uuid; an expansion's JSON is never plain.
 */
export function plainColumns(command: ListCommand): readonly boolean[] {
  return Object.freeze([...command.select.map(isPlain), ...command.expand.map(() => false)]);
}

const plainTypeOids: ReadonlySet<number> = new Set([21, 23, 20, 26, 700, 701, 1700, 16, 1082, 1083, 1266, 1114, 1184, 1186, 2950]);

function isPlain(column: Column): boolean {
  return plainTypeOids.has(column.typeOid);
}
