/**
 * Streamed exports (docs/querying.md, "Exports") over HTTP against real PostgreSQL, as the
 * RLS-bound app role, on the `exports` schema of __tests__/fixtures/096-exports.sql:
 * NDJSON, CSV and the streamed JSON envelope; filters, select, sort, expand, the child route,
 * the access policy, the allow-list and the tenant context applied as for a page; a client that
 * disconnects mid-stream (the backend is idle within a second, no transaction left open); a
 * database error and a statement timeout mid-stream (NDJSON: a final error line; CSV and JSON:
 * an aborted response); the export counters of GET /metrics.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { useTempFiles } from '../unit/support/temp-files';

const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });
const NDJSON = 'application/x-ndjson';
const CSV = 'text/csv';

let db: TestDatabase;
const gateways: Gateway[] = [];
const servers: http.Server[] = [];
const files = useTempFiles('exports-');

interface Served {
  readonly gateway: Gateway;
  readonly app: express.Express;
  readonly port: number;
}

async function serve(options: Partial<GatewayOptions> = {}): Promise<Served> {
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['exports'], maxExportRows: 100000, ...options } as GatewayOptions);
  gateways.push(gateway);
  await gateway.ready;
  const app = express().use('/admin', gateway.admin).use('/api', gateway);
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { gateway, app, port: (server.address() as AddressInfo).port };
}

interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** True when the body ended cleanly (the last chunk of a chunked response arrived). */
  readonly complete: boolean;
}

/** A GET over a real socket, reporting whether the body was complete: supertest hides a cut response. */
function rawGet(port: number, path: string, accept: string, token = tokenA): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: `/api${path}`, headers: { Accept: accept, Authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const finish = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), complete: res.complete });
      res.on('end', finish);
      res.on('error', finish);
      res.on('aborted', () => undefined);
    });
    req.on('error', reject);
  });
}

/** Backends of the app role on the test database that are running something or hold a transaction. */
async function busyBackends(): Promise<{ state: string; query: string }[]> {
  const { rows } = await db.admin.query<{ state: string; query: string }>(
    `SELECT state, query FROM pg_stat_activity
      WHERE datname = current_database() AND usename = 'tablegate_app' AND state <> 'idle' AND pid <> pg_backend_pid()`,
  );
  return rows;
}

async function waitFor<T>(what: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<{ value: T; elapsed: number }> {
  const started = Date.now();
  for (;;) {
    const value = await what();
    const elapsed = Date.now() - started;
    if (done(value) || elapsed > ms) return { value, elapsed };
    await new Promise((r) => setTimeout(r, 25));
  }
}

const lines = (body: string): string[] => body.split('\n').filter((l) => l !== '');

let main: Served;
beforeAll(async () => {
  db = await createTestDatabase();
  main = await serve();
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await db?.drop();
});

describe('formats', () => {
  it('streams every visible row as NDJSON, one JSON row per line, exactly as a page renders it', async () => {
    const res = await rawGet(main.port, '/items', NDJSON);
    expect(res.status).toBe(200);
    expect(res.complete).toBe(true);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const rows = lines(res.body).map((l) => JSON.parse(l) as { id: number; tenant_id: string });
    // 25,000 rows: three batches of the cursor; only tenant A's (row-level security).
    expect(rows).toHaveLength(25000);
    expect(rows.every((r) => r.tenant_id === TENANT_A)).toBe(true);
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 25000 }, (_, i) => i + 1));
    // The page's raw text: numbers keep PostgreSQL's rendering (1.50), which JSON.parse would lose.
    const page = await request(main.app).get('/api/items?limit=50').set('Authorization', `Bearer ${tokenA}`);
    // json_agg writes ", " and a newline between rows; each row's text is to_json's.
    expect(page.text.replace(/\}, \n \{/g, '},{')).toContain(`{"data":[${lines(res.body).slice(0, 50).join(',')}]`);
  });

  it("streams another tenant's rows only to that tenant", async () => {
    const res = await rawGet(main.port, '/items', NDJSON, tokenB);
    expect(lines(res.body).map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([30001, 30002, 30003, 30004, 30005]);
  });

  it('writes RFC 4180 CSV: a header line, PostgreSQL text values, quoting, NULL as empty, CRLF', async () => {
    const res = await rawGet(main.port, '/items?select=id,name,qty,price,tags&id=lte.6&sort=id', CSV);
    expect(res.status).toBe(200);
    expect(res.complete).toBe(true);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(res.body).toBe(
      'id,name,qty,price,tags\r\n' +
        '1,"a, b",1,1.50,"{x,y}"\r\n' +
        '2,"say ""hi""",2,2.50,{t2}\r\n' +
        '3,"two\nlines",3,3.50,{t0}\r\n' +
        '4,"cr\r\nlf",4,4.50,{t1}\r\n' +
        '5,"",5,5.50,{t2}\r\n' +
        '6,,6,6.50,{t0}\r\n',
    );
  });

  it('streams the JSON envelope when the JSON limit is above max_limit, up to max_export_rows', async () => {
    const res = await rawGet(main.port, '/items?limit=20000&select=id&offset=5', 'application/json');
    expect(res.complete).toBe(true);
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const body = JSON.parse(res.body) as { data: { id: number }[]; count: number; limit: number; offset: number };
    expect(body.data).toHaveLength(20000);
    expect(body.data[0]).toEqual({ id: 6 });
    expect(body).toMatchObject({ count: 20000, limit: 20000, offset: 5 });
  });

  it('refuses more rows than max_export_rows (400), count=exact on an export, and exports on other routes (406)', async () => {
    const tooMany = await request(main.app).get('/api/items?limit=100001').set('Authorization', `Bearer ${tokenA}`).set('Accept', NDJSON);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: 'PARSE_ERROR', details: { limit: 'max_export_rows', max: 100000 } });
    const counted = await request(main.app).get('/api/items?count=exact').set('Authorization', `Bearer ${tokenA}`).set('Accept', CSV);
    expect(counted.status).toBe(400);
    const row = await request(main.app).get('/api/items/1').set('Authorization', `Bearer ${tokenA}`).set('Accept', CSV);
    expect(row.status).toBe(406);
    expect(row.body.code).toBe('NOT_ACCEPTABLE');
    // An unknown type (or a preference for JSON) keeps the JSON page.
    const page = await request(main.app).get('/api/items?limit=3').set('Authorization', `Bearer ${tokenA}`).set('Accept', 'text/html, application/json;q=0.9, text/csv;q=0.5');
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(3);
  });

  it('keeps today\'s behaviour while exports are off (max_export_rows = 0): a clamped JSON page, 406 for NDJSON and CSV', async () => {
    const off = await serve({ maxExportRows: 0 });
    const page = await request(off.app).get('/api/items?limit=5000&select=id').set('Authorization', `Bearer ${tokenA}`);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(1000);
    expect(page.body.limit).toBe(1000);
    for (const accept of [NDJSON, CSV]) {
      const res = await request(off.app).get('/api/items').set('Authorization', `Bearer ${tokenA}`).set('Accept', accept);
      expect(res.status).toBe(406);
      expect(res.body.code).toBe('NOT_ACCEPTABLE');
    }
  });
});

describe('the same command as a page', () => {
  it('applies filters, select, sort and expand exactly as a page does', async () => {
    const query = '?select=id,name,qty&qty=eq.3&id=lte.900&sort=-id&expand=owner';
    const page = await request(main.app).get(`/api/items${query}&limit=1000`).set('Authorization', `Bearer ${tokenA}`);
    expect(page.status).toBe(200);
    const res = await rawGet(main.port, `/items${query}`, NDJSON);
    expect(lines(res.body).map((l) => JSON.parse(l))).toEqual(page.body.data);
    expect(page.body.data.length).toBeGreaterThan(100);
    expect(Object.keys(page.body.data[0])).toEqual(['id', 'name', 'qty', 'owner']);
    const csv = await rawGet(main.port, `/items${query}`, CSV);
    const csvLines = csv.body.split('\r\n');
    expect(csvLines[0]).toBe('id,name,qty,owner');
    expect(csvLines[1]).toBe(`${page.body.data[0].id},item ${page.body.data[0].id},3,"{""id"":${page.body.data[0].owner.id},""tenant_id"":""${TENANT_A}"",""name"":""${page.body.data[0].owner.name}""}"`);
  });

  it('streams a child route: only the children of that parent row', async () => {
    const res = await rawGet(main.port, '/owners/2/items?select=id,owner_id', NDJSON);
    const rows = lines(res.body).map((l) => JSON.parse(l) as { id: number; owner_id: number });
    expect(rows).toHaveLength(12500);
    expect(rows.every((r) => r.owner_id === 2)).toBe(true);
  });

  it('answers 404 like the page route when the parent row is hidden (another tenant\'s) or missing', async () => {
    for (const path of ['/owners/3/items', '/owners/999/items']) {
      const page = await rawGet(main.port, path, 'application/json');
      expect(page.status).toBe(404);
      for (const accept of [NDJSON, CSV]) {
        const res = await rawGet(main.port, path, accept);
        expect({ path, accept, status: res.status, code: (JSON.parse(res.body) as { code: string }).code }).toEqual({ path, accept, status: 404, code: 'NOT_FOUND' });
      }
    }
    // Tenant B owns owner 3: its (empty or not) export is a 200.
    expect((await rawGet(main.port, '/owners/3/items', NDJSON, tokenB)).status).toBe(200);
  });

  it('applies the access policy: a column the policy hides is not exported', async () => {
    const hidden = await serve({ access: { policy: { default_decision: 'allow', tables: { items: { operations: ['read'], read_columns: { except: ['price'] } } } } } } as Partial<GatewayOptions>);
    const res = await rawGet(hidden.port, '/items?id=lte.3', NDJSON);
    const rows = lines(res.body).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).not.toHaveProperty('price');
    const csv = await rawGet(hidden.port, '/items?id=lte.3', CSV);
    expect(csv.body.split('\r\n')[0]).toBe('id,tenant_id,owner_id,name,qty,tags');
  });

  it('gives an export a query pattern of its own: an allow-listed page does not allow an export', async () => {
    const dev = await serve({ devMode: true });
    const shown = await request(dev.app).get('/api/items?select=id&limit=5').set('Authorization', `Bearer ${tokenA}`).set('Accept', CSV);
    expect(shown.headers['x-gw-query-pattern']).toBe('GET items select=id limit export=csv');
    const pageOnly = await serve({ allowListPath: files.write('page.txt', 'GET items select=id limit\n') });
    expect((await request(pageOnly.app).get('/api/items?select=id&limit=5').set('Authorization', `Bearer ${tokenA}`)).status).toBe(200);
    for (const [accept, limit] of [[NDJSON, 5], [CSV, 5], ['application/json', 5000]] as const) {
      const refused = await request(pageOnly.app).get(`/api/items?select=id&limit=${limit}`).set('Authorization', `Bearer ${tokenA}`).set('Accept', accept);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('QUERY_NOT_ALLOWED');
    }
    const listed = await serve({ allowListPath: files.write('export.txt', 'GET items select=id limit export=ndjson\n') });
    const res = await rawGet(listed.port, '/items?select=id&limit=5', NDJSON);
    expect(res.status).toBe(200);
    expect(lines(res.body)).toEqual(['{"id":1}', '{"id":2}', '{"id":3}', '{"id":4}', '{"id":5}']);
  });
});

describe('cancellation and errors mid-stream', () => {
  it('cancels the query when the client disconnects: the backend is idle within a second, no transaction left open', async () => {
    const { port } = await serve();
    // The first batch (10,000 rows) arrives at once; the second sleeps 2 s per row from id 12001.
    const gotData = await new Promise<boolean>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/api/slow?select=id,napped', headers: { Accept: NDJSON, Authorization: `Bearer ${tokenA}` } }, (res) => {
        res.once('data', () => {
          void (async () => {
            // The first rows arrived; hang up while the next FETCH runs (sleeps) on the server.
            const running = await waitFor(busyBackends, (rows) => rows.some((r) => r.state === 'active' && r.query.startsWith('FETCH')), 10000);
            req.destroy();
            resolve(running.value.length > 0);
          })();
        });
        res.on('error', () => undefined);
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      setTimeout(() => resolve(false), 10000).unref();
    });
    expect(gotData).toBe(true);
    const { value, elapsed } = await waitFor(busyBackends, (rows) => rows.length === 0, 3000);
    expect(value).toEqual([]);
    expect(elapsed).toBeLessThan(1000);
    const metrics = await request(main.app).get('/admin/metrics');
    expect(metrics.status).toBe(200);
  });

  it('ends NDJSON with an error line when the database fails mid-stream, and releases the connection', async () => {
    const res = await rawGet(main.port, '/failing?select=id,checked', NDJSON);
    expect(res.status).toBe(200);
    expect(res.complete).toBe(true);
    const all = lines(res.body);
    expect(all.length).toBeGreaterThan(1000);
    expect(JSON.parse(all[0]!)).toHaveProperty('checked');
    const last = JSON.parse(all[all.length - 1]!) as { error: { code: string; message: string } };
    expect(last.error.code).toBe('VALIDATION_ERROR');
    expect(last.error.message).toMatch(/cannot be exported/);
    expect(await busyBackends()).toEqual([]);
  });

  it('aborts a CSV or JSON export when the database fails mid-stream: never a body that looks complete', async () => {
    for (const [accept, path] of [[CSV, '/failing?select=id,checked'], ['application/json', '/failing?select=id,checked&limit=50000']] as const) {
      const res = await rawGet(main.port, path, accept);
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThan(1000);
      expect(res.complete).toBe(false);
    }
    expect(await busyBackends()).toEqual([]);
  });

  it('applies export_statement_timeout_ms to each batch: a slow batch ends the stream with TIMEOUT', async () => {
    const { port } = await serve({ exportStatementTimeoutMs: 300 });
    const res = await rawGet(port, '/slow?select=id,napped', NDJSON);
    const all = lines(res.body);
    expect(all).toHaveLength(10001);
    expect(JSON.parse(all[10000]!)).toMatchObject({ error: { code: 'TIMEOUT' } });
    const csv = await rawGet(port, '/slow?select=id,napped', CSV);
    expect(csv.complete).toBe(false);
    expect(await busyBackends()).toEqual([]);
  });
});

describe('metrics', () => {
  it('counts rows and bytes streamed and exports in flight, by format', async () => {
    const { app, port } = await serve();
    const res = await rawGet(port, '/items?select=id&limit=1234', NDJSON);
    const csv = await rawGet(port, '/items?select=id&limit=10', CSV);
    const metrics = (await request(app).get('/admin/metrics')).text;
    expect(metrics).toContain('tablegate_export_rows_total{format="ndjson"} 1234\n');
    expect(metrics).toContain(`tablegate_export_bytes_total{format="ndjson"} ${Buffer.byteLength(res.body)}\n`);
    expect(metrics).toContain('tablegate_export_rows_total{format="csv"} 10\n');
    expect(metrics).toContain(`tablegate_export_bytes_total{format="csv"} ${Buffer.byteLength(csv.body)}\n`);
    expect(metrics).toContain('tablegate_exports_in_flight{format="ndjson"} 0\n');
    expect(metrics).toContain('tablegate_exports_total{format="ndjson",outcome="complete"} 1\n');
  });
});
