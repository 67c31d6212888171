/**
 * POST /rpc/{function} and GET /_rpc/contracts over HTTP against real PostgreSQL, as the RLS-bound
 * app role: the four body forms, overloads, defaults, VARIADIC, exact numbers, every result shape,
 * transaction modes, errors, and the three hardening keys. Functions: fixtures 010 and 040.
 * Expected tenant data is computed by the superuser (db.admin), which bypasses RLS.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, GatewayConfigError } from '../../lib';
import { itDirect, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { gatewayFactory, startGatewayApp, stopGatewayApp, type GatewayApp } from '../support/gateway-app';
import { useTempFiles } from '../unit/support/temp-files';

let started: GatewayApp;
const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'rpc-a' });
const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'rpc-b' });
const files = useTempFiles('rpc-');

beforeAll(async () => {
  started = await startGatewayApp({ schemas: ['public', 'rpc_extra'] });
});

afterAll(async () => {
  await apps.closeAll();
  await stopGatewayApp(started);
});

/** POST /api/rpc/<name> with `body` sent as raw JSON text (undefined: no body at all). */
function call(name: string, body?: string, token = tokenA, app: express.Express = started.app): request.Test {
  const req = request(app).post(`/api/rpc/${name}`).set('Authorization', `Bearer ${token}`);
  return body === undefined ? req : req.set('Content-Type', 'application/json').send(body);
}

async function data(name: string, body?: string, token = tokenA): Promise<unknown> {
  const res = await call(name, body, token);
  expect(res.status).toBe(200);
  return res.body.data;
}

const apps = gatewayFactory(() => ({ databaseUrl: started.db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['public', 'rpc_extra'] }));
const appWith = apps.appWith;

const asTenant = async <T>(tenant: string, text: string, values: unknown[] = []): Promise<T[]> => {
  const client = await started.db.admin.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT set_config('app.current_tenant_id', $1, true)", [tenant]);
    const { rows } = await client.query(text, values);
    await client.query('ROLLBACK');
    return rows as T[];
  } finally {
    client.release();
  }
};

describe('body forms', () => {
  it('takes named arguments (object), positional ones (array), one scalar, and no body', async () => {
    expect(await data('add', '{"a": 2, "b": 3}')).toBe(5);
    expect(await data('add', '{"b": 3, "a": 2}')).toBe(5);
    expect(await data('add', '[2, 3]')).toBe(5);
    expect(await data('double_it', '21')).toBe(42);
    expect(await data('echo_numeric', 'null')).toBeNull();
    expect(await data('current_tenant')).toBe(TENANT_A);
    expect(await data('current_tenant', '[]')).toBe(TENANT_A);
    expect(await data('current_tenant', '{}')).toBe(TENANT_A);
  });

  it('fills defaults: any defaulted argument by name, trailing ones by position', async () => {
    expect(await data('greet', '{"name": "Ann"}')).toBe('Hello, Ann!');
    expect(await data('greet', '{"name": "Ann", "punctuation": "?"}')).toBe('Hello, Ann?');
    expect(await data('greet', '["Ann", "Hi"]')).toBe('Hi, Ann!');
    expect(await data('greet', '"Bo"')).toBe('Hello, Bo!');
  });

  it('spreads positional values into a VARIADIC argument, and takes the array by name', async () => {
    expect(await data('sum_all', '[1, 2, 3.5]')).toBe(6.5);
    expect(await data('sum_all', '[7]')).toBe(7);
    expect(await data('sum_all', '{"nums": [1, 2]}')).toBe(3);
  });

  it('chooses among overloads by the JSON type of the value, and refuses to guess', async () => {
    expect(await data('describe_value', '5')).toBe('integer 5');
    expect(await data('describe_value', '"five"')).toBe('text five');
    expect(await data('describe_value', 'true')).toBe('boolean true');
    expect(await data('describe_value', '{"v": 6}')).toBe('integer 6');
    const ambiguous = await call('describe_value', 'null');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.code).toBe('RPC_SIGNATURE_MISMATCH');
    expect(ambiguous.body.details.signatures).toEqual(expect.arrayContaining(['public.describe_value(v integer)', 'public.describe_value(v text)']));
  });

  it('keeps numbers exact both ways, and passes json, arrays and timestamps through', async () => {
    const big = await call('echo_bigint', '[9007199254740993]');
    expect(big.text).toBe('{"data":9007199254740993}');
    const numeric = await call('echo_numeric', '{"n": 12345678901234567890.123456789012}');
    expect(numeric.text).toBe('{"data":12345678901234567890.123456789012}');
    expect((await call('echo_ids', '{"ids": [1, 9007199254740993]}')).text).toBe('{"data":[1,9007199254740993]}');
    expect((await call('echo_ids', '[[3, 4]]')).text).toBe('{"data":[3,4]}');
    expect(await data('echo_json', '{"doc": {"a": [1, {"b": null}], "s": "x"}}')).toEqual({ a: [1, { b: null }], s: 'x' });
    expect(await data('echo_time', '["2024-05-06T07:08:09.123+02:00"]')).toBe('2024-05-06T05:08:09.123+00:00');
  });

  it('calls a function whose name and argument need quoting', async () => {
    expect(await data('Shout%20It', '{"the text": "hi"}')).toBe('HI!');
  });
});

describe('result shapes and tenant data (RLS inside the function)', () => {
  it('renders OUT parameters as an object, RETURNS TABLE as an array of objects, a row type as an object, SETOF scalar as an array', async () => {
    for (const [tenant, token] of [[TENANT_A, tokenA], [TENANT_B, tokenB]] as const) {
      const [stats] = await asTenant<{ order_count: string; total_sum: string }>(tenant, 'SELECT count(*)::text AS order_count, coalesce(sum(total), 0)::text AS total_sum FROM orders WHERE tenant_id = $1', [tenant]);
      const res = await call('order_stats', undefined, token);
      expect(res.status).toBe(200);
      expect(res.text).toBe(`{"data":{"order_count":${stats!.order_count},"total_sum":${stats!.total_sum}}}`);

      const paid = await asTenant<{ id: string; total: string }>(tenant, "SELECT o.id::text, o.total::text FROM orders o WHERE o.tenant_id = $1 AND o.status = 'paid' ORDER BY o.id", [tenant]);
      const rows = (await data('orders_by_status', '{"p_status": "paid"}', token)) as { id: number; total: number }[];
      expect(paid.length).toBeGreaterThan(0);
      expect(rows.map((r) => [String(r.id), r.total])).toEqual(paid.map((r) => [r.id, r.total === null ? null : Number(r.total)]));

      const [latest] = await asTenant<{ id: string }>(tenant, 'SELECT o.id::text FROM orders o WHERE o.tenant_id = $1 ORDER BY o.placed_at DESC, o.id DESC LIMIT 1', [tenant]);
      const row = (await data('latest_order', undefined, token)) as Record<string, unknown>;
      expect(row).toMatchObject({ id: Number(latest!.id), tenant_id: tenant });
      expect(Object.keys(row)).toEqual(['id', 'tenant_id', 'user_id', 'placed_at', 'status', 'total', 'notes']);

      const ids = await asTenant<{ id: string }>(tenant, 'SELECT o.id::text FROM orders o WHERE o.tenant_id = $1 ORDER BY o.id LIMIT 3', [tenant]);
      expect(await data('order_ids', '[3]', token)).toEqual(ids.map((r) => Number(r.id)));
    }
  });

  it('returns [] for an empty set and null for void', async () => {
    expect(await data('orders_by_status', '{"p_status": "no-such-status"}')).toEqual([]);
    expect(await data('order_ids', '[0]')).toEqual([]);
    const res = await call('add_audit', '["rpc wrote this"]');
    expect(res.text).toBe('{"data":null}');
    // A row function that finds no row returns NULL: null, not an object of nulls.
    const nobody = signToken({ user_id: 'no-tenant' });
    expect((await call('latest_order', undefined, nobody)).text).toBe('{"data":null}');
    expect((await call('latest_order', undefined, nobody).set('x-gw-result-format', 'binary')).text).toBe('{"data":null}');
  });

  it("writes through VOLATILE functions as the caller: only the caller's tenant rows change", async () => {
    const before = await started.db.admin.query<{ tenant_id: string; n: string }>("SELECT tenant_id::text, count(*)::text AS n FROM audit_log WHERE message = 'rpc write B' GROUP BY 1");
    expect(before.rows).toEqual([]);
    expect((await call('add_audit', '{"p_action": "rpc write B"}', tokenB)).status).toBe(200);
    const after = await started.db.admin.query<{ tenant_id: string; n: string }>("SELECT tenant_id::text, count(*)::text AS n FROM audit_log WHERE message = 'rpc write B' GROUP BY 1");
    expect(after.rows).toEqual([{ tenant_id: TENANT_B, n: '1' }]);

    // Tenant A tries to change tenant B's order through the function: RLS hides it.
    const { rows: [victim] } = await started.db.admin.query<{ id: string; notes: string | null }>('SELECT id::text, notes FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT 1', [TENANT_B]);
    expect(await data('set_order_notes', JSON.stringify({ p_order_id: Number(victim!.id), p_notes: 'hijacked' }), tokenA)).toEqual([]);
    const { rows: [unchanged] } = await started.db.admin.query('SELECT notes FROM orders WHERE id = $1', [victim!.id]);
    expect(unchanged.notes).toBe(victim!.notes);
    const own = (await data('set_order_notes', JSON.stringify({ p_order_id: Number(victim!.id), p_notes: 'by B' }), tokenB)) as { notes: string }[];
    expect(own).toHaveLength(1);
    expect(own[0]!.notes).toBe('by B');
  });

  it('runs IMMUTABLE and STABLE functions read-only, VOLATILE ones read-write', async () => {
    expect(await data('is_read_only')).toBe('off');
    const sneaky = await call('sneaky_write');
    expect(sneaky.status).toBe(403);
    expect(sneaky.body.code).toBe('FORBIDDEN');
    const { rows } = await started.db.admin.query("SELECT count(*)::int AS n FROM audit_log WHERE message = 'sneaky'");
    expect(rows[0].n).toBe(0);
  });
});

describe('name resolution', () => {
  it('resolves a bare name through the configured schemas in order; schema.function looks in that schema only', async () => {
    expect(await data('add', '[1, 1]')).toBe(2); // public first
    expect(await data('public.add', '[1, 1]')).toBe(2);
    expect(await data('rpc_extra.add', '[1, 1]')).toBe(1002);
    expect(await data('only_here')).toBe('rpc_extra');
    expect(await data('rpc_extra.only_here')).toBe('rpc_extra');
    expect((await call('public.only_here')).status).toBe(404);
  });

  it('404s unknown, unexposed, uncallable functions, with the nearest name', async () => {
    const typo = await call('gret', '["x"]');
    expect(typo.status).toBe(404);
    expect(typo.body).toMatchObject({ code: 'NOT_FOUND', hint: 'Did you mean `greet`?' });
    for (const name of ['rpc_private.secret', 'secret', 'first_of', 'raw_records', 'write_items_sleep', 'pg_catalog.now', 'now']) {
      expect((await call(name)).status).toBe(404);
    }
  });

  it('403s a function the role may not execute (PostgreSQL decides)', async () => {
    const res = await call('admin_only');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });
});

describe('errors', () => {
  it('maps bad values, RAISE EXCEPTION, wrong arguments, methods, media types and headers to contract codes', async () => {
    const cases: [request.Test, number, string][] = [
      [call('add', '{"a": "x", "b": 1}'), 400, 'VALIDATION_ERROR'],
      [call('add', '{"a": 2147483648, "b": 1}'), 400, 'VALIDATION_ERROR'],
      [call('fail_with', '{"message": "no such plan"}'), 400, 'VALIDATION_ERROR'],
      [call('add', '{"a": 1, "c": 2}'), 404, 'NOT_FOUND'],
      [call('add', '[1]'), 404, 'NOT_FOUND'],
      [call('add', '[1, 2, 3]'), 404, 'NOT_FOUND'],
      [call('double_it', '{"x": 1}'), 404, 'NOT_FOUND'],
      [call('add', '{"a": 1, "b": '), 400, 'PARSE_ERROR'],
      [call('add').set('Content-Type', 'text/plain').send('[1, 2]'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      // Read as bytes (the PostgREST dialect's bytea bodies), still a body: never a call without arguments.
      [call('add').set('Content-Type', 'application/octet-stream').send(Buffer.from('[1, 2]')), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [call('add', '[1, 2]').set('x-gw-result-format', 'xml'), 400, 'PARSE_ERROR'],
      [request(started.app).get('/api/rpc/add').set('Authorization', `Bearer ${tokenA}`), 405, 'METHOD_NOT_ALLOWED'],
      [request(started.app).post('/api/rpc/add').send([1, 2]), 401, 'UNAUTHORIZED'],
      [request(started.app).post('/api/rpc').set('Authorization', `Bearer ${tokenA}`), 404, 'NOT_FOUND'],
    ];
    for (const [req, status, code] of cases) {
      const res = await req;
      expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
      expect(res.text).not.toMatch(/SELECT|jsonb_to_record|\bat .*\.js/);
    }
    const raised = await call('fail_with', '{"message": "no such plan"}');
    expect(raised.body.message).toMatch(/no such plan/i);
    const header = await call('add', '[1, 2]').set('x-gw-result-format', 'xml');
    expect(header.body.message).toContain('x-gw-result-format');
  });
});

describe('hardening keys', () => {
  it('rpc_require_schema_qualified: a bare name is 400 RPC_NAME_NOT_QUALIFIED with the qualified form as hint', async () => {
    const app = await appWith({ rpcRequireSchemaQualified: true });
    const res = await call('add', '[1, 2]', tokenA, app);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'RPC_NAME_NOT_QUALIFIED', hint: 'Call /rpc/public.add.' });
    expect((await call('public.add', '[1, 2]', tokenA, app)).body.data).toBe(3);
  });

  it('rpc_signature_check: unknown named arguments and calls no overload takes are 400 RPC_SIGNATURE_MISMATCH', async () => {
    const app = await appWith({ rpcSignatureCheck: true });
    const unknown = await call('add', '{"a": 1, "c": 2}', tokenA, app);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'RPC_SIGNATURE_MISMATCH', details: { unknown_arguments: ['c'], signatures: ['public.add(a integer, b integer)'] } });
    expect((await call('add', '[1]', tokenA, app)).body.code).toBe('RPC_SIGNATURE_MISMATCH');
    expect((await call('add', '{"a": 1, "b": 2}', tokenA, app)).body.data).toBe(3);
  });

  it('rpc_allowlist_path: only listed functions run (schema.function or bare, case-insensitive) and contracts list only them', async () => {
    const path = files.write('allow.txt', '# functions the web app may call\npublic.add\n\n  GREET  \nrpc_extra.ONLY_HERE\n');
    const app = await appWith({ rpcAllowlistPath: path });
    expect((await call('add', '[1, 2]', tokenA, app)).body.data).toBe(3);
    expect((await call('greet', '["Al"]', tokenA, app)).body.data).toBe('Hello, Al!');
    expect((await call('only_here', undefined, tokenA, app)).body.data).toBe('rpc_extra');
    const blocked = await call('rpc_extra.add', '[1, 2]', tokenA, app);
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('RPC_NOT_ALLOWED');
    expect((await call('current_tenant', undefined, tokenA, app)).body.code).toBe('RPC_NOT_ALLOWED');
    const contracts = await request(app).get('/api/_rpc/contracts').set('Authorization', `Bearer ${tokenA}`);
    expect(contracts.body.data.map((c: { schema: string; name: string }) => `${c.schema}.${c.name}`).sort()).toEqual(['public.add', 'public.greet', 'rpc_extra.only_here']);
  });

  it('refuses an unreadable or malformed function allow-list when the gateway is created', () => {
    expect(() => createGateway({ databaseUrl: started.db.appUrl, jwtSecret: TEST_JWT_SECRET, rpcAllowlistPath: '/nonexistent/allow.txt' })).toThrow(GatewayConfigError);
    const bad = files.write('bad-allow.txt', 'public.add\nnot a name\n');
    expect(() => createGateway({ databaseUrl: started.db.appUrl, jwtSecret: TEST_JWT_SECRET, rpcAllowlistPath: bad })).toThrow(/line 2/);
  });
});

describe('x-gw-result-format: binary', () => {
  const binary = (name: string, body?: string, token = tokenA) => call(name, body, token).set('x-gw-result-format', 'binary');

  it('answers exactly what the text format answers, for every result shape and the contract types', async () => {
    const calls: [string, string | undefined][] = [
      ['add', '[1000, 0]'], // 1000 is the value node-postgres' own binary mode corrupts (brianc/node-postgres#3495)
      ['add', '[-2147483648, 0]'],
      ['echo_bigint', '[9007199254740993]'],
      ['echo_bigint', '[-9223372036854775808]'],
      ['echo_numeric', '{"n": 12345678901234567890.123456789012}'],
      ['echo_numeric', '{"n": 1.50}'],
      ['echo_numeric', '{"n": "NaN"}'],
      ['echo_numeric', 'null'],
      ['echo_json', '{"doc": {"a": [1, {"b": null}], "s": "x\\u00e9\\n", "n": 1e3}}'],
      ['echo_ids', '{"ids": [1, 9007199254740993, null]}'],
      ['echo_ids', '{"ids": []}'],
      ['echo_time', '["2024-05-06T07:08:09.123456+02:00"]'],
      ['echo_time', '["infinity"]'],
      ['greet', '["Zoë 🚀", "Grüß"]'],
      ['describe_value', 'true'],
      ['sum_all', '[0.1, 0.2]'],
      ['current_tenant', undefined],
      ['order_stats', undefined],
      ['orders_by_status', '{"p_status": "paid"}'],
      ['orders_by_status', '{"p_status": "none"}'],
      ['latest_order', undefined],
      ['order_ids', '[5]'],
      ['order_ids', '[0]'],
      ['orders_of_user', '[1]'],
      ['add_audit', '["binary void"]'],
    ];
    for (const [name, body] of calls) {
      const text = await call(name, body);
      const bin = await binary(name, body);
      expect({ name, text: text.status, binary: bin.status }).toEqual({ name, text: 200, binary: 200 });
      expect({ name, body: JSON.parse(bin.text) }).toEqual({ name, body: JSON.parse(text.text) });
      // Numbers beyond 2^53 and long numerics: compare their digits, which JSON.parse would round.
      const digits = (t: string) => (t.match(/-?\d{16,}(\.\d+)?/g) ?? []).sort();
      expect(digits(bin.text)).toEqual(digits(text.text));
    }
    expect((await binary('echo_bigint', '[9007199254740993]')).text).toBe('{"data":9007199254740993}');
    // The two paths really differ: PostgreSQL's json_agg separates rows with ", \n ", the binary
    // renderer with ",".
    const set = '{"p_status": "paid"}';
    expect((await call('orders_by_status', set)).text).toContain('\n');
    expect((await binary('orders_by_status', set)).text).not.toContain('\n');
    expect((await binary('echo_numeric', '{"n": 1.50}')).text).toBe('{"data":1.50}');
  });

  itDirect('a role setting reaches only new server sessions, and PgBouncer reuses its sessions')('renders timestamptz in the session TimeZone, as the text format does', async () => {
    await started.db.admin.query(`ALTER ROLE tablegate_app IN DATABASE ${started.db.name} SET timezone = 'Asia/Kolkata'`);
    try {
      // New connections of a new gateway pick the role setting up.
      const app = await appWith({});
      const at = '["2024-05-06T07:08:09.5+00:00"]';
      const text = await call('echo_time', at, tokenA, app);
      const bin = await call('echo_time', at, tokenA, app).set('x-gw-result-format', 'binary');
      expect(text.body.data).toBe('2024-05-06T12:38:09.5+05:30');
      expect(bin.body.data).toBe(text.body.data);
    } finally {
      await started.db.admin.query(`ALTER ROLE tablegate_app IN DATABASE ${started.db.name} RESET timezone`);
    }
  });

  it('keeps tenant isolation and writes in binary mode too', async () => {
    const rows = (await binary('orders_by_status', '{"p_status": "paid"}', tokenB)).body.data as { id: number }[];
    const { rows: expected } = await started.db.admin.query("SELECT id::int FROM orders WHERE tenant_id = $1 AND status = 'paid' ORDER BY id", [TENANT_B]);
    expect(rows.map((r) => r.id)).toEqual(expected.map((r: { id: number }) => r.id));
    const { rows: [own] } = await started.db.admin.query('SELECT id::int FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT 1', [TENANT_B]);
    const written = await binary('set_order_notes', JSON.stringify({ p_order_id: own.id, p_notes: 'binary é' }), tokenB);
    expect(written.body.data).toEqual([expect.objectContaining({ id: own.id, notes: 'binary é', tenant_id: TENANT_B })]);
  });
});

describe('GET /_rpc/contracts', () => {
  it('lists every callable function the role may execute, with its signature', async () => {
    const res = await request(started.app).get('/api/_rpc/contracts').set('Authorization', `Bearer ${tokenA}`);
    expect(res.status).toBe(200);
    const byName = new Map<string, Record<string, unknown>>(res.body.data.map((c: Record<string, unknown>) => [`${c.schema}.${c.name}(${c.identity_args})`, c]));
    expect(byName.get('public.greet(name text, greeting text, punctuation text)')).toEqual({
      schema: 'public',
      name: 'greet',
      identity_args: 'name text, greeting text, punctuation text',
      args: [
        { name: 'name', type: 'text', has_default: false, variadic: false },
        { name: 'greeting', type: 'text', has_default: true, variadic: false },
        { name: 'punctuation', type: 'text', has_default: true, variadic: false },
      ],
      defaults: 2,
      variadic: false,
      return_type: 'text',
      returns_set: false,
      volatility: 'immutable',
    });
    expect(byName.get('public.sum_all(VARIADIC nums numeric[])')).toMatchObject({ variadic: true, args: [{ name: 'nums', type: 'numeric[]', has_default: false, variadic: true }] });
    expect(byName.get('public.orders_by_status(p_status text)')).toMatchObject({ returns_set: true, columns: [{ name: 'id', type: 'bigint' }, { name: 'total', type: 'numeric' }] });
    expect(byName.get('rpc_extra.add(a integer, b integer)')).toBeDefined();
    const names = [...byName.values()].map((c) => c.name);
    for (const absent of ['admin_only', 'first_of', 'raw_records', 'write_items_sleep', 'secret']) expect(names).not.toContain(absent);
    expect(names).toEqual(expect.arrayContaining(['add', 'order_total', 'active_users', 'fail_with', 'describe_value', 'Shout It']));
  });

  it('needs credentials like every data route, and only GET', async () => {
    expect((await request(started.app).get('/api/_rpc/contracts')).status).toBe(401);
    expect((await request(started.app).post('/api/_rpc/contracts').set('Authorization', `Bearer ${tokenA}`)).status).toBe(405);
  });
});
