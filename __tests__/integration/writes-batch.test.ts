/**
 * POST /_batch, nested inserts and bulk updates (docs/writing.md) over HTTP against real
 * PostgreSQL, as the RLS-bound app role with RLS forced and two tenants: all or nothing in one
 * transaction (a failing last operation, a killed backend), references between operations,
 * policy and allow-list on every operation before any SQL, tenant isolation, caps and bad input.
 */
import express from 'express';
import request from 'supertest';
import type { Gateway } from '../../lib';
import { TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { gatewayFactory, tokenA, tokenB, useGatewayApp } from '../support/gateway-app';
import type { createTestDatabase } from '../support/test-database';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let gateway: Gateway;
let app: express.Express;

useGatewayApp({ maxBatchOperations: 5, maxBatchBodyBytes: 4096 }, (started) => ({ db, gateway, app } = started));
const apps = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET }));
afterAll(() => apps.closeAll());

const send = (target: express.Express, method: 'post' | 'patch', path: string, body: unknown, token = tokenA, headers: Record<string, string> = {}) => {
  let req = request(target)[method](path).set('Content-Type', 'application/json');
  if (token !== '') req = req.set('Authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return req.send(typeof body === 'string' ? body : JSON.stringify(body));
};
const batch = (ops: unknown, token = tokenA, target = app) => send(target, 'post', '/api/_batch', ops, token);

async function adminRows(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await db.admin.query(sql, params)).rows;
}
const ordersNoted = async (notes: string) => (await adminRows('SELECT id, tenant_id, total FROM orders WHERE notes = $1 ORDER BY id', [notes]));
const itemsOf = async (orderId: unknown) => adminRows('SELECT product, qty, tenant_id FROM order_items WHERE order_id = $1 ORDER BY id', [orderId]);
/** An order of tenant B, by the fixture. */
const orderOfB = async () => (await adminRows('SELECT id, status, total FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT 1', [TENANT_B]))[0]!;

describe('POST /_batch', () => {
  it('creates an order and its items in one call, the items taking the order id from {"$ref": "0.id"}', async () => {
    const res = await batch([
      { method: 'POST', path: '/orders', body: { total: 10, notes: 'batch-1' } },
      { method: 'POST', path: '/order_items', body: [{ order_id: { $ref: '0.id' }, product: 'pen', qty: 2, price: 1.5 }, { order_id: { $ref: '0.id' }, product: 'ink', qty: 1, price: 7 }] },
      { method: 'GET', path: '/order_items', query: { order_id: { $ref: '0.id' }, select: 'product', sort: 'id' } },
    ]);
    expect(res.status).toBe(200);
    const [order, items, read] = res.body.data;
    expect(order.status).toBe(201);
    expect(order.body.data).toMatchObject({ total: 10, notes: 'batch-1', tenant_id: TENANT_A });
    expect(items.status).toBe(201);
    expect(items.body.count).toBe(2);
    // The read inside the batch sees the batch's own uncommitted rows: one transaction.
    expect(read).toEqual({ status: 200, body: expect.objectContaining({ data: [{ product: 'pen' }, { product: 'ink' }] }) });
    const [stored] = await ordersNoted('batch-1');
    expect(stored).toMatchObject({ id: String(order.body.data.id), tenant_id: TENANT_A });
    expect(await itemsOf(stored!.id)).toEqual([
      { product: 'pen', qty: 2, tenant_id: TENANT_A },
      { product: 'ink', qty: 1, tenant_id: TENANT_A },
    ]);
  });

  it('writes nothing when the last operation fails, and names it in details.operation', async () => {
    const res = await batch([
      { method: 'POST', path: '/orders', body: { total: 5, notes: 'batch-fail-last' } },
      { method: 'POST', path: '/order_items', body: { order_id: { $ref: '0.id' }, product: 'ok', qty: 1, price: 1 } },
      { method: 'POST', path: '/order_items', body: { order_id: { $ref: '0.id' }, product: 'bad', qty: 0, price: 1 } },
    ]);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details).toMatchObject({ operation: 2 });
    expect(res.body.message).toMatch(/^Operation 2 of the batch: /);
    expect(await ordersNoted('batch-fail-last')).toEqual([]);
    expect(await adminRows("SELECT 1 FROM order_items WHERE product IN ('ok', 'bad')")).toEqual([]);
  });

  it('writes nothing when its backend is killed between operations (a real server process ends)', async () => {
    const pending = batch([
      { method: 'POST', path: '/orders', body: { total: 1, notes: 'batch-killed' } },
      // The trigger sleeps 2 s on this row: the backend is terminated meanwhile.
      { method: 'POST', path: '/write_items', body: { sku: 'batch-killed-sku', name: 'x', note: 'sleep' } },
    ]).then((r) => r);
    let killed = false;
    for (let i = 0; i < 100 && !killed; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const rows = await adminRows("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%write_items%' AND pid <> pg_backend_pid()");
      killed = rows.some((r) => r.ok === true);
    }
    expect(killed).toBe(true);
    const res = await pending;
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.body.details).toMatchObject({ operation: 1 });
    expect(await ordersNoted('batch-killed')).toEqual([]);
    // The gateway goes on serving: the broken connection was not reused.
    expect((await batch([{ method: 'GET', path: '/orders', query: { limit: '1' } }])).status).toBe(200);
  });

  it("cannot reach another tenant's rows: a PATCH of tenant B's order is a 404 naming the operation, and nothing of the batch is written", async () => {
    const theirs = await orderOfB();
    const res = await batch([
      { method: 'POST', path: '/orders', body: { total: 3, notes: 'batch-isolation' } },
      { method: 'PATCH', path: `/orders/${theirs.id}`, body: { status: 'cancelled' } },
    ]);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', details: { operation: 1 } });
    expect(await orderOfB()).toEqual(theirs);
    expect(await ordersNoted('batch-isolation')).toEqual([]);
    // Reads inside a batch see the caller's tenant only.
    const read = await batch([{ method: 'GET', path: '/orders', query: { select: 'tenant_id', limit: '1000' } }], tokenB);
    const tenants = new Set(read.body.data[0].body.data.map((r: { tenant_id: string }) => r.tenant_id));
    expect([...tenants]).toEqual([TENANT_B]);
  });

  it('refuses an operation the policy denies before any SQL runs (403, details.operation), even after permitted ones', async () => {
    const denied = await apps.appWith({ access: { policy: { default_decision: 'allow', tables: { order_items: { operations: ['read'] } } } } });
    const res = await batch(
      [
        { method: 'POST', path: '/orders', body: { total: 4, notes: 'batch-policy' } },
        { method: 'POST', path: '/order_items', body: { order_id: { $ref: '0.id' }, product: 'p', qty: 1, price: 1 } },
      ],
      tokenA,
      denied,
    );
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'FORBIDDEN', details: { operation: 1 } });
    expect(await ordersNoted('batch-policy')).toEqual([]);
  });

  it('answers 401 without credentials before reading the operations', async () => {
    const res = await batch('not even json', '');
    expect(res.status).toBe(401);
  });

  it('caps operations (413 max_batch_operations) and the body (413 max_batch_body_bytes)', async () => {
    const six = Array.from({ length: 6 }, () => ({ method: 'GET', path: '/orders' }));
    const many = await batch(six);
    expect(many.status).toBe(413);
    expect(many.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { operations: 6, max_batch_operations: 5 } });
    const big = await batch([{ method: 'POST', path: '/orders', body: { notes: 'x'.repeat(5000) } }]);
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { max_batch_body_bytes: 4096 } });
  });

  it.each([
    ['a body that is not an array', { method: 'GET', path: '/orders' }, 'PARSE_ERROR', undefined],
    ['an empty batch', [], 'PARSE_ERROR', undefined],
    ['an unknown method', [{ method: 'PUT', path: '/orders' }], 'PARSE_ERROR', 0],
    ['an unknown key', [{ method: 'GET', path: '/orders', when: 'now' }], 'PARSE_ERROR', 0],
    ['a nested batch', [{ method: 'POST', path: '/_batch', body: [] }], 'PARSE_ERROR', 0],
    ['a header other than Prefer', [{ method: 'GET', path: '/orders', headers: { Authorization: 'Bearer x' } }], 'PARSE_ERROR', 0],
    ['a reference to a later operation', [{ method: 'POST', path: '/orders', body: { user_id: { $ref: '1.id' } } }, { method: 'GET', path: '/users' }], 'BATCH_REFERENCE_INVALID', 0],
    ['a malformed reference', [{ method: 'GET', path: '/users' }, { method: 'POST', path: '/orders', body: { user_id: { $ref: 'first.id' } } }], 'BATCH_REFERENCE_INVALID', 1],
    ['an unknown column', [{ method: 'GET', path: '/orders' }, { method: 'POST', path: '/orders', body: { totl: 1 } }], 'UNKNOWN_COLUMN', 1],
    ['an unknown table', [{ method: 'GET', path: '/nope' }], 'NOT_FOUND', 0],
  ])('answers %s with a 4xx and its catalogue code', async (_name, body, code, operation) => {
    const res = await batch(body);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.code).toBe(code);
    if (operation !== undefined) expect(res.body.details.operation).toBe(operation);
  });

  it('fails the whole batch when a reference names no value in the earlier answer, writing nothing', async () => {
    const res = await batch([
      { method: 'POST', path: '/orders', query: { returning: 'total' }, body: { total: 2, notes: 'batch-ref-missing' } },
      { method: 'POST', path: '/order_items', body: { order_id: { $ref: '0.id' }, product: 'p', qty: 1, price: 1 } },
    ]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'BATCH_REFERENCE_INVALID', details: { operation: 1, ref: '0.id' } });
    expect(await ordersNoted('batch-ref-missing')).toEqual([]);
  });

  it('refuses a batch on the PostgREST dialect (no such route there)', async () => {
    const pg = await apps.appWith({ dialect: 'postgrest' } as never);
    const res = await batch([{ method: 'GET', path: '/orders' }], tokenA, pg);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });
});

describe('nested inserts: POST /{table} with related rows under a relation name', () => {
  it('inserts the order and its items in one transaction, filling order_id, and answers the tree', async () => {
    const res = await send(app, 'post', '/api/orders', { total: 12, notes: 'nested-1', order_items: [{ product: 'a', qty: 1, price: 2 }, { product: 'b', qty: 3, price: 4 }] });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ total: 12, notes: 'nested-1', order_items: [{ product: 'a', qty: 1 }, { product: 'b', qty: 3 }] });
    const [order] = await ordersNoted('nested-1');
    expect(res.body.data.order_items.map((i: { order_id: number }) => String(i.order_id))).toEqual([order!.id, order!.id]);
    expect(await itemsOf(order!.id)).toEqual([
      { product: 'a', qty: 1, tenant_id: TENANT_A },
      { product: 'b', qty: 3, tenant_id: TENANT_A },
    ]);
  });

  it('inserts a to-one parent first and fills the foreign key from it', async () => {
    const res = await send(app, 'post', '/api/orders', { total: 1, notes: 'nested-user', user: { email: 'nested@example.com', name: 'Nested' } });
    expect(res.status).toBe(201);
    expect(res.body.data.user).toMatchObject({ email: 'nested@example.com', tenant_id: TENANT_A });
    expect(res.body.data.user_id).toBe(res.body.data.user.id);
    expect(await adminRows('SELECT tenant_id FROM users WHERE email = $1', ['nested@example.com'])).toEqual([{ tenant_id: TENANT_A }]);
  });

  it('writes nothing when a child fails (400 naming where), neither the order nor the other items', async () => {
    const res = await send(app, 'post', '/api/orders', { total: 1, notes: 'nested-fail', order_items: [{ product: 'c', qty: 1, price: 1 }, { product: 'd', qty: -1, price: 1 }] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { at: 'orders.order_items' } });
    expect(await ordersNoted('nested-fail')).toEqual([]);
  });

  it('applies the policy to every table touched: no create on order_items is a 403 before any SQL', async () => {
    const denied = await apps.appWith({ access: { policy: { default_decision: 'allow', tables: { order_items: { operations: ['read'] } } } } });
    const res = await send(denied, 'post', '/api/orders', { total: 1, notes: 'nested-policy', order_items: [{ product: 'e', qty: 1, price: 1 }] });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(await ordersNoted('nested-policy')).toEqual([]);
  });

  it('refuses the foreign key beside the relation that fills it, and query parameters (fail closed)', async () => {
    const both = await send(app, 'post', '/api/orders', { user_id: 1, user: { email: 'x@example.com', name: 'X' } });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('PARSE_ERROR');
    const returning = await send(app, 'post', '/api/orders?returning=id', { order_items: [] });
    expect(returning.status).toBe(400);
    expect(returning.body.code).toBe('PARSE_ERROR');
  });
});

describe('bulk updates: PATCH /{table} with an array of rows carrying their keys', () => {
  const ordersOfA = async () => adminRows('SELECT id, status, total FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT 3', [TENANT_A]);

  it('updates each row with its own values, all in one transaction', async () => {
    const [a, b] = await ordersOfA();
    const res = await send(app, 'patch', '/api/orders?returning=id,total,status', [
      { id: Number(a!.id), total: 101.5 },
      { id: String(b!.id), status: 'shipped', total: 202 },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.data).toEqual([
      { id: Number(a!.id), total: 101.5, status: a!.status },
      { id: Number(b!.id), total: 202, status: 'shipped' },
    ]);
    expect(await adminRows('SELECT total::text FROM orders WHERE id = ANY($1) ORDER BY id', [[a!.id, b!.id]])).toEqual([{ total: '101.50' }, { total: '202.00' }]);
  });

  it("is 404 for a row of another tenant and leaves every row as it was (details.row)", async () => {
    const [a] = await ordersOfA();
    const theirs = await orderOfB();
    const res = await send(app, 'patch', '/api/orders', [{ id: a!.id, total: 999 }, { id: theirs.id, total: 999 }]);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', details: { row: 1 } });
    expect((await ordersOfA())[0]).toEqual(a);
    expect(await orderOfB()).toEqual(theirs);
  });

  it('skips rows it cannot see with Prefer: missing=ignore and lists them in `missing`', async () => {
    const [a] = await ordersOfA();
    const theirs = await orderOfB();
    const res = await send(app, 'patch', '/api/orders?returning=id,notes', [{ id: theirs.id, notes: 'hijack' }, { id: a!.id, notes: 'bulk-ignore' }, { id: 987654321, notes: 'nope' }], tokenA, { Prefer: 'missing=ignore' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [{ id: Number(a!.id), notes: 'bulk-ignore' }], count: 1, missing: [0, 2] });
    expect(await orderOfB()).toEqual(theirs);
    expect(await adminRows('SELECT count(*)::int AS n FROM orders WHERE notes = $1', ['hijack'])).toEqual([{ n: 0 }]);
  });

  it('refuses a row without its key or with only its key (400, details.row)', async () => {
    const noKey = await send(app, 'patch', '/api/orders', [{ total: 1 }]);
    expect(noKey.status).toBe(400);
    expect(noKey.body).toMatchObject({ code: 'PARSE_ERROR', details: { row: 0 } });
    const onlyKey = await send(app, 'patch', '/api/orders', [{ id: 1, total: 2 }, { id: 2 }]);
    expect(onlyKey.status).toBe(400);
    expect(onlyKey.body).toMatchObject({ code: 'PARSE_ERROR', details: { row: 1 } });
  });
});
