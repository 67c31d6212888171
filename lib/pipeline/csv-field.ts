/**
 * CSV quoting (RFC 4180) for the default grammar's exports, in one place for the two forms a field
 * is made in: a JS string (an export's header line) and the bytes PostgreSQL sent (an export's
 * rows, encoded without a JS string: lib/db/export-row-encoder.ts). The rule: a field holding a
 * comma, a double quote, CR or LF is written between double quotes, each quote doubled; an empty
 * string is `""` so that it differs from NULL (an empty field), as COPY ... CSV does.
 *
 * A `read`'s CSV body is another form, a record's text without its parentheses, built by
 * PostgreSQL (lib/stages/compile/compile-read.ts; docs/postgrest-dialect.md, "CSV").
 */
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
