/**
 * GET /{parent}/:id/{child}: the child rows of one parent row, with every list parameter, as the
 * RLS-bound app role. Expected rows come from admin SQL restricted to the caller's tenant.
 */
import express from 'express';
import request from 'supertest';
import type { Gateway } from '../../lib';
import { createTestDatabase, TENANT_A, TENANT_B } from '../support/test-database';
import { tokenA, tokenB, useGatewayApp } from '../support/gateway-app';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
type Row = Record<string, unknown>;
let db: TestDb;
let gateway: Gateway;
let app: express.Express;

useGatewayApp({ maxLimit: 500 }, (started) => ({ db, gateway, app } = started));

const get = (path: string, token = tokenA) => request(app).get(path).set('Authorization', `Bearer ${token}`);

async function jsonRows(query: string, params: unknown[] = []): Promise<Row[]> {
  const { rows } = await db.admin.query(`SELECT coalesce(json_agg(r), '[]')::text AS j FROM (${query}) r`, params);
  return JSON.parse(rows[0].j as string) as Row[];
}

/** The user of tenant A with the most orders (so pages and filters have something to cut). */
async function busyUser(): Promise<number> {
  const { rows } = await db.admin.query('SELECT user_id FROM orders WHERE tenant_id = $1 AND user_id IS NOT NULL GROUP BY user_id ORDER BY count(*) DESC, user_id LIMIT 1', [TENANT_A]);
  return Number(rows[0].user_id);
}

describe('GET /{parent}/:id/{child}', () => {
  it('returns exactly the child rows whose FK points at the parent row, in primary-key order', async () => {
    const user = await busyUser();
    const expected = await jsonRows('SELECT * FROM orders WHERE tenant_id = $1 AND user_id = $2 ORDER BY id', [TENANT_A, user]);
    expect(expected.length).toBeGreaterThan(5);
    const res = await get(`/api/users/${user}/orders?limit=500`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(expected);
    expect(res.body.count).toBe(expected.length);
  });

  it('accepts filters, sort, select, count=exact and expand', async () => {
    const user = await busyUser();
    const expected = await jsonRows("SELECT id, total FROM orders WHERE tenant_id = $1 AND user_id = $2 AND status <> 'cancelled' ORDER BY total DESC NULLS FIRST, id", [TENANT_A, user]);
    const res = await get(`/api/users/${user}/orders?status=ne.cancelled&sort=-total&select=id,total&count=exact&expand=user&limit=500`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(expected.length);
    expect(res.body.data.map((r: Row) => ({ id: r.id, total: r.total }))).toEqual(expected);
    for (const row of res.body.data) expect((row.user as Row).id).toBe(user);
  });

  it('pages with limit/offset and with cursors over the same rows', async () => {
    const user = await busyUser();
    const expected = (await jsonRows('SELECT id FROM orders WHERE tenant_id = $1 AND user_id = $2 ORDER BY placed_at DESC, id', [TENANT_A, user])).map((r) => r.id);
    const seen: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const res = await get(`/api/users/${user}/orders?sort=-placed_at&select=id&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((r: Row) => r.id));
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(expected);
    const offset = await get(`/api/users/${user}/orders?sort=-placed_at&select=id&limit=2&offset=2`);
    expect(offset.body.data.map((r: Row) => r.id)).toEqual(expected.slice(2, 4));
  });

  it('accepts distinct and search', async () => {
    const user = await busyUser();
    const statuses = (await jsonRows('SELECT DISTINCT status FROM orders WHERE tenant_id = $1 AND user_id = $2 ORDER BY status', [TENANT_A, user])).map((r) => r.status);
    const res = await get(`/api/users/${user}/orders?distinct=status`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: Row) => r.status)).toEqual(statuses);
    const search = await get(`/api/users/${user}/orders?search=${statuses[0]}&select=id,status&limit=500`);
    expect(search.status).toBe(200);
    expect(search.body.count).toBeGreaterThan(0);
    for (const row of search.body.data) expect(row.status).toBe(statuses[0]);
  });

  it('follows a one-to-many relation with a nested expansion of the grandchildren', async () => {
    const [order] = await jsonRows('SELECT id FROM orders WHERE tenant_id = $1 AND id % 4 = 3 ORDER BY id LIMIT 1', [TENANT_A]);
    const items = await jsonRows('SELECT * FROM order_items WHERE order_id = $1 ORDER BY id', [order!.id]);
    const res = await get(`/api/orders/${order!.id}/order_items`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(items);
  });

  it('answers an empty page for a visible parent without children', async () => {
    const { rows } = await db.admin.query('SELECT id FROM orders WHERE tenant_id = $1 AND id % 4 = 0 ORDER BY id LIMIT 1', [TENANT_A]);
    const res = await get(`/api/orders/${rows[0].id}/order_items`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], count: 0, limit: 100, offset: 0 });
  });

  it('is a 404 when the parent row does not exist or belongs to another tenant (RLS)', async () => {
    const missing = await get('/api/users/999999/orders');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
    // User 15 is tenant B's and has orders; tenant A sees neither the user nor its orders.
    const { rows } = await db.admin.query('SELECT count(*)::int AS n FROM orders WHERE user_id = 15');
    expect(rows[0].n).toBeGreaterThan(0);
    const foreign = await get('/api/users/15/orders');
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await get('/api/users/15/orders', tokenB)).status).toBe(200);
  });

  it('never lists another tenant\'s child of a visible parent (RLS on the child table)', async () => {
    // As the admin, hang a tenant B order under tenant A's user 1.
    await db.admin.query("INSERT INTO orders (tenant_id, user_id, status) VALUES ($1, 1, 'paid')", [TENANT_B]);
    const expected = await jsonRows('SELECT id FROM orders WHERE tenant_id = $1 AND user_id = 1 ORDER BY id', [TENANT_A]);
    const res = await get('/api/users/1/orders?select=id&limit=500');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(expected);
  });

  it('asks to disambiguate a child table with two FKs to the parent, and follows the named one', async () => {
    const ambiguous = await get('/api/users/1/shipments');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.code).toBe('PARSE_ERROR');
    expect(ambiguous.body.hint).toBe('Use one of: /users/:id/shipments!recipient, /users/:id/shipments!sender.');
    for (const [name, column] of [['sender', 'sender_id'], ['recipient', 'recipient_id']]) {
      const { rows } = await db.admin.query(`SELECT ${column} AS u FROM shipments WHERE tenant_id = $1 AND ${column} IS NOT NULL ORDER BY id LIMIT 1`, [TENANT_A]);
      const user = Number(rows[0].u);
      const expected = await jsonRows(`SELECT * FROM shipments WHERE tenant_id = $1 AND ${column} = $2 ORDER BY id`, [TENANT_A, user]);
      const res = await get(`/api/users/${user}/shipments!${name}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(expected);
    }
  });

  it.each([
    ['/api/orders/1/nope', 404, 'NOT_FOUND'],
    ['/api/orders/1/users', 404, 'NOT_FOUND'],
    ['/api/orders/1/documents', 404, 'NOT_FOUND'],
    ['/api/users/abc/orders', 400, 'VALIDATION_ERROR'],
    ['/api/users/1/orders?nope=1', 400, 'UNKNOWN_COLUMN'],
    ['/api/users/1/orders?expand=nope', 400, 'UNKNOWN_RELATION'],
    ['/api/order_tags/1/orders', 400, 'PARSE_ERROR'],
    ['/api/audit_log/1/orders', 404, 'NOT_FOUND'],
    ['/api/users/1/we%22ird%20table', 404, 'NOT_FOUND'],
  ])('GET %s -> %i %s', async (path, status, code) => {
    const res = await get(path);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
  });

  it('answers 405 to other methods', async () => {
    const res = await request(app).post('/api/users/1/orders').set('Authorization', `Bearer ${tokenA}`).send({});
    expect(res.status).toBe(405);
  });
});
