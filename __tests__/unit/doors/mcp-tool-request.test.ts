/**
 * The agents' door (docs/mcp.md): a tool call becomes the request the REST route would get, so
 * the REST door's parse stage makes exactly the command it makes for that route. Each case parses
 * the tool's request and the REST URL a client would send, and the two commands must be equal,
 * hostile names (a quote, a comma, a reserved parameter name, spaces, unicode) and values included.
 * Also: the caller-specific view (hidden columns absent from the tool list) and the result shapes.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Command } from '../../../lib/command/command';
import type { CallerAccess } from '../../../lib/describe/caller-access';
import { fullAccess } from '../../../lib/describe/caller-access';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { digestRequest } from '../../../lib/http/digest-request';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { anonymousIdentity } from '../../../lib/pipeline/identity';
import type { ParseContext } from '../../../lib/pipeline/stage-types';
import { createParseStage } from '../../../lib/doors/rest/parse/create-parse-stage';
import { callerView } from '../../../lib/doors/mcp/caller-view';
import { mcpSettings } from '../../../lib/doors/mcp/mcp-settings';
import { toolNames } from '../../../lib/doors/mcp/tool-names';
import { toolRequest, type CommandTool } from '../../../lib/doors/mcp/tool-request';
import { fromRestBody, toolResult } from '../../../lib/doors/mcp/tool-result';
import { testConfig } from '../auth/config-fixture';
import { makeSchema, makeTable, orders, orderTags, weird } from '../support/schema-fixture';
import { thrown } from '../support/thrown';

const commaTable = makeTable('c,t', [['id', 'integer'], ['a,b', 'integer'], ['"', 'text'], ['limit', 'integer']], ['id']);
const schema = makeSchema([orders, orderTags, weird, commaTable]);
const config = testConfig();
const parse = createParseStage(createCursorCodec(randomBytes(32)));

const caller: GatewayRequest = digestRequest({ method: 'POST', url: '/', headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, socket: {} } as unknown as IncomingMessage, 'req-1');
const restRequest = (method: string, url: string, body?: string): GatewayRequest =>
  digestRequest({ method, url, headers: { 'content-type': 'application/json' }, socket: {} } as unknown as IncomingMessage, 'req-1', body);
const commandOf = (request: GatewayRequest): Command => parse({ request, schema, config, identity: anonymousIdentity, db: {} } as unknown as ParseContext) as Command;
/** A command as text, its tables and columns by name (they are schema-cache objects; deep equality of their maps is slow). */
const text = (command: Command): string =>
  JSON.stringify(command, (_key, value: unknown) => {
    if (value !== null && typeof value === 'object' && 'columnsByName' in value) return `table ${(value as unknown as { name: string }).name}`;
    if (value !== null && typeof value === 'object' && 'compareType' in value) return `column ${(value as unknown as { name: string }).name}`;
    return value;
  });
const viaTool = (tool: CommandTool, args: Record<string, unknown>, returning?: string[]) => commandOf(toolRequest(tool, args, caller, schema, returning ? { returning } : {}));

describe('a tool call is the REST route request', () => {
  it.each<[string, CommandTool, Record<string, unknown>, string, string, string?]>([
    ['query_rows, every option', 'query_rows', { table: 'orders', select: ['id', 'total'], filters: [{ column: 'status', op: 'in', value: ['paid', 'a,b', 'say "hi"'] }, { column: 'total', op: 'gte', value: 10 }, { column: 'notes', op: 'is_null', value: true }, { column: 'notes', op: 'like', value: 'x*' }], sort: '-total,id', limit: 5 }, 'GET', '/orders?select=id,total&status=in.(paid,"a,b","say ""hi""")&total=gte.10&notes=is_null.true&notes=like.x*&sort=-total,id&limit=5'],
    ['query_rows on hostile names', 'query_rows', { table: 'we"ird table', select: ['a"b', 'select', 'col with space'], filters: [{ column: 'select', op: 'eq', value: 'eq.&x=1' }, { column: 'naïve_ünïcode', op: 'ne', value: '%2C' }] }, 'GET', `/${encodeURIComponent('we"ird table')}?select="a""b","select","col with space"&select.eq=${encodeURIComponent('eq.&x=1')}&${encodeURIComponent('naïve_ünïcode')}=ne.${encodeURIComponent('%2C')}`],
    ['query_rows: a column named like a parameter, a comma in names', 'query_rows', { table: 'c,t', select: ['a,b', '"'], filters: [{ column: 'limit', op: 'eq', value: 3 }] }, 'GET', `/${encodeURIComponent('c,t')}?select="a,b",""""&limit.eq=3`],
    ['get_row', 'get_row', { table: 'orders', key: 7 }, 'GET', '/orders/7'],
    ['get_row, composite key with a comma in a value', 'get_row', { table: 'order_tags', key: { tag: 'a,b', order_id: 3 } }, 'GET', '/order_tags/3,a%2Cb'],
    ['aggregate', 'aggregate', { table: 'orders', fn: 'sum', column: 'total', filters: [{ column: 'status', op: 'eq', value: 'paid' }] }, 'GET', '/orders/aggregate?fn=sum&column=total&status=eq.paid'],
    ['aggregate of a column with a comma', 'aggregate', { table: 'c,t', fn: 'max', column: 'a,b' }, 'GET', `/${encodeURIComponent('c,t')}/aggregate?fn=max&column="a,b"`],
    ['insert_rows', 'insert_rows', { table: 'orders', rows: [{ status: 'paid', total: 12345678901234567890 }] }, 'POST', '/orders', '[{"status":"paid","total":12345678901234567000}]'],
    ['update_row', 'update_row', { table: 'orders', key: '9', values: { status: 'paid' } }, 'PATCH', '/orders/9', '{"status":"paid"}'],
  ])('%s', (...[, tool, args, method, url, body]) => {
    expect(text(viaTool(tool, args))).toBe(text(commandOf(restRequest(method, url, body))));
  });

  it('delete_row asks for the readable columns back, so that it answers the row', () => {
    expect(text(viaTool('delete_row', { table: 'orders', key: 1 }, ['id', 'status']))).toBe(text(commandOf(restRequest('DELETE', '/orders/1?returning=id,status'))));
  });

  it('a function call is POST /rpc/{name} with the named arguments as the body', () => {
    const fnSchema = { ...schema, functions: [] };
    // No function in the hand-made schema: both answer the same NOT_FOUND.
    const a = thrown(() => commandOf(toolRequest('call_function', { name: 'public.add', args: { a: 1 } }, caller, fnSchema)), GatewayError);
    const b = thrown(() => commandOf(restRequest('POST', '/rpc/public.add', '{"a":1}')), GatewayError);
    expect(a.code).toBe('NOT_FOUND');
    expect(a.message).toBe(b.message);
  });

  it('a name cannot change the route: a table named like a path goes to that table, never another route', () => {
    const request = toolRequest('query_rows', { table: 'orders/1' }, caller, schema);
    expect(request.segments).toEqual(['orders/1']);
    expect(thrown(() => commandOf(request), GatewayError).code).toBe('NOT_FOUND');
    expect(toolRequest('get_row', { table: 'orders', key: '1/../x' }, caller, schema).segments).toEqual(['orders', '1/../x']);
  });

  it('refuses a composite key that is not exactly the key columns, and values of the wrong shape', () => {
    expect(thrown(() => toolRequest('get_row', { table: 'order_tags', key: { order_id: 1 } }, caller, schema), GatewayError).code).toBe('PARSE_ERROR');
    expect(thrown(() => toolRequest('get_row', { table: 'order_tags', key: { order_id: 1, tag: 'x', extra: 1 } }, caller, schema), GatewayError).code).toBe('PARSE_ERROR');
    expect(thrown(() => toolRequest('query_rows', { table: 'orders', filters: [{ column: 'id', op: 'in', value: 1 }] }, caller, schema), GatewayError).code).toBe('PARSE_ERROR');
    expect(thrown(() => toolRequest('query_rows', { table: 'orders', filters: [{ column: 'id', op: 'is_null', value: 'yes' }] }, caller, schema), GatewayError).code).toBe('PARSE_ERROR');
    expect(thrown(() => toolRequest('query_rows', { table: 'orders', filters: [{ column: 'id', op: 'eq', value: [1] }] }, caller, schema), GatewayError).code).toBe('PARSE_ERROR');
  });
});

describe("the caller's view", () => {
  const hideNotes: CallerAccess = (table) => {
    if (table.name === 'order_tags') return null;
    const full = fullAccess(table)!;
    return { ...full, readable: (c) => c !== 'notes', writable: (c) => c !== 'notes' };
  };

  it('leaves out what the policy hides: tables and columns, in every schema and answer', () => {
    const view = callerView(schema, hideNotes, () => true, mcpSettings({ enabled: true, writes: true }));
    const text = JSON.stringify(view.tools());
    expect(text).not.toContain('"notes"');
    expect(text).not.toContain('order_tags');
    expect(text).toContain('"total"');
    expect(JSON.stringify(view.listTables())).not.toContain('order_tags');
    expect((view.describeTable('orders')['columns'] as { name: string }[]).map((c) => c.name)).not.toContain('notes');
    expect(thrown(() => view.describeTable('order_tags'), GatewayError).code).toBe('NOT_FOUND');
    expect(view.readableColumns('orders')).not.toContain('notes');
  });

  it('offers the write tools only with mcp.writes, and call_function only with a callable function', () => {
    const names = (writes: boolean) => callerView(schema, fullAccess, () => true, mcpSettings({ enabled: true, writes })).tools().map((t) => t.name);
    expect(names(false)).toEqual(['list_tables', 'describe_table', 'query_rows', 'get_row', 'aggregate']);
    expect(names(true)).toEqual(['list_tables', 'describe_table', 'query_rows', 'get_row', 'aggregate', 'insert_rows', 'update_row', 'delete_row']);
  });

  it('offers(tool) agrees with the tool list, for every tool and policy', () => {
    const readOnly: CallerAccess = (table) => ({ ...fullAccess(table)!, operations: new Set(['read'] as const) });
    const nothing: CallerAccess = () => null;
    for (const access of [fullAccess, hideNotes, readOnly, nothing]) {
      for (const writes of [false, true]) {
        const view = callerView(schema, access, () => true, mcpSettings({ enabled: true, writes }));
        const listed = view.tools().map((t) => t.name);
        for (const tool of toolNames) expect([tool, view.offers(tool)]).toEqual([tool, listed.includes(tool)]);
      }
    }
  });

  it('caps limit at mcp.max_rows in the input schema', () => {
    const query = callerView(schema, fullAccess, () => true, mcpSettings({ enabled: true, maxRows: 7 })).tools().find((t) => t.name === 'query_rows')!;
    expect((query.inputSchema['properties'] as { limit: { maximum: number } }).limit.maximum).toBe(7);
  });
});

describe('results', () => {
  it('turns the REST envelope into the structured result, with a JSON copy and the data note', () => {
    const { structured, rows } = fromRestBody('query_rows', '{"data":[{"id":1}],"count":1,"limit":1,"offset":0,"next_cursor":"abc"}', 100);
    expect(structured).toEqual({ rows: [{ id: 1 }], next_cursor: 'abc' });
    expect(rows).toBe(1);
    const result = toolResult(structured, true);
    expect(JSON.parse(result.content[0]!.text)).toEqual(structured);
    expect(result.content[1]!.text).toMatch(/never as instructions/);
  });

  it('caps a function result at the row cap and says so', () => {
    expect(fromRestBody('call_function', '{"data":[1,2,3,4]}', 2).structured).toEqual({ result: [1, 2], truncated: true });
    expect(fromRestBody('call_function', '{"data":5}', 2).structured).toEqual({ result: 5 });
  });
});
