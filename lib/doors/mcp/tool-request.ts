/**
 * A tool call -> the HTTP request the REST route would get for it (docs/mcp.md, "How a tool call
 * runs"): query_rows is `GET /{table}?...`, get_row `GET /{table}/{key}`, call_function
 * `POST /rpc/{name}`, and so on. The REST door's parse stage then makes the command, so a tool call
 * becomes exactly the Command the REST route builds, and policy, allow-list, rate limit, tenant
 * context and RLS apply unchanged.
 * In: the tool, its arguments (already checked against the tool's input shape), the caller's
 * request (its id, headers and address) and the schema cache (for the order of a composite key).
 * Out: a GatewayRequest. Never: makes a Command or SQL itself, or lets a value change the route
 * (every name and value is percent-encoded or quoted as the REST grammar reads it).
 */
import { GatewayError } from '../../errors/gateway-error';
import type { GatewayRequest } from '../../pipeline/gateway-request';
import type { SchemaCache } from '../../schema/schema-types';
import type { ToolName } from './tool-names';
import { quotedList } from '../shared/split-list';

export type ToolArgs = Readonly<Record<string, unknown>>;

/** The tools that run a command; list_tables and describe_table are answered from the schema cache. */
export type CommandTool = Exclude<ToolName, 'list_tables' | 'describe_table'>;

export interface ToolRequestOptions {
  /** The columns a delete returns (the caller's readable ones), so that delete_row answers the row. */
  readonly returning?: readonly string[];
}

export function toolRequest(tool: CommandTool, args: ToolArgs, caller: GatewayRequest, schema: SchemaCache, options: ToolRequestOptions = {}): GatewayRequest {
  const table = typeof args['table'] === 'string' ? args['table'] : '';
  const query: [string, string][] = [];
  switch (tool) {
    case 'query_rows': {
      const select = args['select'] as readonly string[] | undefined;
      if (select !== undefined) query.push(['select', quotedList(select)]);
      addFilters(query, args['filters']);
      if (typeof args['sort'] === 'string') query.push(['sort', args['sort']]);
      if (typeof args['limit'] === 'number') query.push(['limit', String(args['limit'])]);
      if (typeof args['cursor'] === 'string') query.push(['cursor', args['cursor']]);
      return request(caller, 'GET', [table], query);
    }
    case 'get_row':
      return request(caller, 'GET', [table, keySegment(schema, table, args['key'])], query);
    case 'aggregate':
      query.push(['fn', String(args['fn'])]);
      if (typeof args['column'] === 'string') query.push(['column', quotedList([args['column']])]);
      addFilters(query, args['filters']);
      return request(caller, 'GET', [table, 'aggregate'], query);
    case 'call_function':
      return request(caller, 'POST', ['rpc', encodeURIComponent(String(args['name']))], query, JSON.stringify(args['args'] ?? {}));
    case 'insert_rows':
      return request(caller, 'POST', [table], query, JSON.stringify(args['rows']));
    case 'update_row':
      return request(caller, 'PATCH', [table, keySegment(schema, table, args['key'])], query, JSON.stringify(args['values']));
    case 'delete_row':
      if (options.returning !== undefined && options.returning.length > 0) query.push(['returning', quotedList(options.returning)]);
      return request(caller, 'DELETE', [table, keySegment(schema, table, args['key'])], query);
  }
}

/**
 * `{column, op, value}` -> the key-style filter parameter `column.op=value` (docs/querying.md,
 * "Filters"): the column is found by the key's last dot, so any column name works, a reserved
 * parameter name included.
 */
function addFilters(query: [string, string][], given: unknown): void {
  if (!Array.isArray(given)) return;
  for (const item of given as { column: string; op: string; value: unknown }[]) {
    const { column, op, value } = item;
    if (op === 'in') {
      if (!Array.isArray(value)) throw inputError(`The \`in\` filter on \`${column}\` takes a list of values.`);
      query.push([`${column}.in`, `(${quotedList(value.map(String))})`]);
    } else if (op === 'is_null') {
      if (typeof value !== 'boolean') throw inputError(`The \`is_null\` filter on \`${column}\` takes true or false.`);
      query.push([`${column}.is_null`, String(value)]);
    } else {
      if (Array.isArray(value) || value === null || value === undefined) throw inputError(`The \`${op}\` filter on \`${column}\` takes one value.`);
      query.push([`${column}.${op}`, String(value)]);
    }
  }
}

/**
 * The `:id` segment: the key's values in primary-key order, each percent-encoded, so that a comma
 * in a value is `%2C` and never separates two key columns.
 */
function keySegment(schema: SchemaCache, tableName: string, key: unknown): string {
  if (typeof key === 'string' || typeof key === 'number') return encodeURIComponent(String(key));
  const table = schema.tablesByName.get(tableName);
  const given = key as Record<string, string | number>;
  // An unknown table: any segment; the REST door's parse answers its 404.
  if (table === undefined) return '_';
  const names = table.primaryKey.map((c) => c.name);
  const extra = Object.keys(given).filter((k) => !names.includes(k));
  const missing = names.filter((n) => !(n in given));
  if (extra.length > 0 || missing.length > 0 || names.length === 0) {
    throw inputError(`The key of \`${table.name}\` is ${names.length === 0 ? 'missing: the table has no primary key' : `(${names.join(', ')})`}; give ${names.length === 1 ? 'its value' : 'an object of exactly these columns'}.`);
  }
  return names.map((n) => encodeURIComponent(String(given[n]))).join(',');
}

/**
 * `path`: the first segment as a name (a table, `rpc`), then segments already percent-encoded (a
 * key, a function name, `aggregate`), as digestRequest would have them.
 */
function request(caller: GatewayRequest, method: string, path: readonly string[], query: readonly [string, string][], body?: string): GatewayRequest {
  const raw = path.map((s, i) => (i === 0 ? encodeURIComponent(s) : s));
  return Object.freeze({
    id: caller.id,
    method,
    segments: Object.freeze(raw.map(safeDecode)),
    rawSegments: Object.freeze(raw),
    query: Object.freeze(query.map((q) => Object.freeze(q))),
    // The caller's headers (its token, dev headers where they work), never its body type: a
    // synthesized body is always JSON.
    headers: Object.freeze({ ...caller.headers, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) }),
    body,
    loopback: caller.loopback,
  });
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function inputError(message: string): GatewayError {
  return new GatewayError('PARSE_ERROR', message);
}
