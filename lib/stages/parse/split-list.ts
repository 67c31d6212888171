import { GatewayError } from '../../errors/gateway-error';

/**
 * Splits a comma-separated parameter (`select=a,b`, `in.(x,y)`). An item may be double-quoted
 * to contain commas or quotes (`"a,b"`, `"say ""hi"""`), as in PostgREST.
 */
export function splitList(text: string, parameter: string): string[] {
  const items: string[] = [];
  let i = 0;
  while (i <= text.length) {
    if (text[i] === '"') {
      let item = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new GatewayError('PARSE_ERROR', `Unterminated quoted item in \`${parameter}\`.`, { hint: 'Close the item with a double quote; write a quote inside it as "".' });
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            item += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        item += text[i];
        i++;
      }
      if (i < text.length && text[i] !== ',') throw new GatewayError('PARSE_ERROR', `Unexpected text after a quoted item in \`${parameter}\`.`);
      items.push(item);
      i++;
    } else {
      const end = text.indexOf(',', i);
      const stop = end === -1 ? text.length : end;
      items.push(text.slice(i, stop));
      i = stop + 1;
    }
  }
  return items;
}
