/**
 * Query parameters of `GET /{table}` -> a read with the `page` media (command.ts). Reserved parameter names come first; any
 * other key is a filter on a column (a column whose name is reserved is still filterable
 * key-style: `limit.eq=5`).
 */
import type { Column, Table } from '../../../schema/schema-types';
import type { Condition, CursorPosition, ExportFormat, OrderTerm, ParentScope, ReadCommand, Search } from '../../../command/command';
import { columnItems } from '../../../command/read-items';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import { GatewayError } from '../../../errors/gateway-error';
import type { CursorCodec } from '../../../pipeline/cursor-codec';
import { parseExpand } from './parse-expand';
import { parseKeyStyle, parseValueStyle, splitKeyStyle } from './parse-filter';
import { checkLimit } from '../../shared/request-limits';
import { clip, resolveColumn, resolveColumnParameter } from '../../shared/resolve-names';
import { splitList } from '../../shared/split-list';
import { resolveSortField } from './resolve-sort-field';

export const reservedParameters = ['select', 'sort', 'limit', 'offset', 'cursor', 'distinct', 'search', 'search_columns', 'count', 'expand'] as const;
type Reserved = (typeof reservedParameters)[number];
const reservedSet: ReadonlySet<string> = new Set(reservedParameters);

const MAX_INTEGER_DIGITS = 15;

/**
 * `parent` is set by the child route (`GET /{parent}/:id/{child}`): the same parameters, over the
 * rows of `table` whose foreign key points at that parent row. `accept` is the format the
 * `Accept` header prefers (parse-accept.ts): anything but a JSON page makes the list an export.
 */
export function parseList(
  table: Table,
  query: readonly (readonly [string, string])[],
  config: ResolvedConfig,
  cursors: CursorCodec,
  parent: ParentScope | null = null,
  accept: ExportFormat = 'json',
): ReadCommand {
  const reserved = new Map<Reserved, string>();
  const filters: Condition[] = [];
  checkLimit('filters', countFilters(query, reservedSet), 'filter parameters');
  for (const [key, raw] of query) {
    if (reservedSet.has(key)) {
      if (reserved.has(key as Reserved)) throw new GatewayError('PARSE_ERROR', `The \`${key}\` parameter is given more than once.`);
      reserved.set(key as Reserved, raw);
      continue;
    }
    filters.push(parseFilterParameter(table, key, raw));
  }

  const distinctName = reserved.get('distinct');
  const distinct = distinctName === undefined ? null : resolveColumnParameter(table, distinctName, 'distinct');
  const selectText = reserved.get('select');
  const select = distinct ? distinctSelect(table, distinct, selectText) : parseSelect(table, selectText);
  const sort = parseSort(table, reserved.get('sort'));
  if (distinct && sort.some((k) => k.field.column !== distinct)) {
    throw new GatewayError('PARSE_ERROR', `With \`distinct=${distinct.name}\` the rows can only be sorted by \`${distinct.name}\`.`);
  }

  const tieBreaker: readonly Column[] = distinct ? [distinct] : table.primaryKey;
  const order: OrderTerm[] = [...sort];
  for (const column of tieBreaker) if (!order.some((k) => k.related === undefined && k.field.column === column)) order.push(sortKey(column, false));

  const requested = parseInteger(reserved.get('limit'), 'limit');
  const exportFormat = exportOf(accept, requested, config);
  const limit = exportFormat ? exportLimit(requested, config) : Math.min(requested ?? config.defaultLimit, config.maxLimit);
  const offset = parseInteger(reserved.get('offset'), 'offset') ?? 0;

  const cursorText = reserved.get('cursor');
  let cursor: CursorPosition | undefined;
  if (cursorText !== undefined) {
    if (reserved.has('offset')) throw new GatewayError('PARSE_ERROR', 'Use either `cursor` or `offset`, not both.');
    if (tieBreaker.length === 0) {
      throw new GatewayError('PARSE_ERROR', `Table \`${table.name}\` has no primary key, so it cannot be paged with a cursor.`, { hint: 'Page with limit and offset.' });
    }
    cursor = { values: cursors.decode(table, order, cursorText) };
  }

  const expandText = reserved.get('expand');
  if (distinct && expandText !== undefined) throw new GatewayError('PARSE_ERROR', '`expand` cannot be combined with `distinct`: distinct values have no related rows.');
  const expand = parseExpand(table, expandText, select);

  const countText = reserved.get('count');
  if (countText !== undefined && countText !== 'exact') throw new GatewayError('PARSE_ERROR', '`count` takes the value `exact`.');
  if (exportFormat && countText !== undefined) throw new GatewayError('PARSE_ERROR', '`count=exact` is not available on an export.', { hint: 'Ask GET /{table}/aggregate?fn=count with the same filters.' });

  const explicitSelect = selectText !== undefined;
  const search = parseSearch(table, reserved.get('search'), reserved.get('search_columns'));
  return Object.freeze({
    kind: 'read',
    table,
    root: Object.freeze({ table, items: columnItems(select, explicitSelect, expand), explicitSelect, where: Object.freeze(filters), order: Object.freeze(order), limit, offset }),
    schema: table.schema,
    count: countText === 'exact' ? 'exact' : null,
    media: 'page',
    plan: null,
    explicitLimit: reserved.has('limit'),
    explicitOffset: reserved.has('offset'),
    head: false,
    tieBreakers: order.length - sort.length,
    // Capabilities left unset are undefined (one object shape for every list, no spreads).
    cursor,
    search: search ?? undefined,
    distinct: distinct ?? undefined,
    parent: parent ?? undefined,
    export: exportFormat,
  });
}

/**
 * Whether the list is streamed (docs/querying.md, "Exports"): NDJSON and CSV always are (406
 * while max_export_rows is 0); JSON when `limit` is above max_limit and exports are on, else the
 * limit is clamped to max_limit as it always was.
 */
function exportOf(accept: ExportFormat, requested: number | undefined, config: ResolvedConfig): ExportFormat | undefined {
  if (accept !== 'json') {
    if (config.maxExportRows === 0) {
      throw new GatewayError('NOT_ACCEPTABLE', `Exports (${accept === 'csv' ? 'text/csv' : 'application/x-ndjson'}) are turned off (max_export_rows = 0).`, { hint: 'Ask for application/json pages.' });
    }
    return accept;
  }
  return config.maxExportRows > 0 && requested !== undefined && requested > config.maxLimit ? 'json' : undefined;
}

/** An export's row cap: the caller's `limit`, at most max_export_rows (400 above), else max_export_rows. */
function exportLimit(requested: number | undefined, config: ResolvedConfig): number {
  if (requested !== undefined && requested > config.maxExportRows) {
    throw new GatewayError('PARSE_ERROR', `\`limit\` ${requested} is more than an export may return (max_export_rows = ${config.maxExportRows}).`, {
      details: { limit: 'max_export_rows', max: config.maxExportRows },
      hint: 'Export in parts, e.g. with a cursor or a filter on a key range.',
    });
  }
  return requested ?? config.maxExportRows;
}

/** How many parameters of `query` are filters (not in `reserved`), counted before any is parsed. */
export function countFilters(query: readonly (readonly [string, string])[], reserved: ReadonlySet<string>): number {
  let count = 0;
  for (const [key] of query) if (!reserved.has(key)) count++;
  return count;
}

/** One non-reserved query parameter -> a filter on a column (either spelling); else UNKNOWN_COLUMN. */
export function parseFilterParameter(table: Table, key: string, raw: string): Condition {
  const filter = parseFilterSpelling(table, key, raw);
  if (filter.kind === 'in') checkLimit('inItems', filter.values.length, `items in the \`in\` list of \`${filter.field.column.name}\``);
  return filter;
}

function parseFilterSpelling(table: Table, key: string, raw: string): Condition {
  const column = table.columnsByName.get(key);
  if (column) return parseValueStyle(column, raw);
  const keyStyle = splitKeyStyle(table, key);
  if (keyStyle) return parseKeyStyle(keyStyle.column, keyStyle.op, raw);
  // Neither spelling names a column, so this throws UNKNOWN_COLUMN with the nearest name.
  resolveColumn(table, key.includes('.') ? key.slice(0, key.lastIndexOf('.')) : key, 'a filter');
  throw new GatewayError('UNKNOWN_COLUMN', `Table \`${table.name}\` has no column \`${clip(key)}\` (in a filter).`);
}

/** `select=a,b` (also `search_columns`, named by `parameter`): at most requestLimits.columnNames names. */
export function parseSelect(table: Table, text: string | undefined, parameter = 'select'): readonly Column[] {
  if (text === undefined || text === '*') return table.columns;
  const columns: Column[] = [];
  const names = splitList(text, parameter);
  checkLimit('columnNames', names.length, `names in \`${parameter}\``);
  const mentions = new Map<Column, number>();
  for (const name of names) {
    if (name === '') throw new GatewayError('PARSE_ERROR', `The \`${parameter}\` parameter has an empty column name.`, { hint: `Write ${parameter}=col1,col2.` });
    const column = resolveColumn(table, name, `\`${parameter}\``);
    const times = (mentions.get(column) ?? 0) + 1;
    mentions.set(column, times);
    if (times === 1) columns.push(column);
    else checkLimit('columnRepeats', times, `mentions of \`${column.name}\` in \`${parameter}\``);
  }
  return Object.freeze(columns);
}

function distinctSelect(table: Table, distinct: Column, text: string | undefined): readonly Column[] {
  if (text !== undefined) {
    const selected = parseSelect(table, text);
    if (selected.length !== 1 || selected[0] !== distinct) {
      throw new GatewayError('PARSE_ERROR', `With \`distinct=${distinct.name}\` only that column can be selected.`);
    }
  }
  return Object.freeze([distinct]);
}

/** A sort key of the default grammar: a column of the table, nulls in PostgreSQL's default place. */
function sortKey(column: Column, descending: boolean): OrderTerm {
  return { field: { column, path: [] }, embed: null, descending, nulls: null };
}

/** `sort=a,-b,c:asc,d:desc,user.name`; an entry that is exactly a column name is that column. */
export function parseSort(table: Table, text: string | undefined): OrderTerm[] {
  if (text === undefined) return [];
  const entries = splitList(text, 'sort');
  checkLimit('sortKeys', entries.length, 'entries in `sort`');
  return entries.map((entry) => {
    if (entry === '') throw new GatewayError('PARSE_ERROR', 'The `sort` parameter has an empty entry.', { hint: 'Write sort=col,-col2 or sort=col:desc.' });
    const exact = table.columnsByName.get(entry);
    if (exact) return sortKey(exact, false);
    if (entry.startsWith('-')) return termOf(table, entry.slice(1), true);
    const colon = entry.lastIndexOf(':');
    if (colon > 0) {
      const direction = entry.slice(colon + 1);
      if (direction === 'asc' || direction === 'desc') return termOf(table, entry.slice(0, colon), direction === 'desc');
    }
    return termOf(table, entry, false);
  });
}

function termOf(table: Table, name: string, descending: boolean): OrderTerm {
  const { column, related } = resolveSortField(table, name);
  const term = sortKey(column, descending);
  return related.length === 0 ? term : { ...term, related: Object.freeze(related) };
}

export function parseSearch(table: Table, query: string | undefined, columnsText: string | undefined): Search | null {
  if (query === undefined) {
    if (columnsText !== undefined) throw new GatewayError('PARSE_ERROR', '`search_columns` needs a `search` parameter.');
    return null;
  }
  checkLimit('searchCharacters', query.length, 'characters in `search`');
  checkLimit('searchTerms', query.split(/\s+/).filter((w) => w !== '').length, 'words in `search`');
  const columns = columnsText === undefined ? table.columns.filter((c) => c.category === 'S') : parseSelect(table, columnsText, 'search_columns');
  if (columns.length === 0) throw new GatewayError('PARSE_ERROR', `Table \`${table.name}\` has no text columns to search.`, { hint: 'Name columns with search_columns.' });
  return Object.freeze({ query, columns: Object.freeze([...columns]), explicitColumns: columnsText !== undefined });
}

function parseInteger(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || text.length > MAX_INTEGER_DIGITS) {
    throw new GatewayError('PARSE_ERROR', `\`${name}\` must be a non-negative integer, not \`${clip(text)}\`.`);
  }
  return Number(text);
}
