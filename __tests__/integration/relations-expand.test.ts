/**
 * expand=<rel> and expand=nested:<rel> on GET /{table} and GET /{table}/:id, through HTTP against
 * real PostgreSQL as the RLS-bound app role. Expected related rows are read by the admin
 * (bypassing RLS) and restricted to the caller's tenant, so a leak or a wrong join shows up.
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

/** Rows as PostgreSQL's to_json renders them (the gateway's encoding), read as the admin. */
async function jsonRows(query: string, params: unknown[] = []): Promise<Row[]> {
  const { rows } = await db.admin.query(`SELECT coalesce(json_agg(r), '[]')::text AS j FROM (${query}) r`, params);
  return JSON.parse(rows[0].j as string) as Row[];
}

async function usersById(tenant: string): Promise<Map<number, Row>> {
  const users = await jsonRows('SELECT * FROM users WHERE tenant_id = $1 ORDER BY id', [tenant]);
  return new Map(users.map((u) => [Number(u.id), u]));
}

async function itemsByOrder(tenant: string): Promise<Map<number, Row[]>> {
  const items = await jsonRows('SELECT * FROM order_items WHERE tenant_id = $1 ORDER BY id', [tenant]);
  const byOrder = new Map<number, Row[]>();
  for (const item of items) byOrder.set(Number(item.order_id), [...(byOrder.get(Number(item.order_id)) ?? []), item]);
  return byOrder;
}

describe('expand=<rel>: forward (many-to-one) relations', () => {
  it('embeds the referenced row under the table name and under the FK column without _id', async () => {
    const users = await usersById(TENANT_A);
    const orders = await jsonRows('SELECT id, user_id FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT 50', [TENANT_A]);
    for (const name of ['user', 'users']) {
      const res = await get(`/api/orders?limit=50&expand=${name}`);
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(50);
      res.body.data.forEach((row: Row, i: number) => {
        expect(row.id).toBe(orders[i]!.id);
        const userId = orders[i]!.user_id as number | null;
        expect(row[name]).toEqual(userId === null ? null : users.get(userId));
      });
    }
  });

  it('renders null when the FK is NULL (orders without a user)', async () => {
    const res = await get('/api/orders?user_id=is_null&select=id&expand=user&limit=500');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    for (const row of res.body.data) expect(row).toEqual({ id: row.id, user: null });
  });

  it('keeps the FK column out of the row unless selected, and returns it when selected', async () => {
    const hidden = await get('/api/orders?select=id,status&expand=user&limit=3');
    expect(Object.keys(hidden.body.data[0]).sort()).toEqual(['id', 'status', 'user']);
    const shown = await get('/api/orders?select=id,user_id&expand=user&limit=3');
    expect(Object.keys(shown.body.data[0]).sort()).toEqual(['id', 'user', 'user_id']);
    expect(shown.body.data[0].user.id).toBe(shown.body.data[0].user_id);
  });

  it('tells two FKs to one table apart by column (shipments.sender / recipient), and refuses the ambiguous table name', async () => {
    const users = await usersById(TENANT_A);
    const shipments = await jsonRows('SELECT id, sender_id, recipient_id FROM shipments WHERE tenant_id = $1 ORDER BY id', [TENANT_A]);
    const res = await get('/api/shipments?expand=sender,recipient&select=id');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(
      shipments.map((s) => ({ id: s.id, sender: users.get(s.sender_id as number), recipient: s.recipient_id === null ? null : users.get(s.recipient_id as number) })),
    );
    expect(res.body.data.find((r: Row) => r.id === 4).recipient).toBeNull();

    const ambiguous = await get('/api/shipments?expand=users');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.code).toBe('PARSE_ERROR');
    expect(ambiguous.body.hint).toContain('sender');
    expect(ambiguous.body.hint).toContain('recipient');
    expect(ambiguous.body.details.candidates).toEqual(['recipient', 'sender']);
  });

  it('works with filters, sort, count=exact and cursor pages (sort keys not selected: LATERAL shape)', async () => {
    const users = await usersById(TENANT_A);
    const expected = await jsonRows("SELECT id, user_id FROM orders WHERE tenant_id = $1 AND status <> 'cancelled' ORDER BY total DESC NULLS FIRST, id", [TENANT_A]);
    const items = await itemsByOrder(TENANT_A);
    const seen: Row[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const res = await get(`/api/orders?status=ne.cancelled&sort=-total&select=id&expand=user,nested:order_items&count=exact&limit=9${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(expected.length);
      seen.push(...res.body.data);
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    seen.forEach((row, i) => {
      expect(Object.keys(row).sort()).toEqual(['id', 'order_items', 'user']);
      const userId = expected[i]!.user_id as number | null;
      expect(row.user).toEqual(userId === null ? null : users.get(userId));
      expect(row.order_items).toEqual(items.get(Number(row.id)) ?? []);
    });
  });

  it('works with offset paging when the sort keys are selected (direct shape)', async () => {
    const expected = await jsonRows('SELECT id, user_id FROM orders WHERE tenant_id = $1 ORDER BY placed_at, id OFFSET 10 LIMIT 10', [TENANT_A]);
    const res = await get('/api/orders?sort=placed_at&select=id,placed_at&expand=user&offset=10&limit=10');
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: Row) => r.id)).toEqual(expected.map((r) => r.id));
    expect(res.body.data.map((r: Row) => (r.user as Row | null)?.id ?? null)).toEqual(expected.map((r) => r.user_id));
    expect(res.body.next_cursor).toEqual(expect.any(String));
  });

  it('GET /{table}/:id embeds forward and nested relations', async () => {
    const users = await usersById(TENANT_A);
    const items = await itemsByOrder(TENANT_A);
    const [order] = await jsonRows('SELECT * FROM orders WHERE tenant_id = $1 AND user_id IS NOT NULL AND id % 4 = 3 ORDER BY id LIMIT 1', [TENANT_A]);
    const res = await get(`/api/orders/${order!.id}?expand=user,nested:order_items`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ...order, user: users.get(order!.user_id as number), order_items: items.get(Number(order!.id)) });
    expect((res.body.data.order_items as Row[]).length).toBe(3);
    const narrow = await get(`/api/orders/${order!.id}?select=id&expand=user`);
    expect(narrow.body.data).toEqual({ id: order!.id, user: users.get(order!.user_id as number) });
    expect((await get(`/api/orders/${order!.id}?expand=nope`)).body.code).toBe('UNKNOWN_RELATION');
  });
});

describe('expand=nested:<rel>: reverse one-to-many relations', () => {
  it('embeds the child rows as an array, [] when none, one row per parent', async () => {
    const items = await itemsByOrder(TENANT_A);
    const orders = await jsonRows('SELECT id FROM orders WHERE tenant_id = $1 ORDER BY id', [TENANT_A]);
    const res = await get('/api/orders?select=id&expand=nested:order_items&limit=500');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(120);
    expect(res.body.data).toEqual(orders.map((o) => ({ id: o.id, order_items: items.get(Number(o.id)) ?? [] })));
    expect(res.body.data.filter((r: Row) => (r.order_items as Row[]).length === 0)).toHaveLength(30);
  });

  it('refuses a one-to-many relation without nested:, and nested: on a forward relation', async () => {
    const reverse = await get('/api/users?expand=orders');
    expect(reverse.status).toBe(400);
    expect(reverse.body.code).toBe('PARSE_ERROR');
    expect(reverse.body.hint).toBe('Write expand=nested:orders.');
    const forward = await get('/api/orders?expand=nested:user');
    expect(forward.status).toBe(400);
    expect(forward.body.code).toBe('PARSE_ERROR');
    expect(forward.body.message).toContain('forward');
  });

  it('expands a one-to-one reverse relation (unique FK) as an object with plain expand', async () => {
    const profiles = await jsonRows('SELECT * FROM user_profiles WHERE tenant_id = $1', [TENANT_A]);
    const byUser = new Map(profiles.map((p) => [Number(p.user_id), p]));
    const res = await get('/api/users?select=id&expand=user_profiles');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(14);
    for (const row of res.body.data) expect(row.user_profiles).toEqual(byUser.get(row.id) ?? null);
    const nested = await get('/api/users?select=id&expand=nested:user_profiles&limit=3');
    expect(nested.body.data[0].user_profiles).toEqual([byUser.get(1)]);
    expect(nested.body.data[2].user_profiles).toEqual([]);
  });

  it('names the reverse relations of two FKs to one table <table>!<column without _id>', async () => {
    const shipments = await jsonRows('SELECT * FROM shipments WHERE tenant_id = $1 AND sender_id = 1 ORDER BY id', [TENANT_A]);
    const res = await get('/api/users/1?select=id&expand=nested:shipments!sender');
    expect(res.status).toBe(200);
    expect(res.body.data['shipments!sender']).toEqual(shipments);
    const ambiguous = await get('/api/users/1?expand=nested:shipments');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.hint).toBe('Name one of: nested:shipments!recipient, nested:shipments!sender.');
  });
});

describe('expand: bad input is 4xx, never 500', () => {
  it.each([
    ['expand=nope', 'UNKNOWN_RELATION'],
    ['expand=usr', 'UNKNOWN_RELATION'],
    ['expand=nested:nope', 'UNKNOWN_RELATION'],
    ['expand=', 'PARSE_ERROR'],
    ['expand=user,', 'PARSE_ERROR'],
    ['expand=nested:', 'PARSE_ERROR'],
    ['expand=%22unterminated', 'PARSE_ERROR'],
    ['expand=%22a%22%22b%22', 'UNKNOWN_RELATION'],
    ['expand=users;DROP%20TABLE%20users', 'UNKNOWN_RELATION'],
    ['expand=user&expand=user', 'PARSE_ERROR'],
    ['distinct=status&expand=user', 'PARSE_ERROR'],
  ])('GET /api/orders?%s -> %s', async (query, code) => {
    const res = await get(`/api/orders?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(code);
    expect(JSON.stringify(res.body).length).toBeLessThan(1000);
  });

  it('clips a 5000-character relation name in the error', async () => {
    const res = await get(`/api/orders?expand=${'x'.repeat(5000)}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('UNKNOWN_RELATION');
    expect(JSON.stringify(res.body).length).toBeLessThan(1000);
  });

  it('suggests the nearest relation name', async () => {
    const res = await get('/api/orders?expand=usr');
    expect(res.body.hint).toBe('Did you mean `user`?');
  });

  it('expands into the hostile-named table without breaking the quoting', async () => {
    const res = await get('/api/we%22ird%20table?expand=tenant&limit=1');
    expect(res.status).toBe(200);
    expect(res.body.data[0].tenant).toEqual({ id: TENANT_A, name: 'Acme Corp' });
  });
});

describe('expand: tenant isolation (RLS applies to related rows in the same statement)', () => {
  beforeAll(async () => {
    // As the admin, plant cross-tenant references that RLS must hide: tenant B's order 3 points at
    // tenant A's user 1, and an item of tenant B hangs under tenant A's order 5.
    await db.admin.query('UPDATE orders SET user_id = 1 WHERE id = 3');
    await db.admin.query("INSERT INTO order_items (tenant_id, order_id, product, qty, price) VALUES ($1, 5, 'planted by B', 1, 1)", [TENANT_B]);
  });

  it('does not embed another tenant\'s row through a forward FK', async () => {
    const res = await get('/api/orders/3?select=id,user_id&expand=user', tokenB);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: 3, user_id: 1, user: null });
    const list = await get('/api/orders?id=3&select=id&expand=users', tokenB);
    expect(list.body.data).toEqual([{ id: 3, users: null }]);
  });

  it('does not embed another tenant\'s children through a reverse FK', async () => {
    const res = await get('/api/orders?id=5&select=id&expand=nested:order_items');
    expect(res.status).toBe(200);
    const products = (res.body.data[0].order_items as Row[]).map((i) => i.product);
    expect(products).not.toContain('planted by B');
    const { rows } = await db.admin.query("SELECT count(*)::int AS n FROM order_items WHERE order_id = 5 AND tenant_id = $1", [TENANT_A]);
    expect(products).toHaveLength(rows[0].n);
    // And tenant B cannot reach tenant A's order 5 at all.
    expect((await get('/api/orders/5?expand=nested:order_items', tokenB)).status).toBe(404);
  });
});
