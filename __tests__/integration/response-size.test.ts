/**
 * max_response_bytes and the select caps (docs/configuration.md, "Sizing max_response_bytes";
 * docs/errors.md, RESPONSE_TOO_LARGE), over HTTP against real PostgreSQL, as the RLS-bound app
 * role, tenants A and B, in both dialects. Fixture: __tests__/fixtures/097-response-size.sql.
 *
 * In process, with a small bound: every route that returns rows (list, expand / embed, get, RPC,
 * write representations) refuses a body over it with 400, rolls a write back, and answers a body
 * under it as before. Aliases and repeats are capped before any SQL.
 *
 * In a child process (`tablegate serve`, default bound): the reproductions of the crash (600 rows
 * of 1 MB in the default dialect; 1,000 aliases in the PostgREST dialect; a 600 MB function
 * result in binary format, which reaches the driver's string limit) are answered with 400 and the
 * process goes on serving the other tenant.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { freePort } from '../../lib/cli/free-port';
import { runCli, type CliProcess } from '../support/cli-process';
import { startGatewayApp, stopGatewayApp, type GatewayApp } from '../support/gateway-app';
import { startPostgrestApp, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

// The child-process tests wait for PostgreSQL to build a 600 MB page.
jest.setTimeout(600_000);

const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });
const bound = 512 * 1024;

/** `select=` of the issue: one column under `n` two-character aliases (1,000 of them: a 15 KB URL, under Node's 16 KiB header limit). */
const aliases = (n: number, column = 'description'): string => Array.from({ length: n }, (_, i) => `${i.toString(36).padStart(2, 'a')}:${column}`).join(',');

describe('default dialect, max_response_bytes = 512 KiB', () => {
  let started: GatewayApp;
  beforeAll(async () => {
    started = await startGatewayApp({ schemas: ['rsize'], maxResponseBytes: bound });
  });
  afterAll(() => stopGatewayApp(started));
  const get = (url: string, token = tokenA) => request(started.app).get(`/api${url}`).set('Authorization', `Bearer ${token}`);

  const expectTooLarge = (res: request.Response): void => {
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('RESPONSE_TOO_LARGE');
    expect(res.body.message).toMatch(/max_response_bytes is 524288/);
    expect(res.body.details.max_response_bytes).toBe(bound);
    expect(res.body.details.size).toBeGreaterThan(bound);
    expect(res.body.hint).toMatch(/export/);
  };

  it('refuses a page over the bound, serves one under it', async () => {
    expectTooLarge(await get('/products?sku=like.SMALL*&limit=1000&select=id,description'));
    const small = await get('/products?sku=like.SMALL*&limit=100&select=id,description');
    expect(small.status).toBe(200);
    expect(small.body.data).toHaveLength(100);
  });

  it('refuses a row over the bound (get) and an expansion that makes the page too large', async () => {
    expectTooLarge(await get('/products/1'));
    expect((await get('/products/1001')).status).toBe(200);
    expectTooLarge(await get('/reviews?expand=product'));
    expect((await get('/reviews?expand=product', tokenB)).status).toBe(200);
  });

  it('refuses a function result over the bound', async () => {
    const call = (n: number) => request(started.app).post('/api/rpc/huge_text').set('Authorization', `Bearer ${tokenA}`).send({ n });
    expectTooLarge(await call(600_000));
    const ok = await call(10);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toBe('y'.repeat(10));
  });

  it('refuses a write whose representation is over the bound, and rolls it back', async () => {
    const res = await request(started.app)
      .post('/api/products')
      .set('Authorization', `Bearer ${tokenA}`)
      .send({ id: 5000, sku: 'W', description: 'w'.repeat(600_000) });
    expectTooLarge(res);
    const { rows } = await started.db.admin.query('SELECT count(*)::int AS n FROM rsize.products WHERE id = 5000');
    expect(rows[0].n).toBe(0);
  });

  it('caps the mentions of one column in select', async () => {
    const res = await get(`/products?select=${Array(5).fill('description').join(',')}`);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ limit: 'column_repeats', max: 4, given: 5 });
  });

  it('tenant B is served throughout, and sees only its own rows', async () => {
    const res = await get('/products?select=id,sku', tokenB);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { id: number }) => r.id)).toEqual([3001, 3002, 3003]);
  });
});

describe('PostgREST dialect, max_response_bytes = 512 KiB', () => {
  let app: PostgrestApp;
  beforeAll(async () => {
    app = await startPostgrestApp({ schemas: ['rsize'], maxResponseBytes: bound });
  });
  afterAll(() => app.close());
  const get = (url: string, token = tokenA) => fetch(`${app.url}${url}`, { headers: { authorization: `Bearer ${token}` } });

  const expectTooLarge = async (res: Response): Promise<void> => {
    const body = (await res.json()) as { code: string; message: string; details: string; hint: string };
    expect({ status: res.status, code: body.code }).toEqual({ status: 400, code: 'PGRSTX01' });
    expect(body.message).toMatch(/max_response_bytes is 524288/);
    expect(JSON.parse(body.details)).toMatchObject({ max_response_bytes: bound });
  };

  it('refuses a read over the bound, serves one under it', async () => {
    await expectTooLarge(await get('/products?sku=like.SMALL*&limit=1000&select=id,description'));
    await expectTooLarge(await get('/products?id=eq.1'));
    const small = await get('/products?sku=like.SMALL*&limit=100&select=id,description');
    expect(small.status).toBe(200);
    expect((await small.json()) as unknown[]).toHaveLength(100);
  });

  it('refuses an embed that makes the body too large', async () => {
    await expectTooLarge(await get('/reviews?select=id,products(description)'));
    const b = await get('/reviews?select=id,products(description)', tokenB);
    expect(b.status).toBe(200);
    expect(await b.json()).toEqual([{ id: 4, products: { description: 'b one' } }]);
  });

  it('refuses a function result over the bound (RPC)', async () => {
    const call = (n: number) => fetch(`${app.url}/rpc/huge_text`, { method: 'POST', headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' }, body: JSON.stringify({ n }) });
    await expectTooLarge(await call(600_000));
    const ok = await call(3);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toBe('yyy');
  });

  it('refuses a write whose representation is over the bound, and rolls it back', async () => {
    const res = await fetch(`${app.url}/products`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json', prefer: 'return=representation' },
      body: JSON.stringify({ id: 5001, sku: 'W', description: 'w'.repeat(600_000) }),
    });
    await expectTooLarge(res);
    const { rows } = await app.db.admin.query('SELECT count(*)::int AS n FROM rsize.products WHERE id = 5001');
    expect(rows[0].n).toBe(0);
  });

  it('caps repeats of one select item, aliases included (the issue: 1,000 aliases of one column)', async () => {
    const refused = await get(`/products?sku=like.SMALL*&select=${aliases(1000)}`);
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { code: string; message: string };
    expect(body.code).toBe('PGRST100');
    expect(body.message).toMatch(/"description" selected more than 4 times, aliases included/);
    expect((await get(`/products?sku=like.SMALL*&select=${aliases(5)}`)).status).toBe(400);
    const embeds = (n: number) => Array.from({ length: n }, (_, i) => `e${i}:products(id)`).join(',');
    expect((await get(`/reviews?select=id,${embeds(5)}`)).status).toBe(400);
    expect((await get(`/reviews?select=id,${embeds(4)}`, tokenB)).status).toBe(200);
    const four = await get(`/products?sku=like.SMALL*&limit=2&select=${aliases(4)}`);
    expect(four.status).toBe(200);
    expect(Object.keys(((await four.json()) as object[])[0]!)).toEqual(['a0', 'a1', 'a2', 'a3']);
    expect(aliases(1000).length).toBeGreaterThan(14_000);
  });

  it('tenant B is served throughout, and sees only its own rows', async () => {
    const res = await get('/products?select=id', tokenB);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ id: 3001 }, { id: 3002 }, { id: 3003 }]);
  });
});

describe('the gateway in a child process survives the reproductions of the crash', () => {
  const children: ChildProcess[] = [];
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-response-size-'));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  });

  /**
   * `tablegate serve` with the default max_response_bytes, in `dialect`. No statement_timeout:
   * building the 600 MB page takes PostgreSQL from seconds to a minute on a busy machine, and the
   * page must be built for the test to mean anything (a timeout would hide a crash).
   */
  async function serve(dialect: 'tablegate' | 'postgrest'): Promise<{ cli: CliProcess; base: string }> {
    const port = await freePort();
    const config = path.join(dir, `${dialect}.toml`);
    fs.writeFileSync(config, ['[gateway]', `database_url = ${JSON.stringify(db.appUrl)}`, 'bind = "127.0.0.1:1"', `jwt_secret = "${TEST_JWT_SECRET}"`, `dialect = "${dialect}"`, 'schemas = ["rsize"]', 'statement_timeout_ms = 0', ''].join('\n'));
    const cli = runCli(children, ['serve', '--config', config, '--port', String(port)]);
    await cli.waitForOutput(/tablegate listening on (\S+)/, 30_000);
    return { cli, base: `http://127.0.0.1:${port}/api` };
  }

  const get = (url: string, token: string, headers: Record<string, string> = {}) => fetch(url, { headers: { authorization: `Bearer ${token}`, ...headers } });

  /** The process is running and answers tenant B with its own rows. */
  async function servesTenantB(cli: CliProcess, url: string, ids: (body: unknown) => unknown): Promise<void> {
    expect(cli.child.exitCode).toBeNull();
    const res = await get(url, tokenB);
    expect(res.status).toBe(200);
    expect(ids(await res.json())).toEqual([3001, 3002, 3003]);
  }

  it('default dialect: 600 rows of 1 MB, and a 600 MB function result in binary format', async () => {
    const { cli, base } = await serve('tablegate');
    const page = await get(`${base}/products?sku=like.HUGE*&limit=600&select=id,description`, tokenA);
    expect(page.status).toBe(400);
    expect(((await page.json()) as { code: string }).code).toBe('RESPONSE_TOO_LARGE');
    const tenantB = `${base}/products?select=id`;
    const ids = (body: unknown) => (body as { data: { id: number }[] }).data.map((r) => r.id);
    await servesTenantB(cli, tenantB, ids);

    // Binary results are not size-checked in SQL: the gateway's tap of their bytes counts them
    // from the rows' headers and throws from the socket's data listener, where the driver would
    // otherwise throw making a 600 MB string. That connection fails, not the process.
    const binary = await fetch(`${base}/rpc/huge_text`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json', 'x-gw-result-format': 'binary' },
      body: JSON.stringify({ n: 600_000_000 }),
    });
    const body = (await binary.json()) as { code: string; message: string };
    expect({ status: binary.status, code: body.code }).toEqual({ status: 400, code: 'RESPONSE_TOO_LARGE' });
    expect(body.message).toMatch(/max_response_bytes is 67108864/);
    await servesTenantB(cli, tenantB, ids);
    expect(cli.stderr()).not.toMatch(/ERR_STRING_TOO_LONG|uncaught/i);
  });

  it('PostgREST dialect: 1,000 aliases of a 700-character column over 1,000 rows (a 700 MB body)', async () => {
    const { cli, base } = await serve('postgrest');
    const aliased = await get(`${base}/products?sku=like.SMALL*&select=${aliases(1000)}`, tokenA);
    expect(aliased.status).toBe(400);
    expect(((await aliased.json()) as { code: string }).code).toBe('PGRST100');
    await servesTenantB(cli, `${base}/products?select=id`, (body) => (body as { id: number }[]).map((r) => r.id));
  });
});
