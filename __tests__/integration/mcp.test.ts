/**
 * The agents' door (docs/mcp.md), through the official SDK's Client over Streamable HTTP, against
 * real gateways on real PostgreSQL as tablegate_app (no BYPASSRLS, RLS forced, tenants A and B):
 * identity and bad tokens, the tools per caller (policy-hidden columns), reads equal to the REST
 * route's for the same token, app.current_agent_id in RLS, read-only containment, the row cap,
 * writes when enabled, the allow-lists, the agent's call cap, metrics, and bad tool input.
 */
import express from 'express';
import request from 'supertest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { bearer, callTool, connect, failure, listen, ok, type Listening } from '../support/mcp-client';
import { useTempFiles } from '../unit/support/temp-files';

const files = useTempFiles('mcp-');
let db: TestDatabase;
const opened: { gateway: Gateway; listening: Listening }[] = [];
const clients: Client[] = [];

const agentA1 = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member', agent_id: 'bot-1' });
const agentA2 = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member', agent_id: 'bot-2' });
const agentB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member', agent_id: 'bot-9' });

/** Hides orders.notes and audit_log from everyone (docs/access-policy.md). */
const POLICY = {
  default_decision: 'allow',
  tables: {
    orders: { operations: ['read', 'create', 'update', 'delete'], read_columns: { except: ['notes'] }, write_columns: { except: ['notes'] } },
    audit_log: { operations: ['create'] },
  },
};

beforeAll(async () => {
  db = await createTestDatabase();
  // A table whose RLS policy reads the agent as well as the tenant: app.current_agent_id.
  await db.admin.query(`
    CREATE TABLE agent_notes (
      id serial PRIMARY KEY,
      tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
      agent_id text NOT NULL DEFAULT current_setting('app.current_agent_id', true),
      body text NOT NULL
    );
    ALTER TABLE agent_notes ENABLE ROW LEVEL SECURITY;
    ALTER TABLE agent_notes FORCE ROW LEVEL SECURITY;
    CREATE POLICY per_agent ON agent_notes
      USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid
             AND agent_id = current_setting('app.current_agent_id', true));
    GRANT SELECT, INSERT, UPDATE, DELETE ON agent_notes TO tablegate_app;
    GRANT USAGE ON SEQUENCE agent_notes_id_seq TO tablegate_app;
    INSERT INTO agent_notes (tenant_id, agent_id, body) VALUES
      ('${TENANT_A}', 'bot-1', 'a1 first'), ('${TENANT_A}', 'bot-1', 'a1 second'),
      ('${TENANT_A}', 'bot-2', 'a2 only'), ('${TENANT_B}', 'bot-1', 'b, under the agent id of a1'), ('${TENANT_B}', 'bot-9', 'b9 only');
  `);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  for (const { gateway, listening } of opened) {
    await listening.close();
    await gateway.close();
  }
  await db?.drop();
});

/** A gateway with the REST routes at /api and the MCP endpoint at /mcp, listening on a port. */
async function start(options: Partial<GatewayOptions> = {}): Promise<{ url: string; gateway: Gateway; app: express.Express }> {
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, mcp: { enabled: true }, ...options } as GatewayOptions);
  await gateway.ready;
  const app = express().use('/api', gateway).use('/mcp', gateway.mcp).use('/admin', gateway.admin);
  const listening = await listen(app);
  opened.push({ gateway, listening });
  return { url: listening.url, gateway, app };
}

async function client(url: string, token: string): Promise<Client> {
  const c = await connect(`${url}/mcp`, bearer(token));
  clients.push(c);
  return c;
}

describe('the endpoint and identity', () => {
  let url: string;
  let app: express.Express;
  beforeAll(async () => {
    ({ url, app } = await start({ mcp: { enabled: true, authorizationServers: ['https://auth.example.com'] } }));
  });

  it('is off unless mcp.enabled: gateway.mcp answers 404 NOT_FOUND', async () => {
    const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET });
    opened.push({ gateway, listening: { url: '', close: async () => undefined } });
    const res = await request(express().use('/mcp', gateway.mcp)).post('/mcp').set('Authorization', `Bearer ${agentA1}`).send({});
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });

  it('answers no token and bad tokens with 401 and WWW-Authenticate naming the resource metadata', async () => {
    const metadata = /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/mcp\/\.well-known\/oauth-protected-resource"/;
    const none = await request(app).post('/mcp').send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('UNAUTHORIZED');
    const forged = signToken({ tenant_id: TENANT_A, user_id: 'alice', agent_id: 'bot-1' }, 'not-the-secret');
    const expired = signToken({ tenant_id: TENANT_A, user_id: 'alice' }, TEST_JWT_SECRET, { expiresIn: -3600 });
    for (const token of [forged, expired, 'garbage']) {
      const res = await request(app).post('/mcp').set('Authorization', `Bearer ${token}`).send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(metadata);
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
    }
    // With the official client too: connecting with a forged token fails.
    await expect(connect(`${url}/mcp`, bearer(forged))).rejects.toThrow();
  });

  it('serves the OAuth Protected Resource Metadata (RFC 9728) naming the configured authorization servers', async () => {
    const res = await request(app).get('/mcp/.well-known/oauth-protected-resource');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ resource: expect.stringMatching(/\/mcp$/), authorization_servers: ['https://auth.example.com'], bearer_methods_supported: ['header'], resource_name: 'tablegate' });
  });

  it('answers GET and DELETE (no stream, no session: stateless) with 405 after authenticating', async () => {
    expect((await request(app).get('/mcp')).status).toBe(401);
    for (const method of ['get', 'delete'] as const) {
      const res = await request(app)[method]('/mcp').set('Authorization', `Bearer ${agentA1}`);
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('POST');
    }
  });

  it('runs as the token: tenant, user and agent reach the transaction (session_context), read-only', async () => {
    const c = await client(url, agentA1);
    const { rows } = await ok(c, 'query_rows', { table: 'session_context' });
    expect(rows).toEqual([expect.objectContaining({ tenant_id: TENANT_A, user_id: 'alice', agent_id: 'bot-1', read_only: 'on', db_user: 'tablegate_app' })]);
  });

  it('agent_id reaches RLS as app.current_agent_id: each agent sees its own notes only', async () => {
    const bodies = async (token: string) => ((await ok(await client(url, token), 'query_rows', { table: 'agent_notes', sort: 'id' }))['rows'] as { body: string }[]).map((r) => r.body);
    expect(await bodies(agentA1)).toEqual(['a1 first', 'a1 second']);
    expect(await bodies(agentA2)).toEqual(['a2 only']);
    expect(await bodies(agentB)).toEqual(['b9 only']);
  });

  it('dev-mode headers do not authenticate where they do not for REST (dev mode off)', async () => {
    const res = await request(app).post('/mcp').set({ 'x-tenant-id': TENANT_A, 'x-user-id': 'alice' }).send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(401);
  });
});

describe('tools, reads and errors (policy hides orders.notes and audit_log)', () => {
  let url: string;
  let app: express.Express;
  let a: Client;
  let b: Client;
  beforeAll(async () => {
    ({ url, app } = await start({ access: { policy: POLICY } }));
    a = await client(url, agentA1);
    b = await client(url, agentB);
  });

  it('lists the read tools only (writes off), read-only, with input and output schemas', async () => {
    const { tools } = await a.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['aggregate', 'call_function', 'describe_table', 'get_row', 'list_tables', 'query_rows']);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    expect(tools.find((t) => t.name === 'query_rows')!.description).toMatch(/data .*never instructions/);
  });

  it('hides what the policy hides: absent from the tool list, list_tables and describe_table', async () => {
    const { tools } = await a.listTools();
    const text = JSON.stringify(tools);
    expect(text).toContain('"orders"');
    expect(text).toContain('"total"');
    expect(text).not.toContain('"notes"');
    expect(text).not.toContain('audit_log');
    const { tables } = (await ok(a, 'list_tables')) as { tables: { name: string }[] };
    expect(tables.map((t) => t.name)).toContain('orders');
    expect(tables.map((t) => t.name)).not.toContain('audit_log');
    const described = await ok(a, 'describe_table', { table: 'orders' });
    expect((described['columns'] as { name: string }[]).map((c) => c.name)).toEqual(['id', 'tenant_id', 'user_id', 'placed_at', 'status', 'total']);
    expect(described['columns']).toContainEqual({ name: 'id', type: 'bigint', nullable: false, key: true });
    expect(described['relations']).toContainEqual({ kind: 'many-to-one', table: 'users', columns: ['user_id'], references: ['id'] });
    expect(await failure(a, 'describe_table', { table: 'audit_log' })).toBe('NOT_FOUND');
    // Named anyway: refused as over REST, before SQL.
    expect(await failure(a, 'query_rows', { table: 'orders', select: ['id', 'notes'] })).toBe('FORBIDDEN');
    expect(await failure(a, 'query_rows', { table: 'audit_log' })).toBe('FORBIDDEN');
  });

  it('query_rows returns what the REST list returns to the same token, page by page with next_cursor', async () => {
    const rest = await request(app).get('/api/orders?sort=id&limit=1000').set('Authorization', `Bearer ${agentA1}`);
    expect(rest.status).toBe(200);
    const seen: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await ok(a, 'query_rows', { table: 'orders', sort: 'id', limit: 100, ...(cursor ? { cursor } : {}) });
      seen.push(...(answer['rows'] as unknown[]));
      cursor = answer['next_cursor'] as string | undefined;
      if (cursor === undefined) break;
    }
    expect(seen).toEqual(rest.body.data);
    expect(seen).toHaveLength(120);
  });

  it('filters with the list route operators, select and sort', async () => {
    const { rows } = (await ok(a, 'query_rows', {
      table: 'orders',
      select: ['id', 'status', 'total'],
      filters: [{ column: 'status', op: 'in', value: ['paid', 'shipped'] }, { column: 'total', op: 'gte', value: 10 }, { column: 'user_id', op: 'is_null', value: false }],
      sort: '-total,id',
      limit: 50,
    })) as { rows: { id: number; status: string; total: string }[] };
    const rest = await request(app).get('/api/orders?select=id,status,total&status=in.(paid,shipped)&total=gte.10&user_id=is_null.false&sort=-total,id&limit=50').set('Authorization', `Bearer ${agentA1}`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows).toEqual(rest.body.data);
    expect(Object.keys(rows[0]!)).toEqual(['id', 'status', 'total']);
  });

  it('get_row (single and composite keys), aggregate and call_function answer as REST does, within the tenant', async () => {
    const [{ id }] = (await db.admin.query<{ id: string }>(`SELECT id FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT 1`, [TENANT_A])).rows as [{ id: string }];
    const row = (await ok(a, 'get_row', { table: 'orders', key: Number(id) }))['row'] as Record<string, unknown>;
    expect(row['id']).toBe(Number(id));
    expect(row).not.toHaveProperty('notes');
    const [tag] = (await db.admin.query<{ order_id: string; tag: string }>(`SELECT order_id, tag FROM order_tags WHERE tenant_id = $1 LIMIT 1`, [TENANT_A])).rows;
    expect((await ok(a, 'get_row', { table: 'order_tags', key: { order_id: tag!.order_id, tag: tag!.tag } }))['row']).toMatchObject({ tag: tag!.tag });
    expect(await failure(a, 'get_row', { table: 'order_tags', key: { order_id: tag!.order_id } })).toBe('PARSE_ERROR');
    expect((await ok(a, 'aggregate', { table: 'orders', fn: 'count' }))['value']).toBe(120);
    expect((await ok(b, 'aggregate', { table: 'orders', fn: 'count' }))['value']).toBe(80);
    const rest = await request(app).get('/api/orders/aggregate?fn=sum&column=total&status=eq.paid').set('Authorization', `Bearer ${agentA1}`);
    expect((await ok(a, 'aggregate', { table: 'orders', fn: 'sum', column: 'total', filters: [{ column: 'status', op: 'eq', value: 'paid' }] }))['value']).toEqual(rest.body.data.value);
    expect((await ok(a, 'call_function', { name: 'public.add', args: { a: 2, b: 40 } }))['result']).toBe(42);
    expect((await ok(b, 'call_function', { name: 'public.current_tenant' }))['result']).toBe(TENANT_B);
  });

  it('read tools run read-only: a writing function is refused (FORBIDDEN), and says so', async () => {
    expect((await ok(a, 'call_function', { name: 'public.is_read_only' }))['result']).toBe('on');
    expect(await failure(a, 'call_function', { name: 'public.add_audit', args: { p_action: 'agent wrote' } })).toBe('FORBIDDEN');
    const { rows } = await db.admin.query(`SELECT 1 FROM audit_log WHERE message = 'agent wrote'`);
    expect(rows).toHaveLength(0);
  });

  it('marks returned rows as data, not instructions', async () => {
    const answer = await callTool(a, 'query_rows', { table: 'orders', limit: 1 });
    expect(answer.ok).toBe(true);
    expect(answer.text).toMatch(/untrusted data, never as instructions/);
  });

  it('bad tool input: stable codes from the catalogue, never SQL or a stack', async () => {
    expect(await failure(a, 'query_rows', { table: 'orders', filters: [{ column: 'nope', op: 'eq', value: 1 }] })).toBe('UNKNOWN_COLUMN');
    expect(await failure(a, 'query_rows', { table: 'orders', filters: [{ column: 'id', op: 'regex', value: 1 }] })).toBe('PARSE_ERROR');
    expect(await failure(a, 'query_rows', { table: 'orders', limit: 101 })).toBe('PARSE_ERROR');
    expect(await failure(a, 'query_rows', { table: 'orders', sql: 'SELECT 1' })).toBe('PARSE_ERROR');
    expect(await failure(a, 'query_rows', { table: 'no_such_table' })).toBe('NOT_FOUND');
    expect(await failure(a, 'query_rows', { table: 'orders', filters: [{ column: 'total', op: 'eq', value: 'abc' }] })).toBe('VALIDATION_ERROR');
    expect(await failure(a, 'query_rows', { table: 'orders', sort: 'nope' })).toBe('UNKNOWN_COLUMN');
    expect(await failure(a, 'query_rows', { table: 'orders', cursor: 'forged' })).toBe('PARSE_ERROR');
    expect(await failure(a, 'get_row', { table: 'orders', key: 'not-a-number' })).toBe('VALIDATION_ERROR');
    expect(await failure(a, 'call_function', { name: 'public.fail_with', args: { message: 'boom' } })).toBe('VALIDATION_ERROR');
    expect(await failure(a, 'call_function', { name: 'public.no_such_function' })).toBe('NOT_FOUND');
    expect(await failure(a, 'insert_rows', { table: 'orders', rows: [{}] })).toBe('NOT_FOUND');
    expect(await failure(a, 'drop_table', { table: 'orders' })).toBe('NOT_FOUND');
  });

  it('counts every tool call by tool and outcome (mcp_tool_calls_total)', async () => {
    await ok(a, 'list_tables');
    await failure(a, 'query_rows', { table: 'orders', limit: 101 });
    const metrics = (await request(app).get('/admin/metrics')).text;
    expect(metrics).toMatch(/tablegate_mcp_tool_calls_total\{tool="list_tables",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/tablegate_mcp_tool_calls_total\{tool="query_rows",outcome="PARSE_ERROR"\} [1-9]/);
    expect(metrics).toMatch(/tablegate_mcp_tool_calls_total\{tool="unknown",outcome="NOT_FOUND"\} [1-9]/);
  });
});

describe('containment settings', () => {
  it('caps rows at mcp.max_rows (default page included) and pages on with next_cursor', async () => {
    const { url } = await start({ mcp: { enabled: true, maxRows: 3 } });
    const c = await client(url, agentA1);
    const first = await ok(c, 'query_rows', { table: 'orders', sort: 'id' });
    expect(first['rows']).toHaveLength(3);
    expect(typeof first['next_cursor']).toBe('string');
    const second = await ok(c, 'query_rows', { table: 'orders', sort: 'id', cursor: first['next_cursor'] });
    expect((second['rows'] as { id: number }[])[0]!.id).toBeGreaterThan((first['rows'] as { id: number }[])[2]!.id);
    expect(await failure(c, 'query_rows', { table: 'orders', limit: 4 })).toBe('PARSE_ERROR');
    // A set-returning function's rows are capped too.
    const called = await ok(c, 'call_function', { name: 'public.order_ids', args: { p_limit: 10 } });
    expect(called['truncated']).toBe(true);
    expect(called['result']).toHaveLength(3);
  });

  it('mcp.calls_per_minute caps each agent, on its own count (RATE_LIMITED)', async () => {
    const { url } = await start({ mcp: { enabled: true, callsPerMinute: 2 } });
    const one = await client(url, agentA1);
    const two = await client(url, agentA2);
    await ok(one, 'list_tables');
    await ok(one, 'list_tables');
    expect(await failure(one, 'list_tables')).toBe('RATE_LIMITED');
    // Another agent of the same tenant and user has its own count.
    await ok(two, 'list_tables');
  });

  it('rate_limit applies to tool calls as to REST requests, per command kind', async () => {
    const { url } = await start({ rateLimit: { requests: 1, windowS: 60, store: 'memory' } });
    const c = await client(url, agentA1);
    await ok(c, 'query_rows', { table: 'orders', limit: 1 });
    expect(await failure(c, 'query_rows', { table: 'orders', limit: 1 })).toBe('RATE_LIMITED');
    await ok(c, 'aggregate', { table: 'orders', fn: 'count' });
  });

  it('the query allow-list applies (QUERY_NOT_ALLOWED) and the function allow-list hides and refuses', async () => {
    const queries = files.write('allow.txt', 'GET orders status=eq\n');
    const functions = files.write('functions.txt', 'public.add\n');
    const { url } = await start({ allowListPath: queries, rpcAllowlistPath: functions });
    const c = await client(url, agentA1);
    expect((await ok(c, 'query_rows', { table: 'orders', filters: [{ column: 'status', op: 'eq', value: 'paid' }] }))['rows']).not.toHaveLength(0);
    expect(await failure(c, 'query_rows', { table: 'orders', filters: [{ column: 'status', op: 'ne', value: 'paid' }] })).toBe('QUERY_NOT_ALLOWED');
    expect(await failure(c, 'query_rows', { table: 'users' })).toBe('QUERY_NOT_ALLOWED');
    const { tools } = await c.listTools();
    const callFunction = tools.find((t) => t.name === 'call_function')!;
    expect((callFunction.inputSchema.properties as { name: { enum: string[] } }).name.enum).toEqual(['public.add']);
    expect((await ok(c, 'call_function', { name: 'public.add', args: { a: 1, b: 1 } }))['result']).toBe(2);
    expect(await failure(c, 'call_function', { name: 'public.current_tenant' })).toBe('RPC_NOT_ALLOWED');
  });

  it('RPC hardening applies: an unqualified name is refused with rpc_require_schema_qualified', async () => {
    const { url } = await start({ rpcRequireSchemaQualified: true });
    const c = await client(url, agentA1);
    expect(await failure(c, 'call_function', { name: 'add', args: { a: 1, b: 2 } })).toBe('RPC_NAME_NOT_QUALIFIED');
    expect((await ok(c, 'call_function', { name: 'public.add', args: { a: 1, b: 2 } }))['result']).toBe(3);
  });

  it("serves the same tools beside a PostgREST-dialect mount: tool calls are REST requests whatever the mount's door", async () => {
    const { url } = await start({ dialect: 'postgrest' });
    const c = await client(url, agentA1);
    expect((await ok(c, 'aggregate', { table: 'orders', fn: 'count' }))['value']).toBe(120);
    expect((await ok(c, 'query_rows', { table: 'orders', filters: [{ column: 'status', op: 'in', value: ['paid'] }], limit: 3 }))['rows']).toHaveLength(3);
  });

  it('dev-mode headers work where they work for REST (dev mode, loopback)', async () => {
    const { url } = await start({ devMode: true });
    const c = await connect(`${url}/mcp`, { 'x-tenant-id': TENANT_B, 'x-user-id': 'dev' });
    clients.push(c);
    expect((await ok(c, 'aggregate', { table: 'orders', fn: 'count' }))['value']).toBe(80);
  });
});

describe('shutting down', () => {
  it('a client that goes away mid-call does not hold gateway.close() until the drain timeout', async () => {
    const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, mcp: { enabled: true }, drainTimeoutMs: 25000 });
    await gateway.ready;
    const listening = await listen(express().use('/mcp', gateway.mcp));
    try {
      const aborted = new AbortController();
      // slow_view sleeps 2 s; the client gives up after 300 ms.
      const sent = fetch(`${listening.url}/mcp`, {
        method: 'POST',
        signal: aborted.signal,
        headers: { authorization: `Bearer ${agentA1}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query_rows', arguments: { table: 'slow_view' } } }),
      }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
      aborted.abort();
      await sent;
      const started = Date.now();
      await gateway.close();
      expect(Date.now() - started).toBeLessThan(10000);
    } finally {
      await listening.close();
    }
  });
});

describe('write tools (mcp.writes = true)', () => {
  let url: string;
  let a: Client;
  let b: Client;
  beforeAll(async () => {
    ({ url } = await start({ mcp: { enabled: true, writes: true }, access: { policy: POLICY } }));
    a = await client(url, agentA1);
    b = await client(url, agentB);
  });

  it('offers insert_rows, update_row and delete_row, on the tables the policy lets it write', async () => {
    const { tools } = await a.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['insert_rows', 'update_row', 'delete_row']));
    const insert = tools.find((t) => t.name === 'insert_rows')!;
    expect(insert.annotations?.readOnlyHint).toBe(false);
    expect(JSON.stringify(insert.inputSchema)).not.toContain('"notes"');
    // audit_log may be created into but not read: like the caller's OpenAPI document, the door leaves it out.
    expect(JSON.stringify(insert.inputSchema)).toContain('"orders"');
    expect(JSON.stringify(insert.inputSchema)).not.toContain('audit_log');
  });

  it('writes as the caller: rows land in its tenant, under its agent, and come back without hidden columns', async () => {
    const inserted = (await ok(a, 'insert_rows', { table: 'orders', rows: [{ status: 'pending', total: '12.50' }, { status: 'paid', total: 3 }] }))['rows'] as { id: number; tenant_id: string }[];
    expect(inserted).toHaveLength(2);
    for (const row of inserted) {
      expect(row.tenant_id).toBe(TENANT_A);
      expect(row).not.toHaveProperty('notes');
    }
    const updated = (await ok(a, 'update_row', { table: 'orders', key: inserted[0]!.id, values: { status: 'paid' } }))['row'];
    expect(updated).toMatchObject({ id: inserted[0]!.id, status: 'paid' });
    const deleted = (await ok(a, 'delete_row', { table: 'orders', key: inserted[1]!.id }))['row'];
    expect(deleted).toMatchObject({ id: inserted[1]!.id });
    expect(deleted).not.toHaveProperty('notes');
    const { rows } = await db.admin.query(`SELECT tenant_id, status FROM orders WHERE id = ANY($1)`, [inserted.map((r) => r.id)]);
    expect(rows).toEqual([{ tenant_id: TENANT_A, status: 'paid' }]);
    const note = (await ok(a, 'insert_rows', { table: 'agent_notes', rows: [{ body: 'written by bot-1' }] }))['rows'] as { agent_id: string }[];
    expect(note[0]!.agent_id).toBe('bot-1');
  });

  it("another tenant's rows cannot be updated or deleted, and hidden columns cannot be written", async () => {
    const [{ id }] = (await db.admin.query<{ id: string }>(`SELECT id FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT 1`, [TENANT_A])).rows as [{ id: string }];
    const before = (await db.admin.query(`SELECT to_jsonb(o) AS row FROM orders o WHERE id = $1`, [id])).rows;
    expect(await failure(b, 'update_row', { table: 'orders', key: Number(id), values: { status: 'cancelled' } })).toBe('NOT_FOUND');
    expect(await failure(b, 'delete_row', { table: 'orders', key: Number(id) })).toBe('NOT_FOUND');
    expect(await failure(a, 'update_row', { table: 'orders', key: Number(id), values: { notes: 'x' } })).toBe('FORBIDDEN');
    expect((await db.admin.query(`SELECT to_jsonb(o) AS row FROM orders o WHERE id = $1`, [id])).rows).toEqual(before);
    // A row for another tenant is refused by RLS's WITH CHECK, nothing written.
    expect(await failure(a, 'insert_rows', { table: 'orders', rows: [{ tenant_id: TENANT_B, status: 'pending' }] })).toBe('FORBIDDEN');
  });

  it('call_function may write when writes are on (read-write transaction)', async () => {
    expect((await ok(a, 'call_function', { name: 'public.is_read_only' }))['result']).toBe('off');
    await ok(a, 'call_function', { name: 'public.add_audit', args: { p_action: 'agent audit' } });
    const { rows } = await db.admin.query(`SELECT tenant_id FROM audit_log WHERE message = 'agent audit'`);
    expect(rows).toEqual([{ tenant_id: TENANT_A }]);
  });
});
