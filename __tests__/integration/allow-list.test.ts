/**
 * The query allow-list (`allow_list_path`, contract §6) over HTTP against real PostgreSQL: the
 * pattern of every data route as dev mode shows it (`x-gw-query-pattern`), both filter spellings
 * giving one pattern, and refusals (403 QUERY_NOT_ALLOWED) before any SQL exists.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, GatewayConfigError, operationOf } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { gatewayFactory } from '../support/gateway-app';
import { useTempFiles } from '../unit/support/temp-files';

let db: TestDatabase;
const files = useTempFiles('allow-list-');
let executed: string[] = [];
const token = signToken({ tenant_id: TENANT_A, user_id: 'u1', role: 'member' });

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await apps.closeAll();
  await db?.drop();
});

beforeEach(() => {
  executed = [];
});

const apps = gatewayFactory(() => ({
  databaseUrl: db.appUrl,
  jwtSecret: TEST_JWT_SECRET,
  stages: { execute: (ctx, next) => (executed.push(operationOf(ctx.command)), next(ctx)) },
}));
const appWith = apps.appWith;

type Method = 'get' | 'post' | 'patch' | 'delete';
const call = (app: express.Express, method: Method, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const req = request(app)[method](`/api${path}`).set('Authorization', `Bearer ${token}`).set(headers);
  return body === undefined ? req : req.send(body as object);
};

describe('x-gw-query-pattern (dev mode)', () => {
  let dev: express.Express;
  beforeAll(async () => {
    dev = await appWith({ devMode: true });
  });

  it('gives both filter spellings, and any parameter order, one pattern', async () => {
    const expected = 'GET orders select=id,total status=eq sort=-placed_at limit';
    for (const path of [
      '/orders?select=id,total&status=eq.paid&sort=-placed_at&limit=5',
      '/orders?status.eq=paid&limit=7&sort=-placed_at&select=id,total',
      '/orders?limit=5&status=paid&select=id,total&sort=-placed_at',
    ]) {
      const res = await call(dev, 'get', path);
      expect(res.status).toBe(200);
      expect(res.headers['x-gw-query-pattern']).toBe(expected);
    }
  });

  it.each<[Method, string, unknown, Record<string, string>, string]>([
    ['get', '/orders', undefined, {}, 'GET orders'],
    ['get', '/orders?total.gte=1&status=in.(paid,shipped)&total=lt.100&count=exact&offset=10', undefined, {}, 'GET orders status=in total=gte total=lt count=exact offset'],
    ['get', '/documents?search=invoice&search_columns=title', undefined, {}, 'GET documents search search_columns=title'],
    ['get', '/orders?distinct=status', undefined, {}, 'GET orders distinct=status'],
    ['get', '/orders?expand=user,nested:order_items&limit=2', undefined, {}, 'GET orders expand=user,nested:order_items limit'],
    ['get', '/orders/1?select=id,status', undefined, {}, 'GET orders/:id select=id,status'],
    ['get', '/users/1/orders?status=paid', undefined, {}, 'GET users/:id/orders status=eq'],
    ['get', '/orders/aggregate?fn=sum&column=total&status=paid', undefined, {}, 'GET orders/aggregate status=eq fn=sum column=total'],
    ['get', '/orders/_explain?status=paid&limit=3', undefined, {}, 'GET orders/_explain status=eq limit'],
    ['post', '/audit_log?returning=message', { message: 'm' }, {}, 'POST audit_log returning=message body=message'],
    ['post', '/audit_log', [{ message: 'a' }, { message: 'b' }], {}, 'POST audit_log body=message batch'],
    ['post', '/write_kv', { key: 'a-key', value: 'v' }, { 'X-Upsert': 'true' }, 'POST write_kv body=key,value on_conflict=key resolution=merge'],
    ['patch', '/orders/1?returning=id', { status: 'paid', notes: 'n' }, {}, 'PATCH orders/:id returning=id body=notes,status'],
    ['delete', '/order_tags/1,x', undefined, {}, 'DELETE order_tags/:id'],
  ])('%s %s -> %s', async (method, path, body, headers, pattern) => {
    const res = await call(dev, method, path, body, headers);
    expect(res.status).toBeLessThan(500);
    expect(res.headers['x-gw-query-pattern']).toBe(pattern);
  });

  it('is not sent outside dev mode, nor for function calls', async () => {
    const prod = await appWith({});
    expect((await call(prod, 'get', '/orders?limit=1')).headers['x-gw-query-pattern']).toBeUndefined();
    expect((await call(dev, 'post', '/rpc/add', [1, 2])).headers['x-gw-query-pattern']).toBeUndefined();
  });
});

describe('allow_list_path', () => {
  let app: express.Express;
  beforeAll(async () => {
    const path = files.write(
      'allow.txt',
      [
        '# the web app',
        'GET orders select=id,total status=eq sort=-placed_at limit',
        'GET   orders/:id',
        '',
        'POST audit_log body=message',
        'PATCH orders/:id body=status',
      ].join('\n'),
    );
    app = await appWith({ allowListPath: path });
  });

  it('runs the listed patterns, in either filter spelling', async () => {
    expect((await call(app, 'get', '/orders?select=id,total&status=eq.paid&sort=-placed_at&limit=5')).status).toBe(200);
    expect((await call(app, 'get', '/orders?status.eq=shipped&sort=-placed_at&select=id,total&limit=1')).status).toBe(200);
    expect((await call(app, 'get', '/orders/1')).status).toBeLessThan(500);
    expect((await call(app, 'post', '/audit_log', { message: 'listed' })).status).toBe(201);
    expect(executed).toEqual(['list', 'list', 'get', 'insert']);
  });

  it.each<[Method, string, unknown, string]>([
    ['get', '/orders?select=id,total&status=eq.paid&sort=-placed_at', undefined, 'GET orders select=id,total status=eq sort=-placed_at'],
    ['get', '/orders?select=id,total,notes&status=eq.paid&sort=-placed_at&limit=5', undefined, 'GET orders select=id,total,notes status=eq sort=-placed_at limit'],
    ['get', '/orders?select=id,total&status=ne.paid&sort=-placed_at&limit=5', undefined, 'GET orders select=id,total status=ne sort=-placed_at limit'],
    ['get', '/orders/aggregate?fn=count', undefined, 'GET orders/aggregate fn=count'],
    ['post', '/audit_log', [{ message: 'batch' }], 'POST audit_log body=message batch'],
    ['patch', '/orders/1', { status: 'paid', notes: 'x' }, 'PATCH orders/:id body=notes,status'],
    ['delete', '/orders/1', undefined, 'DELETE orders/:id'],
  ])('refuses %s %s before SQL', async (method, path, body, pattern) => {
    const res = await call(app, method, path, body);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'QUERY_NOT_ALLOWED', details: { pattern } });
    expect(executed).toEqual([]);
  });

  it('leaves function calls to the function allow-list', async () => {
    expect((await call(app, 'post', '/rpc/add', [1, 2])).body.data).toBe(3);
  });

  it('refuses an unreadable or malformed list when the gateway is created', () => {
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, allowListPath: '/nonexistent/allow.txt' })).toThrow(GatewayConfigError);
    const bad = files.write('bad.txt', 'GET orders\nSELECT * FROM orders\n');
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, allowListPath: bad })).toThrow(/line 2/);
  });
});
