/**
 * `sort=<relation>.<column>` (docs/querying.md, "Sort by a related column"): lists and child routes
 * ordered by a column of a to-one related row, one or more relations deep, with keyset cursors, as
 * the RLS-bound app role. Expected orders come from admin SQL that joins the related tables
 * restricted to the caller's tenant, so a related row of another tenant orders as NULL.
 */
import express from 'express';
import request from 'supertest';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { gatewayFactory, tokenA, tokenB } from '../support/gateway-app';
import { useTempFiles } from '../unit/support/temp-files';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
type Row = Record<string, unknown>;
let db: TestDb;
let app: express.Express;
const files = useTempFiles('sort-related-');
let executed: string[] = [];

const apps = gatewayFactory(() => ({
  databaseUrl: db.appUrl,
  jwtSecret: TEST_JWT_SECRET,
  maxLimit: 500,
  stages: { execute: (ctx, next) => (executed.push(ctx.command.kind), next(ctx)) },
}));

beforeAll(async () => {
  db = await createTestDatabase();
  // Order 6 (tenant A) points at user 15 (tenant B), renamed to sort before every other name: were
  // RLS not applied to the related table, it would come first; the caller must see it as NULL.
  await db.admin.query("UPDATE users SET name = '  first of all' WHERE id = 15");
  await db.admin.query('UPDATE orders SET user_id = 15 WHERE id = 6');
  app = await apps.appWith();
});
afterAll(async () => {
  await apps.closeAll();
  await db?.drop();
});
beforeEach(() => {
  executed = [];
});

const get = (path: string, token = tokenA, on = app) => request(on).get(path).set('Authorization', `Bearer ${token}`);

async function ids(query: string, params: unknown[] = []): Promise<unknown[]> {
  const { rows } = await db.admin.query(`SELECT coalesce(json_agg(r.id), '[]')::text AS j FROM (${query}) r`, params);
  return JSON.parse(rows[0].j as string) as unknown[];
}

/** Orders of tenant A by their user's name as tenant A sees users (another tenant's user is NULL). */
const ordersByUserName = (direction: 'ASC NULLS LAST' | 'DESC NULLS FIRST', tenant = TENANT_A) =>
  ids(`SELECT o.id FROM orders o LEFT JOIN users u ON u.id = o.user_id AND u.tenant_id = $1 WHERE o.tenant_id = $1 ORDER BY u.name ${direction}, o.id`, [tenant]);

async function allPages(path: string, token = tokenA): Promise<unknown[]> {
  const seen: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 200; page++) {
    const res = await get(`${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
    expect(res.status).toBe(200);
    seen.push(...res.body.data.map((r: Row) => r.id));
    cursor = res.body.next_cursor;
    if (!cursor) return seen;
  }
  throw new Error('too many pages');
}

describe('sort by a related column', () => {
  it('orders by a to-one relation\'s column, in every spelling, with NULLs where the default order puts them', async () => {
    const asc = await ordersByUserName('ASC NULLS LAST');
    const desc = await ordersByUserName('DESC NULLS FIRST');
    expect(asc.length).toBe(120);
    expect(asc).not.toEqual(await ids('SELECT id FROM orders WHERE tenant_id = $1 ORDER BY id', [TENANT_A]));
    for (const sort of ['user.name', 'users.name', 'user.name:asc']) {
      const res = await get(`/api/orders?sort=${sort}&select=id&limit=500`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((r: Row) => r.id)).toEqual(asc);
    }
    for (const sort of ['-user.name', 'user.name:desc']) {
      const res = await get(`/api/orders?sort=${sort}&select=id&limit=500`);
      expect(res.body.data.map((r: Row) => r.id)).toEqual(desc);
    }
    // The related column is not in the rows: only the selected ones are.
    expect((await get('/api/orders?sort=user.name&select=id&limit=1')).body.data).toEqual([{ id: asc[0] }]);
  });

  it('a related row of another tenant orders as NULL (RLS applies to the related table)', async () => {
    const asc = await ordersByUserName('ASC NULLS LAST');
    const res = await get('/api/orders?sort=user.name&select=id,user_id&limit=500');
    const rows = res.body.data as Row[];
    expect(rows.find((r) => r.id === 6)).toEqual({ id: 6, user_id: 15 });
    expect(rows[0]!.id).not.toBe(6);
    expect(rows.map((r) => r.id)).toEqual(asc);
    // Among the NULLs at the end, by id: the three orders without a user and order 6.
    expect(rows.slice(-4).map((r) => r.id)).toEqual(await ids('SELECT id FROM orders WHERE tenant_id = $1 AND (user_id IS NULL OR id = 6) ORDER BY id', [TENANT_A]));
    // Tenant B sees its user 15 first, and never tenant A's order.
    const b = await get('/api/orders?sort=user.name&select=id&limit=500', tokenB);
    expect(b.body.data.map((r: Row) => r.id)).toEqual(await ordersByUserName('ASC NULLS LAST', TENANT_B));
    expect(b.body.data.map((r: Row) => r.id)).not.toContain(6);
  });

  it('follows several relations (order_items -> orders -> users) and mixes with own columns', async () => {
    const expected = await ids(
      `SELECT i.id FROM order_items i LEFT JOIN orders o ON o.id = i.order_id AND o.tenant_id = $1 LEFT JOIN users u ON u.id = o.user_id AND u.tenant_id = $1
       WHERE i.tenant_id = $1 ORDER BY u.name DESC NULLS FIRST, i.qty ASC, i.id`,
      [TENANT_A],
    );
    const res = await get('/api/order_items?sort=-order.user.name,qty&select=id&limit=500');
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: Row) => r.id)).toEqual(expected);
  });

  it('follows a reverse one-to-one relation (users -> user_profiles)', async () => {
    const expected = await ids('SELECT u.id FROM users u LEFT JOIN user_profiles p ON p.user_id = u.id WHERE u.tenant_id = $1 ORDER BY p.avatar_url ASC NULLS LAST, u.id', [TENANT_A]);
    const res = await get('/api/users?sort=user_profiles.avatar_url&select=id&limit=500');
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: Row) => r.id)).toEqual(expected);
  });

  it.each([
    ['ascending', 'user.name', 'ASC NULLS LAST'],
    ['descending', '-user.name', 'DESC NULLS FIRST'],
  ] as const)('pages with keyset cursors %s, NULLs and another tenant\'s related row included', async (_, sort, direction) => {
    const expected = await ordersByUserName(direction);
    expect(await allPages(`/api/orders?sort=${sort}&select=id&limit=7`)).toEqual(expected);
    // With an expansion the page is limited first; the cursor carries the related value the same way.
    expect(await allPages(`/api/orders?sort=${sort}&select=id&expand=user&limit=7`)).toEqual(expected);
  });

  it('orders and pages a child route by a related column', async () => {
    // The orders of tenant A's tenant row: all of its orders, so the same order as the list.
    const res = await get(`/api/tenants/${TENANT_A}/orders?sort=-user.name&select=id&limit=500`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: Row) => r.id)).toEqual(await ordersByUserName('DESC NULLS FIRST'));
    expect(await allPages(`/api/tenants/${TENANT_A}/orders?sort=user.name&select=id&limit=9`)).toEqual(await ordersByUserName('ASC NULLS LAST'));
  });

  it('keeps cursors tied to the relation they were made for', async () => {
    const first = await get('/api/orders?sort=user.name&select=id&limit=5');
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const other = await get(`/api/orders?sort=user_id&select=id&limit=5&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(other.status).toBe(400);
    expect(other.body.code).toBe('PARSE_ERROR');
  });

  it.each([
    ['/api/orders?sort=user.nope', 'UNKNOWN_COLUMN'],
    ['/api/orders?sort=-user.nope', 'UNKNOWN_COLUMN'],
    ['/api/orders?sort=nope.name', 'UNKNOWN_COLUMN'],
    ['/api/users?sort=orders.total', 'PARSE_ERROR'],
    ['/api/orders?sort=user.orders.user.orders.user.name', 'PARSE_ERROR'],
    ['/api/orders?sort=user.name&distinct=status', 'PARSE_ERROR'],
  ])('refuses %s before any SQL (%s)', async (path, code) => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(code);
    expect(executed).toEqual([]);
  });
});

describe('policy and allow-list', () => {
  const member = signToken({ tenant_id: TENANT_A, user_id: 'u1', role: 'member' });

  it('needs read on the related table and its column (403 before SQL)', async () => {
    const policy = {
      default_decision: 'deny',
      tables: {
        orders: { operations: ['read'] },
        users: { operations: ['read'], read_columns: { only: ['id', 'name'] } },
        order_items: { operations: ['read'] },
      },
    };
    const gated = await apps.appWith({ access: { policy } });
    executed = [];
    const ok = await get('/api/orders?sort=user.name&select=id&limit=500', member, gated);
    expect(ok.status).toBe(200);
    expect(ok.body.data.map((r: Row) => r.id)).toEqual(await ordersByUserName('ASC NULLS LAST'));
    const column = await get('/api/orders?sort=user.email&select=id', member, gated);
    expect(column.status).toBe(403);
    expect(column.body.code).toBe('FORBIDDEN');
    const withoutUsers = await apps.appWith({ access: { policy: { ...policy, tables: { orders: policy.tables.orders, order_items: policy.tables.order_items } } } });
    const table = await get('/api/order_items?sort=order.user.name&select=id', member, withoutUsers);
    expect(table.status).toBe(403);
    expect(table.body.code).toBe('FORBIDDEN');
    expect(executed).toEqual(['read']);
  });

  it('names the relation path in the allow-list pattern', async () => {
    const path = files.write('allow.txt', 'GET orders select=id sort=-user.name limit\n');
    const listed = await apps.appWith({ allowListPath: path });
    expect((await get('/api/orders?select=id&sort=-user.name&limit=3', tokenA, listed)).status).toBe(200);
    expect((await get('/api/orders?select=id&sort=-users.name&limit=3', tokenA, listed)).status).toBe(403);
    expect((await get('/api/orders?select=id&sort=-name&limit=3', tokenA, listed)).status).toBeGreaterThanOrEqual(400);
  });
});
