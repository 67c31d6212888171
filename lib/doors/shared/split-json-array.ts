/**
 * splitJsonArray: the text of a JSON array -> the texts of its elements, untouched.
 * Positional RPC arguments are bound as the caller's own text (JSON.parse would round integers
 * above 2^53 and long numerics), so the array is split without being parsed. The input must
 * already be valid JSON (parseJsonBody checked it); this only tracks strings and nesting.
 */
export function splitJsonArray(text: string): string[] {
  const elements: string[] = [];
  const open = text.indexOf('[');
  let depth = 0;
  let start = open + 1;
  let inString = false;
  for (let i = open + 1; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x5b /* [ */ || ch === 0x7b /* { */) depth++;
    else if ((ch === 0x5d /* ] */ || ch === 0x7d) /* } */ && depth > 0) depth--;
    else if ((ch === 0x2c /* , */ && depth === 0) || ch === 0x5d) {
      const element = text.slice(start, i).trim();
      if (element !== '' || ch === 0x2c) elements.push(element);
      if (ch === 0x5d) break;
      start = i + 1;
    }
  }
  return elements;
}
