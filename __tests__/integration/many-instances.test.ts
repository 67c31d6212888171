/**
 * Several gateway processes on one database, sharing nothing but PostgreSQL (docs/scaling-out.md):
 * two real `tablegate serve` processes with the same gw.toml. A `next_cursor` from one is accepted
 * by the other; DDL reaches both through the event trigger that `tablegate install-reload-trigger`
 * installed; SIGTERM drains a request in flight and exits 0.
 *
 * Runs bin/tablegate.js -> dist, so `npm run build` must have run.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../lib/cli/free-port';
import { reloadTriggerScript } from '../../lib/schema/reload-trigger-sql';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { runCli } from '../support/cli-process';

const root = path.resolve(__dirname, '../..');
jest.setTimeout(60_000);

let db: TestDatabase;
let dir: string;
let config: string;
/** The same, with a drain timeout shorter than a slow request. */
let impatient: string;
const children: ChildProcess[] = [];
const token = signToken({ tenant_id: TENANT_A, user_id: 'alice' });

beforeAll(async () => {
  expect(fs.existsSync(path.join(root, 'dist/cjs/cli/main.js'))).toBe(true); // run `npm run build` first
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-instances-test-'));
  config = path.join(dir, 'gw.toml');
  impatient = path.join(dir, 'impatient.toml');
  const lines = ['[gateway]', `database_url = ${JSON.stringify(db.appUrl)}`, 'bind = "127.0.0.1:1"', `jwt_secret = ${JSON.stringify(TEST_JWT_SECRET)}`, 'schemas = ["reload"]'];
  fs.writeFileSync(config, [...lines, ''].join('\n'));
  fs.writeFileSync(impatient, [...lines, 'drain_timeout_ms = 500', ''].join('\n'));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
  await db?.drop();
});

describe('tablegate install-reload-trigger', () => {
  it('installs the event triggers, and running it again changes nothing', async () => {
    for (let i = 0; i < 2; i++) {
      const cli = run(['install-reload-trigger', '--config', config, '--database-url', db.adminUrl]);
      expect(await cli.exit(20_000)).toBe(0);
      expect(cli.stdout()).toMatch(/^tablegate: installed the schema reload trigger in database tg_\w+:\n {2}function public\.tablegate_reload_notify\(\) sends NOTIFY tablegate_reload\n/);
      expect(cli.stderr()).toBe('');
      expect(cli.stdout() + cli.stderr()).not.toContain(new URL(db.adminUrl).password);
    }
    const { rows } = await db.admin.query(
      "SELECT evtname, evtevent, evtfoid::regprocedure::text AS fn FROM pg_event_trigger WHERE evtname LIKE 'tablegate_reload%' ORDER BY evtname",
    );
    expect(rows).toEqual([
      { evtname: 'tablegate_reload_ddl', evtevent: 'ddl_command_end', fn: 'tablegate_reload_notify()' },
      { evtname: 'tablegate_reload_drop', evtevent: 'sql_drop', fn: 'tablegate_reload_notify()' },
    ]);
  });

  it('--print shows the SQL without connecting', async () => {
    const cli = run(['install-reload-trigger', '--print']);
    expect(await cli.exit(10_000)).toBe(0);
    expect(cli.stdout()).toBe(reloadTriggerScript('tablegate_reload'));
  });

  it('as the app role (not a superuser) exits 1 and says what is needed', async () => {
    const cli = run(['install-reload-trigger', '--config', config]);
    expect(await cli.exit(20_000)).toBe(1);
    expect(cli.stderr()).toMatch(/^tablegate: could not install the reload trigger: permission denied.*needs a superuser: pass --database-url/);
    expect(cli.stderr()).not.toContain(new URL(db.appUrl).password);
  });
});

describe('two tablegate serve processes on one database', () => {
  let one: string;
  let two: string;
  let first: ReturnType<typeof run>;
  let second: ReturnType<typeof run>;

  beforeAll(async () => {
    const [portOne, portTwo] = [await freePort(), await freePort()];
    first = run(['serve', '--config', config, '--port', String(portOne)]);
    second = run(['serve', '--config', impatient, '--port', String(portTwo)]);
    await Promise.all([first.waitForOutput(/tablegate listening on/, 30_000), second.waitForOutput(/tablegate listening on/, 30_000)]);
    one = `http://127.0.0.1:${portOne}/api`;
    two = `http://127.0.0.1:${portTwo}/api`;
  });

  const get = async (url: string): Promise<{ status: number; body: { data?: Array<{ id: number }>; next_cursor?: string; code?: string } }> => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as never };
  };

  it('accepts a next_cursor of one instance on the other, which returns the next page', async () => {
    const page1 = await get(`${one}/items?select=id&sort=-id&limit=7`);
    expect(page1.status).toBe(200);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await get(`${two}/items?select=id&sort=-id&limit=7&cursor=${encodeURIComponent(page1.body.next_cursor!)}`);
    expect(page2.status).toBe(200);
    // Tenant A owns the ids not divisible by 3: 29, 28, 26, 25, 23, 22, 20 | 19, 17, 16, 14, 13, 11, 10.
    expect(page1.body.data!.map((r) => r.id)).toEqual([29, 28, 26, 25, 23, 22, 20]);
    expect(page2.body.data!.map((r) => r.id)).toEqual([19, 17, 16, 14, 13, 11, 10]);
    const byOffset = await get(`${one}/items?select=id&sort=-id&limit=7&offset=7`);
    expect(page2.body.data).toEqual(byOffset.body.data);
  });

  it('a DDL change reaches both instances within 2 s, without any call', async () => {
    expect((await get(`${one}/shared`)).status).toBe(404);
    expect((await get(`${two}/shared`)).status).toBe(404);
    await db.admin.query(`
      CREATE TABLE reload.shared (id integer PRIMARY KEY, tenant_id uuid NOT NULL);
      ALTER TABLE reload.shared ENABLE ROW LEVEL SECURITY;
      ALTER TABLE reload.shared FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON reload.shared USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
      GRANT SELECT ON reload.shared TO tablegate_app;
      INSERT INTO reload.shared VALUES (1, '${TENANT_A}');`);
    const started = Date.now();
    const seen = await Promise.all(
      [one, two].map(async (base) => {
        while ((await get(`${base}/shared`)).status !== 200) {
          if (Date.now() - started > 6000) throw new Error(`${base} never served the new table`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return Date.now() - started;
      }),
    );
    expect(Math.max(...seen)).toBeLessThan(2000);
    expect((await get(`${two}/shared`)).body.data).toEqual([{ id: 1, tenant_id: TENANT_A }]);
  });

  it('SIGTERM drains: a request in flight finishes (or gets 503 after drain_timeout_ms), then exit 0', async () => {
    const nap = (base: string, ms: number) =>
      fetch(`${base}/rpc/nap`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ ms }) });
    const patient = nap(one, 1500);
    const cutOff = nap(two, 5000);
    // Both statements are running once PostgreSQL shows them.
    const started = Date.now();
    while ((await db.admin.query("SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%nap%' AND pid <> pg_backend_pid()")).rowCount !== 2) {
      if (Date.now() - started > 5000) throw new Error('the slow requests never reached PostgreSQL');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const signalled = Date.now();
    first.child.kill('SIGTERM');
    second.child.kill('SIGTERM');

    const late = await cutOff;
    expect(late.status).toBe(503);
    expect(late.headers.get('retry-after')).toBe('1');
    expect(((await late.json()) as { code: string }).code).toBe('SERVICE_UNAVAILABLE');
    expect(await second.exit(15_000)).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(3000); // not the 5 s of its statement

    const res = await patient;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: 1500 });
    // The listening socket is closed: a new connection is refused.
    await expect(fetch(`${one}/items`, { headers: { authorization: `Bearer ${token}` } })).rejects.toThrow();
    expect(await first.exit(15_000)).toBe(0);
    expect(first.stderr()).toBe('');
    expect(second.stderr()).toBe('');
  });
});

/** Spawns the CLI with no inherited JWT_SECRET / GW_DEV_MODE / DATABASE_URL. */
function run(args: string[]) {
  return runCli(children, args);
}
