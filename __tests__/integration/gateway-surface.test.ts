/**
 * The library surface of contract §1 over HTTP: stage replacement, admin endpoints, unknown
 * routes and methods, reloadSchema, close.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, GatewayError, type Gateway } from '../../lib';
import { parseScrape } from '../support/scrape';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET } from '../support/test-database';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
const gateways: Gateway[] = [];
const token = signToken({ tenant_id: TENANT_A, user_id: 'alice' });

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await db?.drop();
});

function make(options: Parameters<typeof createGateway>[0] = {}): Gateway {
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, ...options });
  gateways.push(gateway);
  return gateway;
}

describe('stages can be replaced or wrapped', () => {
  it('a wrapped parse stage narrows the command and the default still runs', async () => {
    const seen: string[] = [];
    const gateway = make({
      stages: {
        parse: async (ctx, next) => {
          const command = await next(ctx);
          seen.push(command.kind);
          return command.kind === 'read' ? { ...command, root: { ...command.root, limit: 1 } } : command;
        },
        auth: (ctx, next) => {
          if (ctx.request.headers['x-blocked'] === 'yes') throw new GatewayError('FORBIDDEN', 'Blocked by the host.');
          return next(ctx);
        },
      },
    });
    await gateway.ready;
    const app = express().use('/api', gateway);
    const res = await request(app).get('/api/orders?limit=10').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(1);
    expect(seen).toEqual(['read']);
    const blocked = await request(app).get('/api/orders').set('Authorization', `Bearer ${token}`).set('x-blocked', 'yes');
    expect(blocked.status).toBe(403);
    expect(blocked.body).toEqual({ code: 'FORBIDDEN', message: 'Blocked by the host.' });
  });

  it('exposes the request context to host middleware as res.locals.gateway', async () => {
    const gateway = make();
    await gateway.ready;
    let seen: unknown;
    const app = express();
    app.use((_req, res, next) => {
      res.on('finish', () => {
        seen = res.locals.gateway;
      });
      next();
    });
    app.use('/api', gateway);
    await request(app).get('/api/orders?limit=2').set('Authorization', `Bearer ${token}`);
    expect(seen).toMatchObject({ identity: { tenantId: TENANT_A, userId: 'alice', source: 'jwt' }, command: { kind: 'read', media: 'page', root: { limit: 2 } } });
  });

  it('rejects an unknown stage name at creation', () => {
    expect(() => make({ stages: { prase: () => undefined } as never })).toThrow(/unknown stage/);
  });
});

describe('routes and methods', () => {
  let app: express.Express;
  beforeAll(async () => {
    const gateway = make();
    await gateway.ready;
    app = express().use('/api', gateway);
  });

  it.each([
    ['post', '/api', 404, 'NOT_FOUND'],
    ['get', '/api/orders/1/2/3', 404, 'NOT_FOUND'],
    ['patch', '/api/orders', 405, 'METHOD_NOT_ALLOWED'],
    ['put', '/api/orders/1', 405, 'METHOD_NOT_ALLOWED'],
  ] as const)('%s %s -> %i %s as JSON', async (method, path, status, code) => {
    const res = await request(app)[method](path).set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.code).toBe(code);
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await request(app).head('/api/orders?limit=1').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.text).toBeUndefined();
  });

  it('answers a malformed query string with PARSE_ERROR', async () => {
    const res = await request(app).get('/api/orders?status=%E0%A4%A').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('PARSE_ERROR');
  });
});

describe('admin endpoints', () => {
  it('require the admin token when configured and report health and metrics', async () => {
    const gateway = make({ adminToken: 'admin-token-0123456789' });
    await gateway.ready;
    const app = express().use('/api', gateway).use(gateway.admin);
    await request(app).get('/api/orders').set('Authorization', `Bearer ${token}`);
    for (const path of ['/metrics', '/health/internal']) {
      const denied = await request(app).get(path);
      expect(denied.status).toBe(401);
      expect(denied.body.code).toBe('UNAUTHORIZED');
      expect((await request(app).get(path).set('Authorization', 'Bearer wrong')).status).toBe(401);
    }
    const health = await request(app).get('/health/internal').set('Authorization', 'Bearer admin-token-0123456789');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', db: { reachable: true }, pool: { total: expect.any(Number) }, schema: { tables: expect.any(Number) } });
    expect(health.body.schema.tables).toBeGreaterThan(5);
    expect(JSON.stringify(health.body)).not.toContain('admin-token');
    const metrics = await request(app).get('/metrics').set('Authorization', 'Bearer admin-token-0123456789');
    expect(metrics.status).toBe(200);
    expect(parseScrape(metrics.text).value('tablegate_requests_total', { route: 'list', status_class: '2xx' })).toBe(1);
  });
});

describe('liveness: GET /health/live', () => {
  it('answers 200 without the admin token while /health/internal needs it', async () => {
    const gateway = make({ adminToken: 'admin-token-0123456789' });
    await gateway.ready;
    const app = express().use('/api', gateway).use(gateway.admin);
    const live = await request(app).get('/health/live').expect(200).expect('Content-Type', /application\/json/);
    expect(live.body).toEqual({ status: 'live' });
    expect((await request(app).get('/health/internal')).status).toBe(401);
    // Only on gateway.admin: under /api, `health` is a table name like any other.
    expect((await request(app).get('/api/health/live').set('Authorization', `Bearer ${token}`)).status).toBe(404);
  });

  it('asks no database: 200 while the database is unreachable and /health/internal is 503, and while draining', async () => {
    const gateway = createGateway({ databaseUrl: 'postgres://nobody:x@127.0.0.1:1/none', jwtSecret: TEST_JWT_SECRET, poolConnectionTimeoutMs: 500 });
    await expect(gateway.ready).rejects.toThrow(/cannot reach the database/);
    const app = express().use(gateway.admin);
    expect((await request(app).get('/health/internal')).status).toBe(503);
    expect((await request(app).get('/health/live')).status).toBe(200);
    await gateway.close();
    expect((await request(app).get('/health/live')).status).toBe(200);
  });
});

describe('reloadSchema', () => {
  it('picks up a table created after start', async () => {
    const gateway = make();
    await gateway.ready;
    const app = express().use('/api', gateway);
    await db.admin.query('CREATE TABLE late_table (id int PRIMARY KEY, tenant_id uuid)');
    await db.admin.query('GRANT SELECT ON late_table TO tablegate_app');
    const stale = await request(app).get('/api/late_table').set('Authorization', `Bearer ${token}`);
    expect([stale.status, stale.body.code, stale.body.message]).toEqual([404, 'NOT_FOUND', 'No table named `late_table` is exposed.']);
    // The table is in the database, in an exposed schema: the 404 says a reload may be due.
    expect(stale.body.hint).toMatch(/exists in an exposed schema but not in the schema the gateway has loaded: the schema may need a reload \(reloadSchema\(\), SIGHUP/);
    await gateway.reloadSchema();
    expect((await request(app).get('/api/late_table').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });

  it("an unknown table's 404 hints at a reload only for a table of an exposed schema", async () => {
    const gateway = make();
    await gateway.ready;
    const app = express().use('/api', gateway);
    await db.admin.query('CREATE SCHEMA hint_hidden; CREATE TABLE hint_hidden.hidden_table (id int PRIMARY KEY); GRANT USAGE ON SCHEMA hint_hidden TO tablegate_app; GRANT SELECT ON hint_hidden.hidden_table TO tablegate_app');
    const get = (name: string) => request(app).get(`/api/${encodeURIComponent(name)}`).set('Authorization', `Bearer ${token}`);
    for (const name of ['hidden_table', 'no_such_table_anywhere', "late_table' OR '1'='1", 'pg_class', 'orderz']) {
      const res = await get(name);
      expect([name, res.status, res.body.code]).toEqual([name, 404, 'NOT_FOUND']);
      expect(res.body.hint ?? '').not.toMatch(/reload/);
    }
    expect((await get('orderz')).body.hint).toBe('Did you mean `orders`?');
  });
});
