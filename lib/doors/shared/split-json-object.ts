/**
 * splitJsonObject: the text of a JSON object -> its keys and the texts of their values, untouched.
 * Like splitJsonArray, so that a value's number keeps the caller's digits (JSON.parse would round
 * integers above 2^53 and long numerics). The input must already be valid JSON (parseJsonBody
 * checked it); this only tracks strings and nesting. A repeated key keeps its last value, as
 * JSON.parse does.
 */
export function splitJsonObject(text: string): [key: string, value: string][] {
  const entries: [string, string][] = [];
  let i = text.indexOf('{') + 1;
  for (;;) {
    i = skipSpace(text, i);
    const ch = text.charCodeAt(i);
    if (Number.isNaN(ch) || ch === 0x7d /* } */) break;
    if (ch === 0x2c /* , */) {
      i++;
      continue;
    }
    const keyEnd = endOfString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd) + 1; // past the ':'
    const start = i;
    let depth = 0;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22 /* " */) i = endOfString(text, i) - 1;
      else if (c === 0x5b /* [ */ || c === 0x7b /* { */) depth++;
      else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
        if (depth === 0) break;
        depth--;
      } else if (c === 0x2c /* , */ && depth === 0) break;
    }
    entries.push([key, text.slice(start, i).trim()]);
  }
  return entries;
}

/** The index just past the closing quote of the string that opens at `start`. */
function endOfString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22 /* " */) return i + 1;
  }
  return text.length;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}
