/**
 * CSV quoting (RFC 4180), in one place for the three forms a CSV field is made in: a JS string
 * (an export's header line), the bytes PostgreSQL sent (an export's rows, encoded without a JS
 * string: lib/db/export-row-encoder.ts), and SQL (a read whose body PostgreSQL builds:
 * lib/stages/compile/compile-read.ts). The rule: a field holding a comma, a double quote, CR or LF
 * is written between double quotes, each quote doubled.
 *
 * The two bodies differ in one case, as their references do: an export writes an empty string as
 * `""` so that it differs from NULL (an empty field), as COPY ... CSV does; a read's CSV body
 * writes both as an empty field.
 */
import { sql, type Sql } from '../sql/sql';

/** The characters that make a field need quotes. */
const special = /[",\r\n]/;

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/** A text field of an export (a header name): quoted when empty or holding a special character. */
export function csvExportField(text: string): string {
  return text === '' || special.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Whether bytes `at`..`end` hold a special character (the caller quotes an empty field itself). */
export function csvBytesNeedQuotes(b: Buffer, at: number, end: number): boolean {
  for (let i = at; i < end; i++) {
    const c = b[i]!;
    if (c === COMMA || c === QUOTE || c === LF || c === CR) return true;
  }
  return false;
}

/** A read body's field in SQL: NULL as an empty field, a value holding a special character quoted. */
export function csvFieldSql(value: Sql): Sql {
  return sql`CASE WHEN ${value} IS NULL THEN '' WHEN ${value} ~ '[",\r\n]' THEN '"' || replace(${value}, '"', '""') || '"' ELSE ${value} END`;
}
