/**
 * Names and list values in double quotes in the PostgREST grammar (docs/postgrest-dialect.md): any
 * characters, a backslash escaping the next one (`"a\"b"` is `a"b`), as PostgREST's own parser
 * reads them. One home for the select list, the filters, `columns=` and `on_conflict=`.
 * In: query text. Out: the name, unescaped. Never: anything but text (names are resolved against
 * the schema cache afterwards).
 */

/** The quoted name that starts at `text[start]` (a `"`): its value and the index after its closing quote; null when it is not closed. */
export function scanQuoted(text: string, start: number): { readonly value: string; readonly end: number } | null {
  let value = '';
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') return { value, end: i + 1 };
    if (c === '\\' && i + 1 < text.length) value += text[++i]!;
    else value += c;
  }
  return null;
}

/** A name or a list value as written: `"quoted"` unquoted and unescaped, else trimmed as it is. */
export function unquoted(item: string): string {
  const t = item.trim();
  if (t.startsWith('"')) {
    const quoted = scanQuoted(t, 0);
    if (quoted !== null && quoted.end === t.length) return quoted.value;
  }
  return t;
}

/** `a,"b,c",d` -> the names, split at commas outside quotes (`columns=`, `on_conflict=`). */
export function splitNames(text: string): string[] {
  const names: string[] = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i === text.length || text[i] === ',') {
      names.push(unquoted(text.slice(start, i)));
      start = i + 1;
    } else if (text[i] === '"') {
      const quoted = scanQuoted(text, i);
      if (quoted === null) break;
      i = quoted.end - 1;
    }
  }
  if (start < text.length) names.push(unquoted(text.slice(start)));
  return names;
}
