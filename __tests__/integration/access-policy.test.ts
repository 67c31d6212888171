/**
 * The native access policy ([access], contract §6) over HTTP against real PostgreSQL, as the
 * RLS-bound app role: operations, read/write/returning columns (whitelists and blacklists),
 * roles and scopes, the "*" rule and default_decision, narrowing of default projections, and
 * refusals before any SQL exists (a recording execute stage proves the database was not asked).
 */
import express from 'express';
import request from 'supertest';
import { createGateway, GatewayConfigError, operationOf } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { gatewayFactory } from '../support/gateway-app';
import { useTempFiles } from '../unit/support/temp-files';

let db: TestDatabase;
const files = useTempFiles('access-');
/** Kinds of the commands that reached the execute stage, per app. */
let executed: string[] = [];

const POLICY = {
  default_decision: 'deny',
  tables: {
    orders: {
      operations: ['read', 'create', 'update'],
      read_columns: { except: ['notes'] },
      write_columns: { only: ['user_id', 'status', 'total'] },
      returning_columns: { only: ['id', 'status', 'total'] },
    },
    users: { operations: ['read'], read_columns: { only: ['id', 'tenant_id', 'name'] }, require_any_role: ['member', 'admin'] },
    order_items: { operations: ['read', 'delete'], require_scopes: ['items:read'] },
    documents: { operations: ['read'], read_columns: { except: ['body'] } },
  },
};

const member = signToken({ tenant_id: TENANT_A, user_id: 'u1', role: 'member' });
const memberWithItems = signToken({ tenant_id: TENANT_A, user_id: 'u1', role: 'member', scope: 'items:read other' });
const guest = signToken({ tenant_id: TENANT_A, user_id: 'u2', role: 'guest', scope: 'items:read' });

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await apps.closeAll();
  await db?.drop();
});

const apps = gatewayFactory(() => ({
  databaseUrl: db.appUrl,
  jwtSecret: TEST_JWT_SECRET,
  access: { policy: POLICY },
  explainRoles: ['member'], // the policy, not the explain gate, is under test here
  stages: { execute: (ctx, next) => (executed.push(operationOf(ctx.command)), next(ctx)) },
}));
const appWith = apps.appWith;

let app: express.Express;
beforeAll(async () => {
  app = await appWith();
});
beforeEach(() => {
  executed = [];
});

const get = (path: string, token = member) => request(app).get(`/api${path}`).set('Authorization', `Bearer ${token}`);
const send = (method: 'post' | 'patch' | 'delete', path: string, body?: unknown, token = member) => {
  const req = request(app)[method](`/api${path}`).set('Authorization', `Bearer ${token}`);
  return body === undefined ? req : req.send(body as object);
};

/** 403 FORBIDDEN naming the column, and the database never asked. */
async function denied(res: request.Test | Promise<request.Response>, details: Record<string, unknown>): Promise<void> {
  const r = await res;
  expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
  expect(r.body.details).toMatchObject(details);
  expect(executed).toEqual([]);
}

describe('reads', () => {
  it('projects only readable columns when select is absent (the denied column is never fetched)', async () => {
    const res = await get('/orders?limit=500');
    expect(res.status).toBe(200);
    const { rows } = await db.admin.query('SELECT id::int FROM orders WHERE tenant_id = $1 ORDER BY id', [TENANT_A]);
    expect(res.body.data.map((r: { id: number }) => r.id)).toEqual(rows.map((r: { id: number }) => r.id));
    expect(Object.keys(res.body.data[0])).toEqual(['id', 'tenant_id', 'user_id', 'placed_at', 'status', 'total']);
    const one = await get(`/orders/${rows[0].id}`);
    expect(Object.keys(one.body.data)).not.toContain('notes');
    expect(executed).toEqual(['list', 'get']);
  });

  it.each([
    ['select', '/orders?select=id,notes', '`select`'],
    ['a filter', '/orders?notes=is_null', 'a filter'],
    ['sort', '/orders?sort=notes', '`sort`'],
    ['distinct', '/orders?distinct=notes', '`distinct`'],
    ['search_columns', '/orders?search=x&search_columns=notes', '`search_columns`'],
    ['aggregate column', '/orders/aggregate?fn=max&column=notes', '`column`'],
    ['explain select', '/orders/_explain?select=notes', '`select`'],
    ['get select', '/orders/1?select=notes', '`select`'],
  ])('refuses a denied column in %s before any SQL', async (_what, path, where) => {
    await denied(get(path), { table: 'orders', column: 'notes', in: where.replace(/`/g, '') });
  });

  it('searches only readable text columns by default', async () => {
    // "streaming" is only in the body of document 3; body is not readable.
    expect((await get('/documents?search=streaming')).body.data).toEqual([]);
    expect((await get('/documents?search=replication')).body.data.map((d: { id: number }) => d.id)).toEqual([3]);
    const open = await appWith({ access: { policy: { default_decision: 'allow' } } });
    const all = await request(open).get('/api/documents?search=streaming').set('Authorization', `Bearer ${member}`);
    expect(all.body.data.map((d: { id: number }) => d.id)).toEqual([3]);
  });

  it('narrows expanded rows to their readable columns, and refuses expanding into a denied table', async () => {
    const res = await get('/orders?select=id,user_id&expand=user&user_id=is_null.false&limit=5');
    expect(res.status).toBe(200);
    for (const row of res.body.data) expect(Object.keys(row.user).sort()).toEqual(['id', 'name', 'tenant_id']);
    executed = [];
    await denied(get('/orders?expand=nested:order_items'), { table: 'order_items', operation: 'read', missing_scopes: ['items:read'] });
    expect((await get('/orders?expand=nested:order_items&limit=3', memberWithItems)).status).toBe(200);
    executed = [];
    await denied(get('/users?expand=nested:shipments!sender'), { table: 'shipments', operation: 'read' });
  });

  it('issues no cursor, and takes none, when the ordering has a column the caller may not read', async () => {
    const open = await appWith({ access: { policy: { default_decision: 'allow' } } });
    const page = await request(open).get('/api/orders?limit=2&select=id,status').set('Authorization', `Bearer ${member}`);
    expect(typeof page.body.next_cursor).toBe('string');
    const hidden = await appWith({ access: { policy: { tables: { orders: { operations: ['read'], read_columns: { except: ['id'] } } } } } });
    const res = await request(hidden).get('/api/orders?limit=2').set('Authorization', `Bearer ${member}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body).not.toHaveProperty('next_cursor');
    expect(Object.keys(res.body.data[0])).not.toContain('id');
    executed = [];
    await denied(request(hidden).get(`/api/orders?limit=2&cursor=${encodeURIComponent(page.body.next_cursor)}`).set('Authorization', `Bearer ${member}`), { table: 'orders', parameter: 'cursor' });
    // With the key readable, the same policy machinery leaves cursors alone.
    expect(typeof (await get('/orders?limit=2&select=id')).body.next_cursor).toBe('string');
  });

  it('checks the parent of a child route and the role', async () => {
    const { rows } = await db.admin.query('SELECT id FROM users WHERE tenant_id = $1 ORDER BY id LIMIT 1', [TENANT_A]);
    const child = await get(`/users/${rows[0].id}/orders?select=id`);
    expect(child.status).toBe(200);
    executed = [];
    await denied(get(`/users/${rows[0].id}/orders?select=id`, guest), { table: 'users', operation: 'read' });
    await denied(get('/users', guest), { table: 'users' });
  });

  it('denies a table without a rule under default_decision = deny, and every operation not listed', async () => {
    await denied(get('/tenants'), { table: 'tenants', operation: 'read' });
    await denied(send('delete', '/orders/1'), { table: 'orders', operation: 'delete' });
    await denied(send('post', '/order_items', { order_id: 1, product: 'x', qty: 1, price: 1 }, memberWithItems), { table: 'order_items', operation: 'create' });
  });
});

describe('writes', () => {
  it('accepts writable columns and returns only readable, returnable ones', async () => {
    const { rows } = await db.admin.query('SELECT id FROM users WHERE tenant_id = $1 ORDER BY id LIMIT 1', [TENANT_A]);
    const created = await send('post', '/orders', { user_id: rows[0].id, status: 'pending', total: 12.5 });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body.data).sort()).toEqual(['id', 'status', 'total']);
    const patched = await send('patch', `/orders/${created.body.data.id}`, { status: 'paid' });
    expect(patched.body.data).toEqual({ id: created.body.data.id, status: 'paid', total: 12.5 });
    const { rows: [stored] } = await db.admin.query('SELECT status, tenant_id FROM orders WHERE id = $1', [created.body.data.id]);
    expect(stored).toEqual({ status: 'paid', tenant_id: TENANT_A });
  });

  it('refuses unwritable body columns and unreadable or unreturnable returning columns, writing nothing', async () => {
    const before = await db.admin.query('SELECT count(*)::int AS n FROM orders');
    await denied(send('post', '/orders', { status: 'pending', notes: 'secret' }), { column: 'notes', in: 'the body' });
    await denied(send('post', '/orders', [{ status: 'pending' }, { status: 'pending', tenant_id: TENANT_A }]), { column: 'tenant_id', in: 'the body' });
    await denied(send('post', '/orders?returning=id,notes', { status: 'pending' }), { column: 'notes', in: 'returning' });
    await denied(send('post', '/orders?returning=placed_at', { status: 'pending' }), { column: 'placed_at', in: 'returning' });
    await denied(send('patch', '/orders/1', { notes: 'x' }), { column: 'notes' });
    const after = await db.admin.query('SELECT count(*)::int AS n FROM orders');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('needs update as well as create for an upsert that updates', async () => {
    const onlyCreate = await appWith({ access: { policy: { default_decision: 'deny', tables: { write_kv: { operations: ['read', 'create'] } } } } });
    const res = await request(onlyCreate).post('/api/write_kv').set('Authorization', `Bearer ${member}`).set('X-Upsert', 'true').send({ key: 'a-key', value: 'v' });
    expect(res.status).toBe(403);
    expect(res.body.details).toMatchObject({ table: 'write_kv', operation: 'update' });
    const ignore = await request(onlyCreate).post('/api/write_kv').set('Authorization', `Bearer ${member}`).set('Prefer', 'resolution=ignore-duplicates').send({ key: `new-${Date.now()}`, value: 'v' });
    expect(ignore.status).toBe(201);
  });
});

describe('what the policy does not govern', () => {
  it('leaves function calls to the rpc_* keys', async () => {
    const res = await send('post', '/rpc/add', [1, 2]);
    expect(res.body.data).toBe(3);
  });
});

describe('loading', () => {
  it('reads a TOML or JSON policy file, relative to gw.toml', async () => {
    const toml = files.write('policy.toml', 'default_decision = "deny"\n\n[tables.orders]\noperations = ["read"]\nread_columns = { only = ["id"] }\n');
    const fromToml = await appWith({ access: { path: toml } });
    expect((await request(fromToml).get('/api/orders?limit=1').set('Authorization', `Bearer ${member}`)).body.data).toEqual([{ id: expect.any(Number) }]);
    const json = files.write('policy.json', JSON.stringify({ tables: { '*': { operations: ['read'], read_columns: { except: ['tenant_id'] } } } }));
    const fromJson = await appWith({ access: { path: json } });
    const tenants = await request(fromJson).get('/api/users?limit=1').set('Authorization', `Bearer ${member}`);
    expect(Object.keys(tenants.body.data[0])).not.toContain('tenant_id');
    const gwToml = files.write('gw.toml', '[access]\npath = "policy.toml"\n');
    const fromConfig = await appWith({ access: undefined, configFile: gwToml });
    expect((await request(fromConfig).get('/api/orders?limit=1').set('Authorization', `Bearer ${member}`)).body.data).toEqual([{ id: expect.any(Number) }]);
  });

  it('refuses invalid policies when the gateway is created', () => {
    const create = (policy: unknown) => () => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, access: { policy: policy as Record<string, unknown> } });
    expect(create({ tables: { orders: { read_columns: { only: ['id'] } } } })).toThrow(/operations/);
    expect(create({ tables: { orders: { operations: ['read'], read_colums: { only: ['id'] } } } })).toThrow(/read_colums/);
    expect(create({ tables: { orders: { operations: ['select'] } } })).toThrow(GatewayConfigError);
    expect(create({ default_decision: 'maybe' })).toThrow(GatewayConfigError);
    expect(create({ tables: { orders: { operations: ['read'], read_columns: { only: ['id'], except: ['x'] } } } })).toThrow(GatewayConfigError);
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, access: { path: '/nonexistent/policy.toml' } })).toThrow(/cannot read/);
    const broken = files.write('broken.toml', '[tables.orders\noperations = ');
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, access: { path: broken } })).toThrow(/not valid TOML/);
  });

  it('fails ready (and every request, 503) when the policy names a table or column the database lacks', async () => {
    for (const policy of [
      { tables: { ordres: { operations: ['read'] } } },
      { tables: { orders: { operations: ['read'], read_columns: { except: ['note'] } } } },
      { tables: { '*': { operations: ['read'], read_columns: { except: ['ssn'] } } } },
    ]) {
      const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, access: { policy } });
      apps.track(gateway);
      await expect(gateway.ready).rejects.toThrow(GatewayConfigError);
      const res = await request(express().use('/api', gateway)).get('/api/orders').set('Authorization', `Bearer ${member}`);
      expect(res.status).toBe(503);
    }
  });
});
