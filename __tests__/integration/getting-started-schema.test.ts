/**
 * docs/getting-started.md, "Minimum database setup", run as written: its SQL block is read from the
 * page (so the docs and this test cannot drift), run in a fresh database, and the gateway then
 * lists, reads, creates, updates and deletes as two tenants, connected as the role the SQL makes.
 * The answers of "First requests" are compared with the page too.
 * The role is renamed (roles are per server, and the harness has its own `tablegate_app`).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import pg from 'pg';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { signToken, TEST_JWT_SECRET } from '../support/test-database';

const page = readFileSync(join(__dirname, '..', '..', 'docs', 'getting-started.md'), 'utf8');
const setup = page.slice(page.indexOf('## Minimum database setup'));
const sqlBlock = /```sql\n([\s\S]*?)```/.exec(setup)![1]!;

const TENANT_1 = '11111111-1111-1111-1111-111111111111';
const TENANT_2 = '22222222-2222-2222-2222-222222222222';
const one = `Bearer ${signToken({ tenant_id: TENANT_1, sub: 'alice' })}`;
const two = `Bearer ${signToken({ tenant_id: TENANT_2, sub: 'bob' })}`;

const suffix = randomBytes(4).toString('hex');
const database = `tg_getting_started_${suffix}`;
const role = `tg_getting_started_${suffix}`;
const adminUrl = process.env.TABLEGATE_TEST_ADMIN_URL!;
let gateway: Gateway;
let app: express.Express;

async function asAdmin(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

function onDatabase(url: string, user?: { name: string; password: string }): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  if (user) {
    u.username = user.name;
    u.password = user.password;
  }
  return u.toString();
}

beforeAll(async () => {
  expect(sqlBlock).toContain('CREATE ROLE tablegate_app');
  await asAdmin(adminUrl, `CREATE DATABASE ${database} TEMPLATE template0`);
  await asAdmin(onDatabase(adminUrl), sqlBlock.replaceAll('tablegate_app', role));
  const password = /CREATE ROLE tablegate_app LOGIN PASSWORD '([^']+)'/.exec(sqlBlock)![1]!;
  gateway = createGateway({ databaseUrl: onDatabase(adminUrl, { name: role, password }), jwtSecret: TEST_JWT_SECRET });
  await gateway.ready;
  app = express().use('/api', gateway);
});

afterAll(async () => {
  await gateway?.close();
  await asAdmin(adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await asAdmin(adminUrl, `DROP ROLE IF EXISTS ${role}`);
});

/** The JSON block that follows the curl line for `path` in "First requests". */
function documentedAnswer(path: string): unknown {
  const at = page.indexOf(`'http://127.0.0.1:3000/api/${path}'`);
  expect(at).toBeGreaterThan(0);
  return JSON.parse(/```json\n([\s\S]*?)```/.exec(page.slice(at))![1]!);
}

test('"First requests" answer as the page shows, on the seed rows', async () => {
  for (const path of ['orders?status=paid&select=id,status,total&sort=-total&limit=2', 'orders/1']) {
    const res = await request(app).get(`/api/${path}`).set('Authorization', one).expect(200);
    expect(res.body).toEqual(documentedAnswer(path));
  }
});

test('each tenant lists only its own seed rows', async () => {
  const a = await request(app).get('/api/orders?sort=id').set('Authorization', one).expect(200);
  expect(a.body.data.map((r: { tenant_id: string; total: number }) => [r.tenant_id, r.total])).toEqual([
    [TENANT_1, 12.5],
    [TENANT_1, 8],
  ]);
  const b = await request(app).get('/api/orders').set('Authorization', two).expect(200);
  expect(b.body.data.map((r: { tenant_id: string }) => r.tenant_id)).toEqual([TENANT_2]);
});

test('POST, GET, PATCH and DELETE as tenant 2; tenant 1 can neither see nor change the row', async () => {
  // tenant_id and status come from the column defaults: the caller's tenant, 'new'.
  const created = await request(app).post('/api/orders').set('Authorization', two).send({ total: 5 }).expect(201);
  expect(created.body.data).toMatchObject({ tenant_id: TENANT_2, status: 'new', total: 5 });
  const id = created.body.data.id as number;

  await request(app).get(`/api/orders/${id}`).set('Authorization', one).expect(404);
  expect((await request(app).get(`/api/orders/${id}`).set('Authorization', two).expect(200)).body.data.total).toBe(5);

  await request(app).patch(`/api/orders/${id}`).set('Authorization', one).send({ status: 'paid' }).expect(404);
  const patched = await request(app).patch(`/api/orders/${id}`).set('Authorization', two).send({ status: 'paid' }).expect(200);
  expect(patched.body.data).toMatchObject({ id, tenant_id: TENANT_2, status: 'paid' });

  await request(app).delete(`/api/orders/${id}`).set('Authorization', one).expect(404);
  await request(app).delete(`/api/orders/${id}`).set('Authorization', two).expect(204);
  await request(app).get(`/api/orders/${id}`).set('Authorization', two).expect(404);
});

test('WITH CHECK: a tenant can neither insert a row for another tenant nor move its row to one', async () => {
  const foreign = await request(app).post('/api/orders').set('Authorization', two).send({ tenant_id: TENANT_1, total: 1 });
  expect([foreign.status, foreign.body.code]).toEqual([403, 'FORBIDDEN']);
  const own = await request(app).post('/api/orders').set('Authorization', two).send({ total: 2 }).expect(201);
  const moved = await request(app).patch(`/api/orders/${own.body.data.id}`).set('Authorization', two).send({ tenant_id: TENANT_1 });
  expect([moved.status, moved.body.code]).toEqual([403, 'FORBIDDEN']);
  const a = await request(app).get('/api/orders').set('Authorization', one).expect(200);
  expect(a.body.count).toBe(2);
});
