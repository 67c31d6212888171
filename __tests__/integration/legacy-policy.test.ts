/**
 * The legacy YAML route policy (`policy` / `policy_path`, contract §6) over HTTP against real
 * PostgreSQL, as the RLS-bound app role: entries matched by table, role and operation, the
 * `filter` as bound row conditions on every route (lists, single rows, aggregates, child routes,
 * expansions, updates, deletes, inserted bodies), `allowed_columns`, and fail-closed loading.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, GatewayConfigError } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { gatewayFactory } from '../support/gateway-app';
import { useTempFiles } from '../unit/support/temp-files';

const POLICY = `
policies:
  - name: members work on their own orders
    table: orders
    role: member
    operations: [read, create, update]
    filter: user_id = $user_id
    allowed_columns: [id, tenant_id, user_id, status, total]
  - name: admins see every order of the tenant
    table: orders
    role: admin
    operations: [read, delete]
  - name: anyone reads the users of their tenant
    table: users
    operations: [read]
    filter: tenant_id = $tenant_id
  - name: members read items of their tenant
    table: order_items
    role: member
    operations: [read]
    filter: "tenant_id = $tenant_id and \\"product\\" = $favourite"
`;

let db: TestDatabase;
let app: express.Express;
const files = useTempFiles('legacy-policy-');
/** Tenant A's users with orders: the member and another user. */
let me: number;
let other: number;
let tokens: Record<'member' | 'admin' | 'guest' | 'anonymousMember', string>;

const apps = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET }));
const appWith = apps.appWith;

beforeAll(async () => {
  db = await createTestDatabase();
  const { rows } = await db.admin.query<{ user_id: number }>('SELECT user_id FROM orders WHERE tenant_id = $1 AND user_id IS NOT NULL GROUP BY user_id ORDER BY count(*) DESC, user_id LIMIT 2', [TENANT_A]);
  [me, other] = rows.map((r) => r.user_id) as [number, number];
  tokens = {
    member: signToken({ tenant_id: TENANT_A, user_id: String(me), role: 'member', favourite: 'gizmo' }),
    admin: signToken({ tenant_id: TENANT_A, user_id: 'boss', role: 'admin' }),
    guest: signToken({ tenant_id: TENANT_A, user_id: String(me), role: 'guest' }),
    anonymousMember: signToken({ tenant_id: TENANT_A, role: 'member' }),
  };
  app = await appWith({ policy: POLICY });
});

afterAll(async () => {
  await apps.closeAll();
  await db?.drop();
});

const as = (who: keyof typeof tokens) => ({
  get: (path: string) => request(app).get(`/api${path}`).set('Authorization', `Bearer ${tokens[who]}`),
  send: (method: 'post' | 'patch' | 'delete', path: string, body?: object) => {
    const req = request(app)[method](`/api${path}`).set('Authorization', `Bearer ${tokens[who]}`);
    return body === undefined ? req : req.send(body);
  },
});

const ordersOf = async (where: string, params: unknown[]): Promise<number[]> =>
  (await db.admin.query<{ id: number }>(`SELECT id::int FROM orders WHERE tenant_id = $1 AND ${where} ORDER BY id`, [TENANT_A, ...params])).rows.map((r) => r.id);

describe('reads', () => {
  it("filters a member's list, single rows and aggregates to the filter, with allowed_columns only", async () => {
    const mine = await ordersOf('user_id = $2', [me]);
    expect(mine.length).toBeGreaterThan(0);
    const list = await as('member').get('/orders?limit=1000');
    expect(list.status).toBe(200);
    expect(list.body.data.map((o: { id: number }) => o.id)).toEqual(mine);
    expect(Object.keys(list.body.data[0])).toEqual(['id', 'tenant_id', 'user_id', 'status', 'total']);
    const count = await as('member').get('/orders/aggregate?fn=count');
    expect(count.body.data.value).toBe(mine.length);
    const [theirs] = await ordersOf('user_id = $2', [other]);
    expect((await as('member').get(`/orders/${theirs}`)).status).toBe(404);
    expect((await as('member').get(`/orders/${mine[0]}`)).body.data.id).toBe(mine[0]);
    const denied = await as('member').get('/orders?select=id,notes');
    expect(denied.status).toBe(403);
    expect(denied.body.details).toMatchObject({ column: 'notes' });
  });

  it('matches entries by role: an admin sees every order, a role without an entry nothing', async () => {
    const all = await ordersOf('true', []);
    expect((await as('admin').get('/orders?limit=1000')).body.data.map((o: { id: number }) => o.id)).toEqual(all);
    const guest = await as('guest').get('/orders');
    expect(guest.status).toBe(403);
    expect(guest.body.details).toMatchObject({ table: 'orders', operation: 'read' });
    expect((await as('guest').get('/users?limit=1')).status).toBe(200);
  });

  it('applies the filter of the related table to expansions and child routes', async () => {
    const mine = await ordersOf('user_id = $2', [me]);
    const theirs = await ordersOf('user_id = $2', [other]);
    const nested = await as('member').get(`/users/${other}?expand=nested:orders&select=id`);
    expect(nested.body.data.orders).toEqual([]);
    const own = await as('member').get(`/users/${me}?expand=nested:orders&select=id`);
    expect(own.body.data.orders.map((o: { id: number }) => o.id)).toEqual(mine);
    expect(Object.keys(own.body.data.orders[0]).sort()).toEqual(['id', 'status', 'tenant_id', 'total', 'user_id']);
    const child = await as('admin').get(`/users/${other}/orders?select=id&limit=1000`);
    expect(child.body.data.map((o: { id: number }) => o.id)).toEqual(theirs);
    expect((await as('member').get(`/users/${other}/orders?select=id`)).body.data).toEqual([]);
  });

  it('binds several conditions, claims included, as parameters', async () => {
    const { rows } = await db.admin.query<{ id: number }>("SELECT id FROM order_items WHERE tenant_id = $1 AND product = 'gizmo' ORDER BY id", [TENANT_A]);
    expect(rows.length).toBeGreaterThan(0);
    const items = await as('member').get('/order_items?select=id&limit=1000');
    expect(items.body.data.map((i: { id: number }) => i.id)).toEqual(rows.map((r) => r.id));
    // A claim is data: "1 OR 1=1" is compared with an integer column, and PostgreSQL rejects it.
    const hostile = signToken({ tenant_id: TENANT_A, user_id: '1 OR 1=1', role: 'member' });
    const res = await request(app).get('/api/orders').set('Authorization', `Bearer ${hostile}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a request whose filter needs a variable the token lacks', async () => {
    const res = await as('anonymousMember').get('/orders');
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('$user_id');
  });
});

describe('writes', () => {
  it('updates only rows that meet the filter', async () => {
    const [mine] = await ordersOf('user_id = $2', [me]);
    const [theirs] = await ordersOf('user_id = $2', [other]);
    expect((await as('member').send('patch', `/orders/${mine}`, { status: 'paid' })).status).toBe(200);
    const before = await db.admin.query('SELECT status FROM orders WHERE id = $1', [theirs]);
    expect((await as('member').send('patch', `/orders/${theirs}`, { status: 'refunded' })).status).toBe(404);
    expect((await db.admin.query('SELECT status FROM orders WHERE id = $1', [theirs])).rows).toEqual(before.rows);
    const moved = await as('member').send('patch', `/orders/${mine}`, { user_id: other });
    expect(moved.status).toBe(403);
  });

  it('creates rows only with the filter column set to the caller\'s value', async () => {
    const created = await as('member').send('post', '/orders', { user_id: me, status: 'pending', total: 5 });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ user_id: me, status: 'pending' });
    for (const body of [{ user_id: other, status: 'pending' }, { status: 'pending' }]) {
      const res = await as('member').send('post', '/orders', body);
      expect(res.status).toBe(403);
      expect(res.body.details).toMatchObject({ table: 'orders', column: 'user_id' });
    }
    const batch = await as('member').send('post', '/orders', [{ user_id: me, status: 'pending' }, { user_id: other, status: 'pending' }] as unknown as object);
    expect(batch.body.details).toMatchObject({ column: 'user_id', row: 1 });
    // An upsert's update could take over a row outside the filter: refused.
    const upsert = await as('member').send('post', '/orders', { id: created.body.data.id, user_id: me, status: 'paid' }).set('X-Upsert', 'true');
    expect(upsert.status).toBe(403);
    expect(upsert.body.details).toMatchObject({ table: 'orders', operation: 'update' });
    // The admin entry does not allow create.
    expect((await as('admin').send('post', '/orders', { user_id: me, status: 'pending' })).status).toBe(403);
    // Created by the member, deleted by the admin.
    expect((await as('admin').send('delete', `/orders/${created.body.data.id}`)).status).toBe(204);
  });
});

describe('loading (fail closed)', () => {
  it('reads policy_path, and refuses invalid YAML, unknown keys and filters it cannot bind', () => {
    const path = files.write('policy.yaml', POLICY);
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, policyPath: path }).close()).not.toThrow();
    const create = (policy: string) => () => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, policy });
    expect(create('policies: [')).toThrow(/not valid YAML/);
    expect(create('policies:\n  - table: orders\n    operations: [read]\n    columns: [id]\n')).toThrow(/columns/);
    expect(create('policies:\n  - table: orders\n')).toThrow(/operations/);
    expect(create("policies:\n  - table: orders\n    operations: [read]\n    filter: user_id = 'x' or 1=1\n")).toThrow(GatewayConfigError);
    expect(create('rules: []\n')).toThrow(GatewayConfigError);
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, policyPath: '/nonexistent.yaml' })).toThrow(/cannot read/);
  });

  it('fails ready when an entry names a table or column the database lacks', async () => {
    for (const policy of ['policies:\n  - table: ordrs\n    operations: [read]\n', 'policies:\n  - table: orders\n    operations: [read]\n    filter: owner = $user_id\n']) {
      const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, policy });
      apps.track(gateway);
      await expect(gateway.ready).rejects.toThrow(GatewayConfigError);
    }
  });
});
