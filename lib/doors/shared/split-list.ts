import { GatewayError } from '../../errors/gateway-error';

/**
 * Splits a comma-separated parameter (`select=a,b`, `in.(x,y)`, `sort=-a,b:desc`). Double quotes
 * protect commas and quotes inside names or values, as in PostgREST: `"a,b"`, `"say ""hi"""`,
 * `-"a""b"`, `"col:x":desc`. Quotes are removed; `""` inside quotes is one quote.
 */
export function splitList(text: string, parameter: string): string[] {
  const items: string[] = [];
  let item = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') item += c;
      else if (text[i + 1] === '"') {
        item += '"';
        i++;
      } else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      items.push(item);
      item = '';
    } else item += c;
  }
  if (quoted) {
    throw new GatewayError('PARSE_ERROR', `Unterminated quoted item in \`${parameter}\`.`, { hint: 'Close the item with a double quote; write a quote inside it as "".' });
  }
  items.push(item);
  return items;
}

/** The inverse of `splitList`: every item quoted, a quote doubled, so any text survives a split. */
export function quotedList(items: readonly string[]): string {
  return items.map((s) => `"${s.replace(/"/g, '""')}"`).join(',');
}
