/**
 * parsePrefer: the `Prefer` request header (RFC 7240) -> its preferences as name -> value.
 * Tokens are comma-separated `name[=value]`; names are case-insensitive; parameters after `;` are
 * ignored. Unknown preferences are ignored (RFC 7240 §2: a server MAY ignore them); the write
 * parsers reject the values they understand but cannot honour.
 */
export function parsePrefer(header: string | undefined): ReadonlyMap<string, string> {
  const preferences = new Map<string, string>();
  if (header === undefined) return preferences;
  for (const token of header.split(',')) {
    const [pair = ''] = token.split(';');
    const eq = pair.indexOf('=');
    const name = (eq === -1 ? pair : pair.slice(0, eq)).trim().toLowerCase();
    const value = eq === -1 ? '' : pair.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    if (name !== '' && !preferences.has(name)) preferences.set(name, value);
  }
  return preferences;
}
