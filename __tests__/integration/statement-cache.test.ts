/**
 * Named prepared statements per connection (prepared_statements = true, the default), seen from
 * inside the gateway's own connection through pg_prepared_statements; and recovery when a
 * statement's Parse fails.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, describeDirect, signToken, TENANT_A, TEST_JWT_SECRET } from '../support/test-database';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
const gateways: Gateway[] = [];
const token = signToken({ tenant_id: TENANT_A });

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await db?.drop();
});

async function appWith(preparedStatements: boolean): Promise<express.Express> {
  // One connection, so every request sees the same session.
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, poolMax: 1, preparedStatements });
  gateways.push(gateway);
  await gateway.ready;
  return express().use('/api', gateway);
}

const names = async (app: express.Express): Promise<string[]> => {
  const res = await request(app).get('/api/session_prepared_statements?limit=1000').set('Authorization', `Bearer ${token}`);
  expect(res.status).toBe(200);
  return res.body.data.map((r: { name: string }) => r.name).sort();
};

describeDirect("reads its own session's prepared statements; behind PgBouncer in transaction mode sessions are shared")('prepared statement cache', () => {
  it('prepares the context and each query shape once per connection', async () => {
    const app = await appWith(true);
    for (let i = 0; i < 3; i++) {
      expect((await request(app).get(`/api/orders?status=${i % 2 ? 'paid' : 'shipped'}&limit=2`).set('Authorization', `Bearer ${token}`)).status).toBe(200);
    }
    const prepared = await names(app);
    expect(prepared).toContain('tablegate_context_ro_v2');
    expect(prepared).toEqual(expect.arrayContaining(['tablegate_reset_all_v1', 'tablegate_reset_role_v1', 'tablegate_discard_temp_v1', 'tablegate_unlock_v1']));
    // The list shape (values differ, text is the same) and the view read: two plan statements.
    expect(prepared.filter((n) => n.startsWith('tablegate_q'))).toHaveLength(2);
  });

  it('prepares nothing when prepared_statements is false', async () => {
    const app = await appWith(false);
    await request(app).get('/api/orders?limit=2').set('Authorization', `Bearer ${token}`);
    expect(await names(app)).toEqual([]);
  });

  it('recovers when a statement fails to parse (a column dropped, then restored)', async () => {
    const app = await appWith(true);
    await db.admin.query('CREATE TABLE drift (id int PRIMARY KEY, note text)');
    await db.admin.query("INSERT INTO drift VALUES (1, 'a')");
    await db.admin.query('GRANT SELECT ON drift TO tablegate_app');
    const gateway = gateways[gateways.length - 1]!;
    await gateway.reloadSchema();
    await db.admin.query('ALTER TABLE drift DROP COLUMN note');
    const broken = await request(app).get('/api/drift?select=id,note').set('Authorization', `Bearer ${token}`);
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe('UNKNOWN_COLUMN');
    await db.admin.query("ALTER TABLE drift ADD COLUMN note text DEFAULT 'b'");
    // The failed request started a background re-discovery that may have seen the column gone.
    await gateway.reloadSchema();
    const again = await request(app).get('/api/drift?select=id,note').set('Authorization', `Bearer ${token}`);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual([{ id: 1, note: 'b' }]);
  });
});
