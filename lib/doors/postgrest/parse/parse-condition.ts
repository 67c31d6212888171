/**
 * PostgREST's filter grammar -> Conditions (docs/postgrest-dialect.md, "Filters").
 *   column filter:  <field>=[not.]<op>[(any)|(all)|(<fts config>)].<value>
 *   logic tree:     or=(<item>,...)  and=(...)  not.or=(...)   item: <field>.[not.]<op>.<value> | [not.]or(...) | [not.]and(...)
 *   field:          name('->' key | '->>' key)*
 * In: the value text (and, for a tree, its items) and a resolver for field names of the level.
 * Out: a Condition. Never: accepts an operator outside the closed list; values stay text (bound by
 * compile). Malformed text is PGRST100, never another kind of throw.
 */
import type { CompareOp, Condition, FieldRef, FtsOp, IsValue, QuantifiableOp } from '../../../command/command';
import { PostgrestError } from '../postgrest-error';
import { clip } from './parse-select';
import { unquoted } from './quoted-name';

const compareOps = new Set<string>(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch', 'isdistinct', 'cs', 'cd', 'ov', 'sl', 'sr', 'nxr', 'nxl', 'adj']);
const quantifiable = new Set<string>(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch']);
const ftsOps = new Set<string>(['fts', 'plfts', 'phfts', 'wfts']);
const isValues = new Set<string>(['null', 'not_null', 'true', 'false', 'unknown']);

export const maxInItems = 1000;
export const maxTreeDepth = 8;

export type ResolveField = (text: string) => FieldRef;

/** `<field>=<value>` of the query string. */
export function parseColumnFilter(field: FieldRef, value: string): Condition {
  return parseOperation(field, value);
}

/** `[not.]<op>[(modifier)].<value>` applied to a field. */
function parseOperation(field: FieldRef, text: string): Condition {
  let rest = text;
  let negate = false;
  if (rest.startsWith('not.')) {
    negate = true;
    rest = rest.slice(4);
  }
  const dot = rest.indexOf('.');
  if (dot < 0) throw bad(text, 'expected <operator>.<value>');
  let op = rest.slice(0, dot);
  const value = rest.slice(dot + 1);
  let modifier: string | null = null;
  const paren = /^([a-z]+)\((.*)\)$/.exec(op);
  if (paren) {
    op = paren[1]!;
    modifier = paren[2]!;
  }
  if (op === 'in') {
    if (modifier !== null) throw bad(text, '`in` takes no modifier');
    return { kind: 'in', field, values: parseList(value, text), negate };
  }
  if (op === 'is') {
    if (modifier !== null || !isValues.has(value.toLowerCase())) throw bad(text, '`is` takes null, not_null, true, false or unknown');
    return { kind: 'is', field, value: value.toLowerCase() as IsValue, negate };
  }
  if (ftsOps.has(op)) {
    if (modifier !== null && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(modifier)) throw bad(text, 'a text search configuration is a name such as english');
    return { kind: 'fts', field, op: op as FtsOp, config: modifier, query: value, negate };
  }
  if (!compareOps.has(op)) throw bad(text, `unknown operator "${clip(op, 20)}"`);
  const like = op === 'like' || op === 'ilike';
  if (modifier !== null) {
    if (!quantifiable.has(op) || (modifier !== 'any' && modifier !== 'all')) throw bad(text, '(any) and (all) apply to eq, neq, gt, gte, lt, lte, like, ilike, match and imatch');
    const values = parseBraces(value, text).map((v) => (like ? likePattern(v) : v));
    return { kind: 'quantified', field, op: op as QuantifiableOp, quantifier: modifier, values, negate };
  }
  return { kind: 'compare', field, op: op as CompareOp, value: like ? likePattern(value) : value, negate };
}

/** PostgREST writes `*` for `%` in like patterns (a URL-friendly wildcard). */
function likePattern(value: string): string {
  return value.replace(/\*/g, '%');
}

/** `(a,b,"c,d")` -> items; double quotes keep commas and parentheses, `\"` and `\\` escape. */
function parseList(value: string, text: string): string[] {
  if (!value.startsWith('(') || !value.endsWith(')')) throw bad(text, '`in` takes a list in parentheses: in.(a,b)');
  const items = splitItems(value.slice(1, -1), text);
  if (items.length > maxInItems) throw bad(text, `at most ${maxInItems} items in a list`);
  return items.map((i) => unquoted(i));
}

/** `{a,b}` -> items, for (any)/(all). */
function parseBraces(value: string, text: string): string[] {
  if (!value.startsWith('{') || !value.endsWith('}')) throw bad(text, '(any) and (all) take a list in braces: eq(any).{a,b}');
  const items = splitItems(value.slice(1, -1), text);
  if (items.length > maxInItems) throw bad(text, `at most ${maxInItems} items in a list`);
  return items.map((i) => unquoted(i));
}

/** Splits at top-level commas, outside double quotes and parentheses. */
export function splitItems(text: string, whole: string): string[] {
  if (text.trim() === '') return [];
  const items: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
      continue;
    }
    if (ch === '"') quoted = true;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      if (--depth < 0) throw bad(whole, 'unbalanced parentheses');
    } else if (ch === ',' && depth === 0) {
      items.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quoted || depth !== 0) throw bad(whole, quoted ? 'unterminated double quote' : 'unbalanced parentheses');
  items.push(text.slice(start));
  return items;
}


/** `or=(...)` / `and=(...)` (with `not.` for `not.or`): the items of a logic tree. */
export function parseLogicTree(op: 'and' | 'or', negate: boolean, value: string, resolve: ResolveField, depth = 0): Condition {
  if (depth > maxTreeDepth) throw bad(value, `logic trees nest at most ${maxTreeDepth} levels`);
  if (!value.startsWith('(') || !value.endsWith(')')) throw bad(value, `${op} takes a list in parentheses: ${op}=(a.eq.1,b.eq.2)`);
  const items = splitItems(value.slice(1, -1), value).map((item) => parseTreeItem(item.trim(), resolve, depth));
  if (items.length === 0) throw bad(value, `${op} needs at least one condition`);
  return { kind: 'group', op, items, negate };
}

function parseTreeItem(item: string, resolve: ResolveField, depth: number): Condition {
  const nested = /^(not\.)?(and|or)(\(.*\))$/s.exec(item);
  if (nested) return parseLogicTree(nested[2] as 'and' | 'or', nested[1] !== undefined, nested[3]!, resolve, depth + 1);
  // <field>.<operation>: the field ends at the first dot outside a JSON path key.
  const dot = fieldEnd(item);
  if (dot < 0) throw bad(item, 'expected <column>.<operator>.<value>');
  return parseOperation(resolve(item.slice(0, dot)), item.slice(dot + 1));
}

/** Index of the dot that ends the field of a tree item (`data->>a.eq.1` -> after `a`). */
function fieldEnd(item: string): number {
  let i = 0;
  if (item.startsWith('"')) {
    const end = item.indexOf('"', 1);
    if (end < 0) return -1;
    i = end + 1;
  }
  return item.indexOf('.', i);
}

export function bad(text: string, why: string): PostgrestError {
  return new PostgrestError('PGRST100', `"failed to parse filter (${clip(text)})" (${why})`, { details: why });
}
