/**
 * A Postgres Changes `filter` (docs/postgrest-dialect.md, "Realtime") -> the list route's query
 * parameters of the default grammar, so that the subscription's conditions are the ones its
 * parse stage, the policy and the allow-list already judge. `col=op.value` with eq, neq, lt, lte,
 * gt, gte, and `col=in.(a,b)`; several joined by commas (realtime-js's filter builder) all hold.
 * Values may be double-quoted with backslash escapes, as realtime-js writes them. Never: passes
 * on an operator it does not know (like, is, match, not. ... are refused, not ignored).
 */
import { GatewayError } from '../../errors/gateway-error';
import { quotedList } from '../shared/split-list';

const operators: ReadonlyMap<string, string> = new Map([
  ['eq', 'eq'],
  ['neq', 'ne'],
  ['lt', 'lt'],
  ['lte', 'lte'],
  ['gt', 'gt'],
  ['gte', 'gte'],
  ['in', 'in'],
]);

export function parseRealtimeFilter(filter: string): [string, string][] {
  const query: [string, string][] = [];
  for (const part of splitTop(filter)) {
    const eq = part.indexOf('=');
    const dot = part.indexOf('.', eq + 1);
    if (eq <= 0 || dot < 0) throw refused(`\`${part}\` is not a filter of the form column=operator.value.`);
    const column = part.slice(0, eq);
    const op = part.slice(eq + 1, dot);
    const raw = part.slice(dot + 1);
    const native = operators.get(op);
    if (native === undefined) throw refused(`The filter operator \`${op}\` is not served; use eq, neq, lt, lte, gt, gte or in.`);
    if (native === 'in') {
      if (!raw.startsWith('(') || !raw.endsWith(')')) throw refused(`The \`in\` filter on \`${column}\` needs a parenthesised list: \`${column}=in.(a,b)\`.`);
      const items = splitTop(raw.slice(1, -1)).map(unquote);
      query.push([column, `in.(${quotedList(items)})`]);
    } else {
      query.push([column, `${native}.${unquote(raw)}`]);
    }
  }
  return query;
}

/** Splits at commas outside double quotes and parentheses. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quoted || depth !== 0) throw refused('The filter has an unterminated quote or parenthesis.');
  parts.push(text.slice(start));
  return parts;
}

function unquote(text: string): string {
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return text;
  return text.slice(1, -1).replace(/\\(.)/g, '$1');
}

function refused(message: string): GatewayError {
  return new GatewayError('PARSE_ERROR', message, { hint: 'See docs/postgrest-dialect.md, "Realtime".' });
}
