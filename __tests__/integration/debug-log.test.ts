/**
 * The debug logs a new user turns on first (docs/getting-started.md, "Logs"): one
 * `tablegate:gateway` line at `ready` (schemas, tables, functions, how long) and one
 * `tablegate:request` line per request (method, path, status, command, ms, request id), which
 * never carries the token, the query string or the body. Captured through `debug`'s own switches.
 */
import { format } from 'node:util';
import createDebug from 'debug';
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
let gateway: Gateway;
const lines: string[] = [];
const originalLog = createDebug.log;
const previouslyEnabled = createDebug.disable();

beforeAll(async () => {
  createDebug.enable('tablegate:gateway,tablegate:request');
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  createDebug.log = (...args: any[]) => lines.push(format(...args).replace(/\u001b\[[0-9;]*m/g, ''));
  db = await createTestDatabase();
  gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, adminToken: 'admin-token-0123456789' });
  await gateway.ready;
});

afterAll(async () => {
  await gateway?.close();
  await db?.drop();
  createDebug.log = originalLog;
  createDebug.enable(previouslyEnabled);
});

const of = (namespace: string) => lines.filter((l) => l.includes(`${namespace} `));

test('one tablegate:gateway line at ready: schemas, tables, functions and how long', async () => {
  const ready = of('tablegate:gateway').filter((l) => / ready in /.test(l));
  expect(ready).toHaveLength(1);
  const health = await request(express().use(gateway.admin)).get('/health/internal').set('Authorization', 'Bearer admin-token-0123456789').expect(200);
  const { tables, functions } = health.body.schema as { tables: number; functions: number };
  expect(tables).toBeGreaterThan(5);
  expect(ready[0]).toMatch(new RegExp(`tablegate:gateway ready in \\d+ ms: schemas public, ${tables} tables, ${functions} functions$`));
});

test('one tablegate:request line per request, without token, query string or body', async () => {
  const token = signToken({ tenant_id: TENANT_A, sub: 'alice' });
  const app = express().use('/api', gateway);
  lines.length = 0;
  const list = await request(app).get('/api/orders?status=secret-filter-value&limit=1').set('Authorization', `Bearer ${token}`).expect(200);
  // Refused while parsing: no command kind yet, as in the metrics' route label.
  const denied = await request(app).post('/api/orders').set('Authorization', `Bearer ${token}`).set('X-Request-Id', 'req-42').send({ note: 'secret-body-value', no_such_column: 1 });
  expect(denied.status).toBe(400);
  await request(app).get('/api/orders').expect(401);
  const logged = of('tablegate:request');
  expect(logged).toHaveLength(3);
  expect(logged[0]).toMatch(new RegExp(`tablegate:request GET /api/orders 200 list [0-9.]+ms id=${list.headers['x-request-id']}$`));
  expect(logged[1]).toMatch(/tablegate:request POST \/api\/orders 400 unknown [0-9.]+ms id=req-42$/);
  expect(logged[2]).toMatch(/tablegate:request GET \/api\/orders 401 unknown [0-9.]+ms id=\S+$/);
  const all = lines.join('\n');
  for (const secret of [token, 'secret-filter-value', 'secret-body-value']) expect(all).not.toContain(secret);
});
