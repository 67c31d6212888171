/**
 * GET /metrics from prom-client and the Server-Timing header, over HTTP against PostgreSQL
 * (docs/architecture.md, "Metrics"): series that exist at 0 before any request, requests counted
 * by route kind and status class, database time apart from gateway time (a function that sleeps
 * 150 ms in the database shows up as database time), pool gauges that match the pool, auth
 * failures by reason, schema reloads, label values that request text cannot create, a host's
 * registry that receives the gateway's series, and Server-Timing on and off.
 *
 * Uses the `reload` schema of __tests__/fixtures/095-reload.sql (items, nap(ms)). The exposition
 * text is read with a real parser (support/scrape.ts).
 */
import express from 'express';
import pg from 'pg';
import { Counter, Registry } from 'prom-client';
import request from 'supertest';
import { createGateway, GatewayConfigError, type Gateway, type GatewayOptions } from '../../lib';
import { routeLabels } from '../../lib/ops/metrics';
import { authFailureReasons } from '../../lib/pipeline/auth-failure-reasons';
import { parseScrape, type Scrape } from '../support/scrape';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
const gateways: Gateway[] = [];
const token = signToken({ tenant_id: TENANT_A, user_id: 'alice' });

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await db?.drop();
});

async function start(options: Partial<GatewayOptions> = {}): Promise<{ gateway: Gateway; app: express.Express }> {
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['reload'], ...options } as GatewayOptions);
  gateways.push(gateway);
  await gateway.ready;
  return { gateway, app: express().use('/api', gateway).use(gateway.admin) };
}

/** `auth` null: no Authorization header. */
const get = (app: express.Express, path: string, auth: string | null = `Bearer ${token}`) => {
  const req = request(app).get(path);
  return auth === null ? req : req.set('Authorization', auth);
};
const nap = (app: express.Express, ms: number) => request(app).post('/api/rpc/nap').set('Authorization', `Bearer ${token}`).send({ ms });

async function scrape(app: express.Express): Promise<Scrape> {
  const res = await request(app).get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseScrape(res.text);
}

/** `Server-Timing: auth;dur=0.4, db;dur=2.1, total;dur=3.0` -> { auth: 0.4, db: 2.1, total: 3 }. */
function serverTiming(header: string | undefined): Record<string, number> {
  expect(header).toBeDefined();
  return Object.fromEntries(
    header!.split(',').map((entry) => {
      const match = /^\s*([a-z]+);dur=(\d+(?:\.\d+)?)\s*$/.exec(entry);
      expect(match).not.toBeNull();
      return [match![1]!, Number(match![2])];
    }),
  );
}

describe('GET /metrics', () => {
  let app: express.Express;
  let gateway: Gateway;
  beforeAll(async () => {
    ({ app, gateway } = await start());
  });

  it('has the request counter at 0 for every route kind and status class, and the auth failure reasons, before any request', async () => {
    const m = await scrape(app);
    expect(m.type('tablegate_requests_total')).toBe('counter');
    const requests = m.series('tablegate_requests_total');
    expect(requests).toHaveLength(routeLabels.length * 3);
    for (const route of routeLabels) {
      for (const statusClass of ['2xx', '4xx', '5xx']) expect(m.value('tablegate_requests_total', { route, status_class: statusClass })).toBe(0);
    }
    expect(m.series('tablegate_auth_failures_total').map((s) => [s.labels['reason'], s.value])).toEqual(authFailureReasons.map((r) => [r, 0]));
    expect(m.value('tablegate_rate_limited_total', { route: 'list' })).toBe(0);
    expect(m.value('tablegate_schema_reloads_total', { reason: 'start', result: 'ok' })).toBe(1);
    expect(m.value('tablegate_schema_objects', { kind: 'tables' })).toBe(1);
    expect(m.value('tablegate_schema_objects', { kind: 'functions' })).toBe(1);
    expect(m.value('tablegate_gss_circuit_open')).toBe(0);
    expect(m.type('tablegate_request_db_duration_seconds')).toBe('histogram');
    // prom-client's default process metrics, on the gateway's own registry.
    expect(m.type('process_cpu_user_seconds_total')).toBe('counter');
    expect(m.names).toContain('nodejs_eventloop_lag_seconds');
  });

  it('counts each request by route kind and status class, with database and gateway time apart', async () => {
    expect((await get(app, '/api/items?limit=2')).status).toBe(200);
    expect((await get(app, '/api/items/9999')).status).toBe(404);
    expect((await get(app, '/api/no_such_table')).status).toBe(404);
    expect((await nap(app, 150)).status).toBe(200);
    const m = await scrape(app);
    expect(m.value('tablegate_requests_total', { route: 'list', status_class: '2xx' })).toBe(1);
    expect(m.value('tablegate_requests_total', { route: 'get', status_class: '4xx' })).toBe(1);
    expect(m.value('tablegate_requests_total', { route: 'unknown', status_class: '4xx' })).toBe(1);
    expect(m.value('tablegate_requests_total', { route: 'rpc', status_class: '2xx' })).toBe(1);
    expect(m.value('tablegate_requests_total', { route: 'list', status_class: '4xx' })).toBe(0);

    const total = m.histogram('tablegate_request_duration_seconds', { route: 'rpc', status_class: '2xx' })!;
    const dbTime = m.histogram('tablegate_request_db_duration_seconds', { route: 'rpc', status_class: '2xx' })!;
    const gatewayTime = m.histogram('tablegate_request_gateway_duration_seconds', { route: 'rpc', status_class: '2xx' })!;
    expect([total.count, dbTime.count, gatewayTime.count]).toEqual([1, 1, 1]);
    // pg_sleep(0.15) runs in the database: its time is database time, not the gateway's.
    expect(dbTime.sum).toBeGreaterThanOrEqual(0.15);
    expect(gatewayTime.sum).toBeLessThan(0.15);
    expect(dbTime.sum + gatewayTime.sum).toBeCloseTo(total.sum, 6);
    expect(m.histogram('tablegate_request_db_duration_seconds', { route: 'list', status_class: '2xx' })?.count).toBe(1);
    // A table the schema does not have is refused before any SQL: gateway time only.
    expect(m.histogram('tablegate_request_db_duration_seconds', { route: 'unknown', status_class: '4xx' })).toBeUndefined();
    expect(m.histogram('tablegate_request_gateway_duration_seconds', { route: 'unknown', status_class: '4xx' })?.count).toBe(1);
  });

  it('counts auth failures by reason, and the caller still gets one generic 401', async () => {
    const expired = signToken({ tenant_id: TENANT_A, exp: Math.floor(Date.now() / 1000) - 3600 });
    const forged = signToken({ tenant_id: TENANT_A }, 'another-secret-that-is-at-least-32-bytes-long');
    const refusals = [
      await get(app, '/api/items', null),
      await get(app, '/api/items', 'Basic YWxpY2U6c2VjcmV0'),
      await get(app, '/api/items', 'Bearer not-a-jwt'),
      await get(app, '/api/items', `Bearer ${expired}`),
      await get(app, '/api/items', `Bearer ${expired}`),
      await get(app, '/api/items', `Bearer ${forged}`),
    ];
    expect(refusals.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(refusals[3]!.body.message).toBe(refusals[5]!.body.message);
    const m = await scrape(app);
    const counted = Object.fromEntries(m.series('tablegate_auth_failures_total').filter((s) => s.value > 0).map((s) => [s.labels['reason'], s.value]));
    expect(counted).toEqual({ missing_credentials: 1, malformed_header: 1, malformed_token: 1, expired: 2, bad_signature: 1 });
    expect(m.value('tablegate_requests_total', { route: 'unknown', status_class: '4xx' })).toBe(7);
  });

  it('counts a schema reload with its reason and result', async () => {
    const before = (await scrape(app)).value('tablegate_schema_reloads_total', { reason: 'manual', result: 'ok' });
    expect(before).toBe(0);
    await gateway.reloadSchema();
    expect((await scrape(app)).value('tablegate_schema_reloads_total', { reason: 'manual', result: 'ok' })).toBe(1);
  });

  it('never turns request text into a label value: hostile table names land in route="unknown"', async () => {
    const before = await scrape(app);
    const hostile = ['/api/evil_table_x', '/api/%22%7Bx%3D%22y%22%7D', '/api/items%0Aevil', `/api/${'z'.repeat(200)}`, '/api/rpc/evil_fn'];
    for (const path of hostile) expect((await get(app, path)).status).toBeGreaterThanOrEqual(400);
    const res = await request(app).get('/metrics');
    const after = parseScrape(res.text);
    expect(res.text).not.toMatch(/evil|zzzz/);
    for (const name of after.names.filter((n) => n.startsWith('tablegate_'))) {
      if (after.type(name) === 'histogram') continue;
      expect(after.series(name).length).toBe(before.series(name).length);
    }
    const routes = new Set(after.series('tablegate_requests_total').map((s) => s.labels['route']));
    expect([...routes].every((r) => routeLabels.includes(r!))).toBe(true);
    expect(after.value('tablegate_requests_total', { route: 'unknown', status_class: '4xx' })).toBe(before.value('tablegate_requests_total', { route: 'unknown', status_class: '4xx' })! + hostile.length);
  });
});

describe('pool gauges', () => {
  it('report the connections of the pool the gateway uses', async () => {
    const pool = new pg.Pool({ connectionString: db.appUrl, max: 3 });
    try {
      const { app } = await start({ pool, databaseUrl: undefined });
      await Promise.all([nap(app, 100), nap(app, 100)]);
      const m = await scrape(app);
      expect(pool.totalCount).toBeGreaterThanOrEqual(2);
      expect(m.value('tablegate_pool_connections', { state: 'total' })).toBe(pool.totalCount);
      expect(m.value('tablegate_pool_connections', { state: 'idle' })).toBe(pool.idleCount);
      expect(m.value('tablegate_pool_connections', { state: 'waiting' })).toBe(0);
    } finally {
      await gateways.pop()?.close();
      await pool.end();
    }
  });
});

describe('rate limit', () => {
  it('counts requests refused with 429 by route kind', async () => {
    const { app } = await start({ rateLimit: { requests: 1, windowS: 60, store: 'memory' } });
    expect((await get(app, '/api/items')).status).toBe(200);
    expect((await get(app, '/api/items')).status).toBe(429);
    const m = await scrape(app);
    expect(m.value('tablegate_rate_limited_total', { route: 'list' })).toBe(1);
    expect(m.value('tablegate_requests_total', { route: 'list', status_class: '4xx' })).toBe(1);
  });
});

describe('a host registry (metrics: { registry })', () => {
  it("receives the gateway's series, beside the host's own, on the host's /metrics", async () => {
    const registry = new Registry();
    const jobs = new Counter({ name: 'host_jobs_total', help: 'Jobs the host ran.', registers: [registry] });
    jobs.inc(3);
    const { gateway } = await start({ metrics: { registry } });
    const host = express()
      .use('/api', gateway)
      .get('/metrics', async (_req, res) => {
        res.set('Content-Type', registry.contentType).send(await registry.metrics());
      });
    expect((await get(host, '/api/items')).status).toBe(200);
    const m = parseScrape((await request(host).get('/metrics')).text);
    expect(m.value('host_jobs_total')).toBe(3);
    expect(m.value('tablegate_requests_total', { route: 'list', status_class: '2xx' })).toBe(1);
    expect(m.histogram('tablegate_request_db_duration_seconds', { route: 'list', status_class: '2xx' })?.count).toBe(1);
    // The host decides about process metrics in its registry.
    expect(m.names).not.toContain('process_cpu_user_seconds_total');
    // prom-client's own JSON view agrees.
    const json = await registry.getMetricsAsJSON();
    expect(json.find((f) => f.name === 'tablegate_requests_total')?.values.find((v) => v.labels['route'] === 'list' && v.labels['status_class'] === '2xx')?.value).toBe(1);
  });

  it('refuses a second gateway with the same names, takes one with its own prefix, and frees the names on close()', async () => {
    const registry = new Registry();
    const first = await start({ metrics: { registry } });
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['reload'], metrics: { registry } })).toThrow(GatewayConfigError);
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['reload'], metrics: { registry } })).toThrow(/already holds a metric named tablegate_requests_total.*metrics\.prefix/);
    const second = await start({ metrics: { registry, prefix: 'orders_' } });
    await get(second.app, '/api/items');
    const m = parseScrape(await registry.metrics());
    expect(m.value('orders_requests_total', { route: 'list', status_class: '2xx' })).toBe(1);
    expect(m.value('tablegate_requests_total', { route: 'list', status_class: '2xx' })).toBe(0);

    await first.gateway.close();
    expect(parseScrape(await registry.metrics()).names).not.toContain('tablegate_requests_total');
    const third = await start({ metrics: { registry } });
    await get(third.app, '/api/items');
    expect(parseScrape(await registry.metrics()).value('tablegate_requests_total', { route: 'list', status_class: '2xx' })).toBe(1);
  });

  it('keeps nothing in the host registry when createGateway throws', () => {
    const registry = new Registry();
    const options = { databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['reload'], metrics: { registry } };
    expect(() => createGateway({ ...options, reloadDatabaseUrl: 'postgres://gateway@localhost/app?sslmode=bogus' })).toThrow(GatewayConfigError);
    expect(registry.getMetricsAsArray()).toHaveLength(0);
  });

  it('adds the process metrics to a host registry only when asked', async () => {
    const registry = new Registry();
    await start({ metrics: { registry, defaultMetrics: true } });
    expect(parseScrape(await registry.metrics()).type('process_cpu_user_seconds_total')).toBe('counter');
  });

  it('refuses unknown or malformed sub-keys', () => {
    const make = (metrics: unknown) => () => createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, metrics } as GatewayOptions);
    expect(make({ regsitry: new Registry() })).toThrow(/unknown option `metrics.regsitry`; did you mean `metrics.registry`\?/);
    expect(make({ registry: {} })).toThrow(/`metrics.registry` must be a prom-client Registry/);
    expect(make({ prefix: 'bad-prefix' })).toThrow(/`metrics.prefix` must be the start of a Prometheus metric name/);
    expect(make({ defaultMetrics: 'yes' })).toThrow(/`metrics.defaultMetrics` must be true or false/);
    expect(make('on')).toThrow(/option `metrics` must be an object/);
  });
});

describe('Server-Timing', () => {
  it('is on every gateway response, errors included, with auth, db and total', async () => {
    const { app } = await start();
    const slow = await nap(app, 120);
    expect(slow.status).toBe(200);
    const t = serverTiming(slow.headers['server-timing']);
    expect(Object.keys(t)).toEqual(['auth', 'db', 'total']);
    expect(t['db']).toBeGreaterThanOrEqual(120);
    expect(t['total']).toBeGreaterThanOrEqual(t['db']! + t['auth']! - 0.2);

    const denied = await get(app, '/api/items', 'Bearer not-a-jwt');
    expect(denied.status).toBe(401);
    expect(serverTiming(denied.headers['server-timing'])).toMatchObject({ db: 0 });
    const missing = await get(app, '/api/no_such_table');
    expect(missing.status).toBe(404);
    expect(Object.keys(serverTiming(missing.headers['server-timing']))).toEqual(['auth', 'db', 'total']);
  });

  it('is absent with serverTiming: false', async () => {
    const { app } = await start({ serverTiming: false });
    const ok = await get(app, '/api/items');
    expect(ok.status).toBe(200);
    expect(ok.headers['server-timing']).toBeUndefined();
    expect((await get(app, '/api/items', null)).headers['server-timing']).toBeUndefined();
  });
});
