/**
 * `rate_limit` with `store = "postgres"` (docs/scaling-out.md#rate-limits): several gateway
 * instances on one database enforce ONE limit, in-process (two createGateway, two pools) and as
 * two real `tablegate serve` processes. The table is created with the SQL printed in the docs,
 * as the superuser, and used by the RLS-bound app role, which has no DDL privilege. Without the
 * table `ready` rejects; when the store cannot count, requests are refused (503), not let through.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { createGateway, GatewayConfigError } from '../../lib';
import { freePort } from '../../lib/cli/free-port';
import { gatewayFactory } from '../support/gateway-app';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

jest.setTimeout(60_000);

const root = path.resolve(__dirname, '../..');
let db: TestDatabase;
const gateways = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET }));
const children: ChildProcess[] = [];

/** The SQL block of "The table for `store = "postgres"`" in docs/scaling-out.md, run as written. */
function documentedTableSql(): string {
  const doc = fs.readFileSync(path.join(root, 'docs/scaling-out.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### The table for `store = "postgres"`'));
  const block = /```sql\n([\s\S]*?)```/.exec(section);
  if (!section.startsWith('###') || !block) throw new Error('docs/scaling-out.md has no SQL block for the rate-limit table');
  return block[1]!;
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await gateways.closeAll();
  await db?.drop();
});

const bearer = (tenant: string, user: string): string => `Bearer ${signToken({ tenant_id: tenant, user_id: user })}`;
const postgresLimit = (requests: number, windowS: number) => ({ rateLimit: { requests, windowS, store: 'postgres' as const } });

test('without the table, ready rejects naming the table and where the SQL to create it is', async () => {
  const gateway = gateways.track(createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, ...postgresLimit(5, 60) }));
  const error = await gateway.ready.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(GatewayConfigError);
  expect((error as Error).message).toMatch(/^rate_limit uses the postgres store, but this database role cannot use its table tablegate\.rate_limit: relation "tablegate\.rate_limit" does not exist \(SQLSTATE 42P01\); create and grant it with the SQL in docs\/scaling-out\.md#rate-limits$/);
});

describe('with the documented table', () => {
  beforeAll(async () => {
    await db.admin.query(documentedTableSql());
  });

  test('two instances (two pools, one with unnamed statements) share one limit', async () => {
    const one = await gateways.appWith(postgresLimit(4, 60));
    const two = await gateways.appWith({ ...postgresLimit(4, 60), preparedStatements: false });
    const auth = bearer(TENANT_A, 'shared');
    const seen: [number, string][] = [];
    for (const app of [one, two, one, two]) {
      const res = await request(app).get('/api/orders?limit=1').set('Authorization', auth);
      seen.push([res.status, String(res.headers['ratelimit-remaining'])]);
    }
    expect(seen).toEqual([[200, '3'], [200, '2'], [200, '1'], [200, '0']]);
    for (const app of [one, two]) {
      const refused = await request(app).get('/api/orders?limit=1').set('Authorization', auth);
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(58);
    }
    // Another caller and another route kind are their own rows.
    expect((await request(two).get('/api/orders?limit=1').set('Authorization', bearer(TENANT_B, 'shared'))).status).toBe(200);
    expect((await request(one).get('/api/orders/aggregate?fn=count').set('Authorization', auth)).status).toBe(200);
    const { rows } = await db.admin.query<{ key: string; hits: number }>("SELECT key, hits FROM tablegate.rate_limit WHERE key LIKE '%:u:shared:%' ORDER BY key");
    expect(rows).toEqual([
      { key: `t:${TENANT_A}:u:shared:aggregate`, hits: 1 },
      { key: `t:${TENANT_A}:u:shared:list`, hits: 6 },
      { key: `t:${TENANT_B}:u:shared:list`, hits: 1 },
    ]);
  });

  test('concurrent hits of one caller: exactly `requests` pass, one upsert per batch, then no statement until the window resets', async () => {
    // Test-only instrumentation, outside the exposed schemas: count the upsert statements on the counter table.
    await db.admin.query(`
      CREATE TABLE tablegate.rl_statements (n int NOT NULL);
      INSERT INTO tablegate.rl_statements VALUES (0);
      CREATE FUNCTION tablegate.rl_count() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = tablegate
        AS $$ BEGIN UPDATE rl_statements SET n = n + 1; RETURN NULL; END $$;
      CREATE TRIGGER rl_count AFTER INSERT ON tablegate.rate_limit FOR EACH STATEMENT EXECUTE FUNCTION tablegate.rl_count();
    `);
    const statements = async (): Promise<number> => (await db.admin.query<{ n: number }>('SELECT n FROM tablegate.rl_statements')).rows[0]!.n;
    const hits = async (): Promise<number> => (await db.admin.query<{ hits: number }>("SELECT hits FROM tablegate.rate_limit WHERE key LIKE '%:u:burst:%'")).rows[0]!.hits;
    const serve = async (requests: number): Promise<{ url: string; close(): void }> => {
      const gateway = gateways.track(createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, ...postgresLimit(requests, 60) }));
      await gateway.ready;
      const server = express().use('/api', gateway).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/tenants`, close: () => server.close() };
    };
    const burst = (url: string, auth: string) => Promise.all(Array.from({ length: 40 }, () => fetch(url, { headers: { authorization: auth } })));
    const remaining = (responses: Response[]) => responses.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b);
    try {
      // Under the limit: 40 concurrent hits, each with its own count, in fewer than 40 upserts.
      const wide = await serve(1000);
      try {
        const before = await statements();
        const responses = await burst(wide.url, bearer(TENANT_A, 'batch'));
        expect(responses.map((r) => r.status)).toEqual(Array(40).fill(200));
        expect(remaining(responses)).toEqual(Array.from({ length: 40 }, (_, i) => 960 + i));
        const sent = (await statements()) - before;
        expect(sent).toBeGreaterThanOrEqual(1);
        expect(sent).toBeLessThan(40); // hits that waited for a running upsert went together
      } finally {
        wide.close();
      }
      // Over the limit: exactly `requests` pass; then refused from memory until the reset, no statement.
      const narrow = await serve(10);
      try {
        const auth = bearer(TENANT_A, 'burst');
        const responses = await burst(narrow.url, auth);
        const passed = responses.filter((r) => r.status === 200);
        expect(passed.length).toBe(10);
        expect(responses.filter((r) => r.status === 429).length).toBe(30);
        expect(remaining(passed)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        const [sent, counted] = [await statements(), await hits()];
        const later = await fetch(narrow.url, { headers: { authorization: auth } });
        expect(later.status).toBe(429);
        expect(Number(later.headers.get('retry-after'))).toBeGreaterThanOrEqual(58);
        expect([await statements(), await hits()]).toEqual([sent, counted]);
      } finally {
        narrow.close();
      }
    } finally {
      await db.admin.query('DROP TRIGGER rl_count ON tablegate.rate_limit; DROP FUNCTION tablegate.rl_count(); DROP TABLE tablegate.rl_statements;');
    }
  });

  test('the window resets by the database clock', async () => {
    const app = await gateways.appWith(postgresLimit(1, 1));
    const auth = bearer(TENANT_A, 'pg-window');
    expect((await request(app).get('/api/tenants').set('Authorization', auth)).status).toBe(200);
    expect((await request(app).get('/api/tenants').set('Authorization', auth)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await request(app).get('/api/tenants').set('Authorization', auth);
    expect(again.status).toBe(200);
    expect(again.headers['ratelimit-remaining']).toBe('0');
  });

  test('a store that cannot count refuses with 503 SERVICE_UNAVAILABLE, and counts again once it can', async () => {
    const app = await gateways.appWith(postgresLimit(100, 60));
    const auth = bearer(TENANT_A, 'revoked');
    expect((await request(app).get('/api/tenants').set('Authorization', auth)).status).toBe(200);
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await db.admin.query('REVOKE INSERT, UPDATE ON tablegate.rate_limit FROM tablegate_app');
    try {
      const res = await request(app).get('/api/tenants').set('Authorization', auth);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The rate limit could not be checked; try again shortly.' });
      expect(res.headers['retry-after']).toBe('1');
      expect(errors.mock.calls.map((c) => String(c[0]))).toContainEqual(expect.stringMatching(/rate-limit store failed \(permission denied for table rate_limit\)/));
    } finally {
      await db.admin.query('GRANT INSERT, UPDATE ON tablegate.rate_limit TO tablegate_app');
      errors.mockRestore();
    }
    const back = await request(app).get('/api/tenants').set('Authorization', auth);
    expect(back.status).toBe(200);
    expect(back.headers['ratelimit-remaining']).toBe('98');
  });

  test('two `tablegate serve` processes share one limit', async () => {
    expect(fs.existsSync(path.join(root, 'dist/cjs/cli/main.js'))).toBe(true); // run `npm run build` first
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-rate-limit-'));
    try {
      const config = path.join(dir, 'gw.toml');
      fs.writeFileSync(config, ['[gateway]', `database_url = ${JSON.stringify(db.appUrl)}`, 'rate_limit = { requests = 3, window_s = 60, store = "postgres" }', ''].join('\n'));
      const ports = [await freePort(), await freePort()];
      const servers = ports.map((port) => serve(config, port));
      await Promise.all(servers.map((s) => s.listening));
      const auth = bearer(TENANT_B, 'processes');
      const get = (port: number) => fetch(`http://127.0.0.1:${port}/api/orders?limit=1`, { headers: { authorization: auth } });
      const statuses: number[] = [];
      for (const port of [ports[0]!, ports[1]!, ports[0]!, ports[1]!, ports[0]!]) statuses.push((await get(port)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      for (const s of servers) s.child.kill('SIGTERM');
      expect(await Promise.all(servers.map((s) => s.exited))).toEqual([0, 0]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('`tablegate serve` with an incomplete rate_limit exits 1 naming the missing key', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-rate-limit-'));
  try {
    const config = path.join(dir, 'gw.toml');
    fs.writeFileSync(config, ['[gateway]', `database_url = ${JSON.stringify(db.appUrl)}`, 'rate_limit = { requests = 3 }', ''].join('\n'));
    const server = serve(config, await freePort());
    expect(await server.exited).toBe(1);
    expect(server.stderr()).toBe(`tablegate: \`rate_limit\` in [gateway] of ${config} needs \`window_s\`; e.g. rate_limit = { requests = 100, window_s = 60, store = "memory" }\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** `tablegate serve` (bin/tablegate.js -> dist) with JWT_SECRET from the environment. */
function serve(config: string, port: number) {
  const env: NodeJS.ProcessEnv = { ...process.env, JWT_SECRET: TEST_JWT_SECRET };
  delete env['GW_DEV_MODE'];
  delete env['DATABASE_URL'];
  const child = spawn(process.execPath, [path.join(root, 'bin/tablegate.js'), 'serve', '--config', config, '--port', String(port)], { cwd: root, env });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/tablegate listening on /.test(out)) resolve();
    });
    void exited.then((code) => reject(new Error(`tablegate serve exited ${code} before listening: ${err}`)));
  });
  listening.catch(() => undefined);
  return { child, listening, exited, stderr: () => err };
}
