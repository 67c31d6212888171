/**
 * queryPattern: a data-route command -> its shape with the values removed (docs/allow-list.md), e.g.
 *   GET orders select=id,total status=eq sort=-placed_at limit
 * Method, route, then the parameters used, in one canonical order, whatever order or filter
 * spelling the request used (so `status=eq.paid` and `status.eq=paid` give the same pattern):
 *   select=<cols>  <col>=<op> (sorted)  search  search_columns=<cols>  distinct=<col>
 *   sort=<[-]col,...>  expand=<[nested:]rel,...>  count=exact  fn=<fn>  column=<col>
 *   limit  offset  cursor  export=<json|ndjson|csv>  returning=<cols>  body=<cols, sorted>  batch  on_conflict=<cols>
 *   resolution=<merge|ignore>
 * Names stay (they are the shape), values go: `limit` is there when the request gave one,
 * whatever its value. Grammar and examples: docs/allow-list.md. Function calls have no pattern;
 * the function allow-list governs them.
 * In: the command only (parse recorded what the request gave: `explicitLimit`, the child segment).
 * Never: reads the request, or answers a command kind it does not know (the switch is exhaustive).
 */
import type { Command, Condition, Embed, ReadCommand, Search } from '../../command/command';
import { callerOrder, embedsOf, selectedColumns } from '../../command/read-items';
import { assertNever } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { writeAnswerPattern } from './write-answer-pattern';
import { conditionOf, readPattern } from './read-pattern';

export function queryPattern(command: Command): string | undefined {
  switch (command.kind) {
    case 'insert': {
      if (command.answer) return writeAnswerPattern(command, command.answer);
      const parts = [...returningPart(command.explicitReturning, command.returning), `body=${sortedNames(command.columns)}`];
      if (command.batch) parts.push('batch');
      if (command.onConflict) parts.push(`on_conflict=${names(command.onConflict.columns)}`, `resolution=${command.onConflict.action === 'update' ? 'merge' : 'ignore'}`);
      return pattern('POST', command.table.name, parts);
    }
    case 'update':
      if (command.answer) return writeAnswerPattern(command, command.answer);
      return pattern('PATCH', `${command.table.name}/:id`, [...returningPart(command.explicitReturning, command.returning), `body=${sortedNames(command.columns)}`]);
    case 'delete':
      if (command.answer) return writeAnswerPattern(command, command.answer);
      return pattern('DELETE', `${command.table.name}/:id`, returningPart(command.explicitReturning, command.returning));
    case 'rpc':
    case 'contracts':
      return undefined;
    case 'read':
      return command.media === 'page' ? pattern('GET', listRoute(command), listParts(command)) : readPattern(command);
  }
  // Reached only by a kind added to Command and not to this switch (a build error) or a
  // replacement parse stage's invented kind: no pattern is ever guessed for it.
  return assertNever(command, 'command kind');
}

function pattern(method: string, route: string, parts: readonly string[]): string {
  return [method, route, ...parts].join(' ');
}

/**
 * A list's route: one row by key (`:id`), a plan (`_explain`) and an aggregate (`aggregate`) are
 * routes of their own, so allowing a list never allows reading its plan or aggregating its rows; a
 * child route names its parent.
 */
function listRoute(list: ReadCommand): string {
  if (list.key) return `${list.table.name}/:id`;
  if (list.plan) return `${list.table.name}/_explain`;
  if (list.aggregate) return `${list.table.name}/aggregate`;
  return list.parent ? `${list.parent.table.name}/:id/${list.parent.childName}` : list.table.name;
}

function listParts(list: ReadCommand): string[] {
  const parts: string[] = [];
  const { root } = list;
  if (root.explicitSelect) parts.push(`select=${names(selectedColumns(root))}`);
  parts.push(...filterParts(root.where, list.search));
  if (list.distinct) parts.push(`distinct=${list.distinct.name}`);
  const sort = callerOrder(root, list.tieBreakers);
  if (sort.length > 0) parts.push(`sort=${sort.map((k) => `${k.descending ? '-' : ''}${(k.related ?? []).map((r) => `${r.spelled}.`).join('')}${k.field.column.name}`).join(',')}`);
  parts.push(...expandPart(embedsOf(root)));
  if (list.count === 'exact') parts.push('count=exact');
  if (list.aggregate) {
    parts.push(`fn=${list.aggregate.fn}`);
    if (list.aggregate.column) parts.push(`column=${list.aggregate.column.name}`);
  }
  if (list.explicitLimit) parts.push('limit');
  if (list.explicitOffset) parts.push('offset');
  if (list.cursor) parts.push('cursor');
  // An export is a pattern of its own: listing a page never allows streaming the whole table.
  if (list.export) parts.push(`export=${list.export}`);
  return parts;
}

function filterParts(filters: readonly Condition[], search: Search | undefined): string[] {
  const spelled = filters.map(filterOf);
  const parts = [...new Set(spelled)].sort();
  if (search) {
    parts.push('search');
    if (search.explicitColumns) parts.push(`search_columns=${names(search.columns)}`);
  }
  return parts;
}

/**
 * A condition as the default grammar spells a filter (`status=eq`, `id=ne`, `notes=is_null`), so
 * allow-lists written for it keep matching; one it has no spelling for (a tree a replacement parse
 * stage made) is spelled as a read level's conditions are.
 */
function filterOf(c: Condition): string {
  if ('negate' in c && c.negate) return conditionOf(c);
  switch (c.kind) {
    case 'compare':
      return c.field.path.length === 0 && c.op in restOps ? `${c.field.column.name}=${restOps[c.op as keyof typeof restOps]}` : conditionOf(c);
    case 'in':
      return c.field.path.length === 0 ? `${c.field.column.name}=in` : conditionOf(c);
    case 'is':
      return c.field.path.length === 0 && (c.value === 'null' || c.value === 'not_null') ? `${c.field.column.name}=is_null` : conditionOf(c);
    case 'contains':
      return c.field.path.length === 0 ? `${c.field.column.name}=contains` : conditionOf(c);
    default:
      return conditionOf(c);
  }
}

const restOps = { eq: 'eq', neq: 'ne', gt: 'gt', gte: 'gte', lt: 'lt', lte: 'lte', like: 'like', ilike: 'ilike' } as const;

function expandPart(expansions: readonly Embed[]): string[] {
  return expansions.length > 0 ? [`expand=${expansions.map((e) => `${e.cardinality === 'many' ? 'nested:' : ''}${e.spelled}`).join(',')}`] : [];
}

function returningPart(explicit: boolean, returning: readonly Column[]): string[] {
  return explicit ? [`returning=${names(returning)}`] : [];
}

const names = (columns: readonly Column[]): string => columns.map((c) => c.name).join(',');
const sortedNames = (columns: readonly Column[]): string => columns.map((c) => c.name).sort().join(',');
