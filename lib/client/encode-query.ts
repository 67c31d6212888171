/**
 * Writes names and values in the gateway's URL grammar (docs/querying.md): quoted names in
 * `select` / `sort` / `expand` lists, filter values in PostgreSQL input syntax, `in` lists, keys
 * (`/:id`, composite keys with commas), and the percent-encoded query string. In: JavaScript
 * values. Out: strings. Never: reads the schema; the gateway checks every name.
 */

/** A plain name goes as is; any other is double-quoted with its quotes doubled (as `select` reads it). */
export function quoteName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

export function nameList(names: readonly string[]): string {
  return names.map(quoteName).join(',');
}

/**
 * `sort` entries: `col` ascending, `-col` descending (the gateway reads the rest as one name). A
 * related column, `user.name`, goes as is when each part is a plain name (the gateway reads the
 * whole text either way: a column of that name first, else the relations).
 */
export function sortEntry(column: string, direction: 'asc' | 'desc'): string {
  const name = column.split('.').every((part) => quoteName(part) === part) ? column : quoteName(column);
  return direction === 'desc' ? `-${name}` : name;
}

/**
 * A filter or key value as text PostgreSQL's input function for the column reads: strings as they
 * are, numbers and booleans printed, a Date in ISO 8601, an array as an array literal, any other
 * object as JSON (for jsonb columns).
 */
export function encodeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return arrayLiteral(value);
  if (value === null || value === undefined) throw new TypeError('A filter or key value cannot be null or undefined; use isNull() for IS NULL.');
  return JSON.stringify(value);
}

/** `{"a","b c",NULL}`: every element quoted, backslash and quote escaped (PostgreSQL array input syntax). */
function arrayLiteral(items: readonly unknown[]): string {
  const parts = items.map((item) => {
    if (item === null || item === undefined) return 'NULL';
    if (Array.isArray(item)) return arrayLiteral(item);
    return `"${encodeValue(item).replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  });
  return `{${parts.join(',')}}`;
}

/** An `in` list: every item double-quoted with its quotes doubled, so commas and parentheses are safe. */
export function inList(values: readonly unknown[]): string {
  return `(${values.map((v) => `"${encodeValue(v).replace(/"/g, '""')}"`).join(',')})`;
}

/** `/:id`: each key part percent-encoded (a comma becomes %2C), parts joined with literal commas. */
export function keySegment(key: unknown): string {
  const parts = Array.isArray(key) ? key : [key];
  if (parts.length === 0) throw new TypeError('A key needs at least one value.');
  return parts.map((part) => encodeURIComponent(encodeValue(part))).join(',');
}

export function queryString(parameters: readonly (readonly [string, string])[]): string {
  if (parameters.length === 0) return '';
  return `?${parameters.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
}
