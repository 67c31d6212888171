/**
 * Draining close() (docs/scaling-out.md, "Shutting down"), over a real HTTP server: requests in
 * flight finish, including those waiting for the one pool connection; requests after close() get
 * 503 SERVICE_UNAVAILABLE with Retry-After, never a 500; with a short drain_timeout_ms the
 * requests still running are answered 503 and close() does not wait for their statements.
 *
 * reload.nap(ms) (__tests__/fixtures/095-reload.sql) makes a request last `ms` milliseconds.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { tokenA } from '../support/gateway-app';
import { createTestDatabase, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
const servers: http.Server[] = [];
const gateways: Gateway[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await db?.drop();
});

async function serve(options: Partial<GatewayOptions>): Promise<{ gateway: Gateway; url: string }> {
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['reload'], ...options });
  gateways.push(gateway);
  await gateway.ready;
  const server = http.createServer(express().use('/api', gateway).use(gateway.admin));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { gateway, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface Answer {
  readonly status: number;
  readonly body: { data?: unknown; code?: string };
  readonly retryAfter: string | null;
}

async function answer(res: Promise<Response>): Promise<Answer> {
  const r = await res;
  return { status: r.status, body: (await r.json()) as Answer['body'], retryAfter: r.headers.get('retry-after') };
}

const auth = { authorization: `Bearer ${tokenA}` };
const nap = (url: string, ms: number) =>
  answer(fetch(`${url}/api/rpc/nap`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ ms }) }));
const list = (url: string) => answer(fetch(`${url}/api/items?limit=1`, { headers: auth }));

/** Requests waiting for a pool connection, from /metrics (which does not use the pool). */
async function waiting(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^tablegate_pool_connections\{state="waiting"\} (\d+)$/m.exec(text)?.[1] ?? -1);
}

async function until(probe: () => Promise<boolean>, limitMs = 5000): Promise<void> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** This database's connections from one application_name. */
async function connections(applicationName: string): Promise<number> {
  const { rows } = await db.admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [applicationName]);
  return rows[0].n as number;
}

test('close() lets requests in flight finish, also those waiting for a connection, and answers new ones 503', async () => {
  const { gateway, url } = await serve({ poolMax: 1 });
  // One runs, two wait for the single connection.
  const inFlight = [nap(url, 600), nap(url, 600), nap(url, 600)];
  await until(async () => (await waiting(url)) === 2);

  let closed = false;
  const closing = gateway.close().then(() => (closed = true));
  const refused = await list(url);
  expect(refused.status).toBe(503);
  expect(refused.body.code).toBe('SERVICE_UNAVAILABLE');
  expect(refused.retryAfter).toBe('1');
  const health = await fetch(`${url}/health/internal`);
  expect(health.status).toBe(503);
  expect(await health.json()).toMatchObject({ status: 'degraded', draining: true });

  const first = await inFlight[0]!;
  expect(closed).toBe(false); // two requests are still in flight
  const all = [first, ...(await Promise.all(inFlight.slice(1)))];
  expect(all.map((a) => [a.status, a.body.data])).toEqual([
    [200, 600],
    [200, 600],
    [200, 600],
  ]);
  await closing;

  // Never "Cannot use a pool after calling end": still 503.
  const after = await list(url);
  expect([after.status, after.body.code, after.retryAfter]).toEqual([503, 'SERVICE_UNAVAILABLE', '1']);
  // The pool and the LISTEN connection are closed.
  expect(await connections('tablegate')).toBe(0);
  expect(await connections('tablegate-reload')).toBe(0);
});

test('with a short drain_timeout_ms, requests still running are answered 503 and close() resolves', async () => {
  const { gateway, url } = await serve({ poolMax: 1, drainTimeoutMs: 300 });
  const inFlight = [nap(url, 4000), nap(url, 4000)];
  await until(async () => (await waiting(url)) === 1);
  const started = Date.now();
  await gateway.close();
  const closeMs = Date.now() - started;
  expect(closeMs).toBeGreaterThanOrEqual(290);
  expect(closeMs).toBeLessThan(2500); // not the 4 s of the statement, nor 8 s of both
  for (const a of await Promise.all(inFlight)) {
    expect([a.status, a.body.code, a.retryAfter]).toEqual([503, 'SERVICE_UNAVAILABLE', '1']);
  }
  expect((await list(url)).status).toBe(503);
});

test('close() drains but leaves a pool given in options.pool open', async () => {
  const pool = new pg.Pool({ connectionString: db.appUrl, max: 2, application_name: 'drain-host-pool' });
  pool.on('error', () => undefined);
  try {
    const { gateway, url } = await serve({ pool, databaseUrl: undefined });
    const slow = nap(url, 300);
    // This pool's statement (the previous test's cut-off statements may still sleep in PostgreSQL).
    await until(async () => (await db.admin.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'drain-host-pool' AND state = 'active' AND query LIKE '%nap%'")).rowCount === 1);
    const [closedA, closedB] = [gateway.close(), gateway.close()];
    expect(closedA).toBe(closedB); // one drain, whoever asks
    expect((await list(url)).status).toBe(503);
    expect((await slow).status).toBe(200);
    await closedA;
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await pool.end();
  }
});
