/**
 * The response-size bound in the statement itself (docs/configuration.md, `max_response_bytes`).
 * PostgreSQL measures the text value that becomes the response body (a page's JSON array, a row,
 * a function's result, a write's representation) where it builds it, and fails the statement
 * instead of sending a value over the bound: the gateway never receives, buffers or turns into a
 * JavaScript string anything larger (a string over V8's ~512 MiB limit is thrown from inside the
 * driver's socket handler). A failed write is rolled back with its transaction.
 *
 * `octet_length(text)` reads the varlena header (the raw size of a TOASTed value too), so the check
 * costs the same for a page of one byte or of a gigabyte. The failure is the input-function error
 * of lib/errors/response-too-large.ts, with the size in its text so that it is not a constant the
 * planner folds (and raises) whatever the size.
 */
import { ident, integerLiteral, join, sql, type Sql } from '../../sql/sql';
import { responseSizeMarker } from '../../errors/response-too-large';

/** `value` (text) as it is, or the statement's failure when it is over `maxBytes`. Names `value` twice: pass a column, not an expression. */
export function sizeChecked(value: Sql, maxBytes: number): Sql {
  return sql`CASE WHEN octet_length(${value}) > ${integerLiteral(maxBytes)} THEN pg_catalog.int4in((${responseSizeMarker}::text || ':' || octet_length(${value}))::cstring)::text ELSE ${value} END`;
}

/**
 * A read-only statement whose result has `columns` columns, with column `checked` size-checked.
 * The inner `OFFSET 0` keeps PostgreSQL from pulling the statement up into this one, which would
 * put its expression (a row's `to_json`, say) in both places sizeChecked names the column, and
 * evaluate it twice. A data-modifying statement cannot be a subquery: the write compilers call
 * sizeChecked on their own output (select-written.ts, compile-answered-write.ts).
 */
export function sizeCheckedStatement(statement: Sql, columns: number, checked: number, maxBytes: number): Sql {
  const [head, tail] = wrapperOf(columns, checked, maxBytes);
  return sql`${head}${statement}${tail}`;
}

/**
 * The wrapper's two halves depend only on the column count, the checked column and the bound, so
 * they are built once per combination, not per request (a handful per gateway; bounded anyway).
 */
const wrappers = new Map<string, readonly [Sql, Sql]>();
const maxWrappers = 256;

function wrapperOf(columns: number, checked: number, maxBytes: number): readonly [Sql, Sql] {
  const key = `${columns}:${checked}:${maxBytes}`;
  let wrapper = wrappers.get(key);
  if (wrapper === undefined) {
    const names = Array.from({ length: columns }, (_, i) => ident(`c${i}`));
    const out = names.map((name, i) => (i === checked ? sizeChecked(sql`_z.${name}`, maxBytes) : sql`_z.${name}`));
    wrapper = [sql`SELECT ${join(out)} FROM (SELECT * FROM (`, sql`) AS _y OFFSET 0) AS _z(${join(names)})`];
    if (wrappers.size >= maxWrappers) wrappers.clear();
    wrappers.set(key, wrapper);
  }
  return wrapper;
}
