/**
 * Browsers and CORS (docs/security.md, "Browsers and CORS"), over real HTTP on real listening
 * servers: a browser's preflight (OPTIONS with Origin, Access-Control-Request-Method and
 * Access-Control-Request-Headers: authorization, content-type) and the GET / POST that follow it.
 *
 * - `tablegate serve` with `[gateway] cors_origins` (bin/tablegate.js -> dist, so `npm run build`
 *   must have run): listed origins are reflected, others never; the preflight is never 401.
 * - The middleware without any cors(): OPTIONS is answered 204 with the route's Allow header,
 *   before auth and without the database (it works while the database is unreachable).
 * - A host's cors() in front of the middleware, as docs/security.md shows it.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import cors from 'cors';
import express from 'express';
import { createGateway, type Gateway } from '../../lib';
import { freePort } from '../../lib/cli/free-port';
import { runCli } from '../support/cli-process';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET } from '../support/test-database';

const root = path.resolve(__dirname, '../..');
const jwtSecret = randomBytes(32).toString('hex');
const APP = 'https://app.example.com';
const EVIL = 'https://evil.example';

jest.setTimeout(60_000);

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let dir: string;
const children: ChildProcess[] = [];
const servers: http.Server[] = [];
const gateways: Gateway[] = [];

beforeAll(async () => {
  expect(fs.existsSync(path.join(root, 'dist/cjs/cli/main.js'))).toBe(true); // run `npm run build` first
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-cors-test-'));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const server of servers) server.close();
  for (const gateway of gateways) await gateway.close();
  fs.rmSync(dir, { recursive: true, force: true });
  await db?.drop();
});

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One plain HTTP request (node:http sends Origin and the Access-Control-* headers as given, like a browser). */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What a browser sends before a POST with a token and a JSON body. */
function preflight(origin: string, method = 'POST'): Record<string, string> {
  return { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'authorization, content-type' };
}

const list = (value: string | string[] | undefined): string[] => String(value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');

describe('tablegate serve with [gateway] cors_origins', () => {
  let base: string;
  const tokenA = () => signToken({ tenant_id: TENANT_A, sub: 'u1' }, jwtSecret);

  beforeAll(async () => {
    const port = await freePort();
    const config = path.join(dir, 'cors.toml');
    fs.writeFileSync(config, ['[gateway]', `database_url = ${JSON.stringify(db.appUrl)}`, `bind = "127.0.0.1:${port}"`, `jwt_secret = "${jwtSecret}"`, `cors_origins = ["${APP}", "http://localhost:5173"]`, ''].join('\n'));
    const cli = runCli(children, ['serve', '--config', config]);
    await cli.waitForOutput(/tablegate listening on (\S+)/, 30_000);
    base = `http://127.0.0.1:${port}/api`;
  });

  test('a preflight from a listed origin is answered 204 with the CORS headers, never 401', async () => {
    const res = await send(`${base}/orders`, 'OPTIONS', preflight(APP));
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(list(res.headers['access-control-allow-methods'])).toEqual(['get', 'head', 'post', 'patch', 'delete']);
    expect(list(res.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(['authorization', 'content-type', 'prefer']));
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(list(res.headers['vary'])).toContain('origin');
    // No jwt_cookie: cookies never cross origins.
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  test('the GET and POST that follow carry Access-Control-Allow-Origin and expose X-Request-Id', async () => {
    const get = await send(`${base}/orders?select=id,tenant_id&limit=3`, 'GET', { Origin: APP, Authorization: `Bearer ${tokenA()}` });
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe(APP);
    expect(list(get.headers['access-control-expose-headers'])).toEqual(expect.arrayContaining(['x-request-id', 'retry-after']));
    const rows = (JSON.parse(get.body) as { data: { tenant_id: string }[] }).data;
    expect(rows.length).toBe(3);
    expect(rows.every((r) => r.tenant_id === TENANT_A)).toBe(true);

    const post = await send(`${base}/orders`, 'POST', { Origin: APP, Authorization: `Bearer ${tokenA()}`, 'Content-Type': 'application/json' }, JSON.stringify({ status: 'pending', notes: 'from a browser' }));
    expect(post.status).toBe(201);
    expect(post.headers['access-control-allow-origin']).toBe(APP);
    expect((JSON.parse(post.body) as { data: { notes: string; tenant_id: string } }).data).toMatchObject({ notes: 'from a browser', tenant_id: TENANT_A });

    // The second listed origin too, each answer naming only the caller's origin.
    const local = await send(`${base}/orders?limit=1`, 'GET', { Origin: 'http://localhost:5173', Authorization: `Bearer ${tokenA()}` });
    expect(local.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  test('an unlisted origin gets no Access-Control-Allow-Origin: the browser keeps the answer from it', async () => {
    const pre = await send(`${base}/orders`, 'OPTIONS', preflight(EVIL));
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const get = await send(`${base}/orders?limit=1`, 'GET', { Origin: EVIL, Authorization: `Bearer ${tokenA()}` });
    expect(get.headers['access-control-allow-origin']).toBeUndefined();
    // A request without Origin (curl, a server) is unaffected by CORS.
    expect((await send(`${base}/orders?limit=1`, 'GET', { Authorization: `Bearer ${tokenA()}` })).status).toBe(200);
  });
});

describe('the middleware without cors()', () => {
  let base: string;
  const token = signToken({ tenant_id: TENANT_A, sub: 'u1' });

  beforeAll(async () => {
    base = await serveApp(async (app) => {
      const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET });
      gateways.push(gateway);
      await gateway.ready;
      app.use('/api', gateway);
    });
  });

  test('OPTIONS is 204 with the Allow header of each route, before auth; the same methods as its 405', async () => {
    const routes = ['/orders', '/orders/1', '/orders/aggregate', '/orders/_explain', '/orders/1/order_items', '/rpc/whatever', '/_rpc/contracts'];
    for (const route of routes) {
      const pre = await send(`${base}${route}`, 'OPTIONS', preflight(APP));
      expect({ route, status: pre.status, body: pre.body }).toEqual({ route, status: 204, body: '' });
      expect(pre.headers['www-authenticate']).toBeUndefined();
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      expect(pre.headers['x-request-id']).toBeDefined();
      // PUT is served by no route: its 405 names the route's methods.
      const put = await send(`${base}${route}`, 'PUT', { Authorization: `Bearer ${token}` });
      expect({ route, status: put.status }).toEqual({ route, status: 405 });
      expect({ route, allow: pre.headers['allow'] }).toEqual({ route, allow: `${put.headers['allow']}, OPTIONS` });
    }
  });

  test('OPTIONS on a path that is no route is 404 NOT_FOUND, still without credentials', async () => {
    for (const route of ['/', '/a/b/c/d']) {
      const res = await send(`${base}${route}`, 'OPTIONS', preflight(APP));
      expect(res.status).toBe(404);
      expect((JSON.parse(res.body) as { code: string }).code).toBe('NOT_FOUND');
    }
  });

  test('OPTIONS needs no database: answered while the database cannot be reached, when a GET is 503', async () => {
    const closedPort = await freePort();
    const down = await serveApp(async (app) => {
      const gateway = createGateway({ databaseUrl: `postgres://nobody@127.0.0.1:${closedPort}/none`, jwtSecret: TEST_JWT_SECRET, poolConnectionTimeoutMs: 1000 });
      gateways.push(gateway);
      await gateway.ready.catch(() => undefined);
      app.use('/api', gateway);
    });
    expect((await send(`${down}/orders`, 'GET', { Authorization: `Bearer ${token}` })).status).toBe(503);
    const pre = await send(`${down}/orders`, 'OPTIONS', preflight(APP));
    expect(pre.status).toBe(204);
    expect(pre.headers['allow']).toBe('GET, HEAD, POST, OPTIONS');
  });
});

describe('a host puts cors() in front of the middleware (docs/security.md)', () => {
  let base: string;
  const token = signToken({ tenant_id: TENANT_A, sub: 'u1' });

  beforeAll(async () => {
    base = await serveApp(async (app) => {
      const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET });
      gateways.push(gateway);
      await gateway.ready;
      app.use('/api', cors({ origin: [APP], allowedHeaders: ['Authorization', 'Content-Type'], exposedHeaders: ['X-Request-Id'] }), gateway);
    });
  });

  test('cors() answers the preflight and marks the real request', async () => {
    const pre = await send(`${base}/orders`, 'OPTIONS', preflight(APP, 'GET'));
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(APP);
    expect(list(pre.headers['access-control-allow-headers'])).toEqual(['authorization', 'content-type']);
    const get = await send(`${base}/orders?limit=2`, 'GET', { Origin: APP, Authorization: `Bearer ${token}` });
    expect(get.status).toBe(200);
    expect(get.headers['access-control-allow-origin']).toBe(APP);
    expect(get.headers['access-control-expose-headers']).toBe('X-Request-Id');
  });
});

/** An Express app on a real port of 127.0.0.1; returns the /api base URL. */
async function serveApp(mount: (app: express.Express) => Promise<void>): Promise<string> {
  const app = express();
  await mount(app);
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
}
