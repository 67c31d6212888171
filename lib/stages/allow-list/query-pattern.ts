/**
 * queryPattern: a data-route command -> its shape with the values removed (contract §6), e.g.
 *   GET orders select=id,total status=eq sort=-placed_at limit
 * Method, route, then the parameters used, in one canonical order, whatever order or filter
 * spelling the request used (so `status=eq.paid` and `status.eq=paid` give the same pattern):
 *   select=<cols>  <col>=<op> (sorted)  search  search_columns=<cols>  distinct=<col>
 *   sort=<[-]col,...>  expand=<[nested:]rel,...>  count=exact  fn=<fn>  column=<col>
 *   limit  offset  cursor  returning=<cols>  body=<cols, sorted>  batch  on_conflict=<cols>
 *   resolution=<merge|ignore>
 * Names stay (they are the shape), values go: `limit` is there when the request gave one,
 * whatever its value. Grammar and examples: docs/allow-list.md. Function calls have no pattern;
 * the function allow-list governs them.
 */
import type { Command, Expansion, Filter, ListCommand, Search } from '../../command/command';
import type { GatewayRequest } from '../../pipeline/gateway-request';
import type { Column } from '../../schema/schema-types';

export function queryPattern(command: Command, request: GatewayRequest): string | undefined {
  const given = new Set(request.query.map(([key]) => key));
  const parts: string[] = [];
  switch (command.kind) {
    case 'list':
      parts.push('GET', command.parent ? `${command.parent.table.name}/:id/${request.segments[2] ?? command.table.name}` : command.table.name);
      listParts(parts, command, given);
      break;
    case 'explain':
      parts.push('GET', `${command.table.name}/_explain`);
      listParts(parts, command.list, given);
      break;
    case 'get':
      parts.push('GET', `${command.table.name}/:id`);
      if (command.explicitSelect) parts.push(`select=${names(command.select)}`);
      expandPart(parts, command.expand);
      break;
    case 'aggregate':
      parts.push('GET', `${command.table.name}/aggregate`);
      filterParts(parts, command.filters, command.search);
      parts.push(`fn=${command.fn}`);
      if (command.column) parts.push(`column=${command.column.name}`);
      break;
    case 'insert':
      parts.push('POST', command.table.name);
      if (command.explicitReturning) parts.push(`returning=${names(command.returning)}`);
      parts.push(`body=${sortedNames(command.columns)}`);
      if (command.batch) parts.push('batch');
      if (command.onConflict) parts.push(`on_conflict=${names(command.onConflict.columns)}`, `resolution=${command.onConflict.action === 'update' ? 'merge' : 'ignore'}`);
      break;
    case 'update':
      parts.push('PATCH', `${command.table.name}/:id`);
      if (command.explicitReturning) parts.push(`returning=${names(command.returning)}`);
      parts.push(`body=${sortedNames(command.columns)}`);
      break;
    case 'delete':
      parts.push('DELETE', `${command.table.name}/:id`);
      if (command.explicitReturning) parts.push(`returning=${names(command.returning)}`);
      break;
    case 'rpc':
    case 'contracts':
      return undefined;
  }
  return parts.join(' ');
}

function listParts(parts: string[], list: ListCommand, given: ReadonlySet<string>): void {
  if (list.explicitSelect) parts.push(`select=${names(list.select)}`);
  filterParts(parts, list.filters, list.search);
  if (list.distinct) parts.push(`distinct=${list.distinct.name}`);
  if (list.sort.length > 0) parts.push(`sort=${list.sort.map((k) => `${k.descending ? '-' : ''}${k.column.name}`).join(',')}`);
  expandPart(parts, list.expand);
  if (list.countExact) parts.push('count=exact');
  if (given.has('limit')) parts.push('limit');
  if (given.has('offset')) parts.push('offset');
  if (list.cursor) parts.push('cursor');
}

function filterParts(parts: string[], filters: readonly Filter[], search: Search | null): void {
  const spelled = filters.map((f) => `${f.column.name}=${f.op}`);
  parts.push(...[...new Set(spelled)].sort());
  if (search) {
    parts.push('search');
    if (search.explicitColumns) parts.push(`search_columns=${names(search.columns)}`);
  }
}

function expandPart(parts: string[], expansions: readonly Expansion[]): void {
  if (expansions.length > 0) parts.push(`expand=${expansions.map((e) => `${e.relation.cardinality === 'many' ? 'nested:' : ''}${e.relation.name}`).join(',')}`);
}

const names = (columns: readonly Column[]): string => columns.map((c) => c.name).join(',');
const sortedNames = (columns: readonly Column[]): string => columns.map((c) => c.name).sort().join(',');
