/**
 * `search` over a table with more text columns than a PostgreSQL function takes arguments (100):
 * the search document is joined in nested groups, so the route answers instead of a 500
 * ("cannot pass more than 100 arguments to a function").
 */
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { tokenA } from '../support/gateway-app';
import { createTestDatabase, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

const COLUMNS = 120;
let db: TestDatabase;
let gateway: Gateway;
let app: express.Express;

beforeAll(async () => {
  // The table exists before the gateway discovers the schema.
  db = await createTestDatabase();
  const cols = Array.from({ length: COLUMNS }, (_, i) => `c${i} text`).join(', ');
  await db.admin.query(`
    CREATE TABLE wide (id int PRIMARY KEY, tenant_id uuid NOT NULL, ${cols});
    ALTER TABLE wide ENABLE ROW LEVEL SECURITY; ALTER TABLE wide FORCE ROW LEVEL SECURITY;
    CREATE POLICY tenant ON wide USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
    GRANT SELECT ON wide TO tablegate_app;
    INSERT INTO wide (id, tenant_id, c0, c119) VALUES (1, '${TENANT_A}', 'alpha', 'needle'), (2, '${TENANT_A}', 'needle', NULL), (3, '${TENANT_A}', 'beta', 'gamma'), (4, '${TENANT_B}', NULL, 'needle');`);
  gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET });
  await gateway.ready;
  app = express().use('/api', gateway);
});
afterAll(async () => {
  await gateway?.close();
  await db?.drop();
});

describe('search over more than 100 text columns', () => {
  it('finds the matching rows of the tenant, in the first and the last column', async () => {
    const res = await request(app).get('/api/wide?search=needle&select=id').set('Authorization', `Bearer ${tokenA}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ id: 1 }, { id: 2 }]);
  });
});
