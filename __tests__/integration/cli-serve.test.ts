/**
 * `tablegate serve` as a process (bin/tablegate.js -> dist, so `npm run build` must have run):
 * it serves a config file against a real database, and it refuses to start when dev mode would
 * be unsafe (contract §5: loopback bind and a JWT secret are required) or the database is not
 * usable, with a message that names the problem and never prints a secret.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../lib/cli/free-port';
import { createTestDatabase, pgBouncerMode, signToken, TENANT_A, TENANT_B } from '../support/test-database';
import { runCli } from '../support/cli-process';
import { bearer, connect, ok } from '../support/mcp-client';

const root = path.resolve(__dirname, '../..');
const jwtSecret = randomBytes(32).toString('hex');

jest.setTimeout(60_000);

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  expect(fs.existsSync(path.join(root, 'dist/cjs/cli/main.js'))).toBe(true); // run `npm run build` first
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-serve-test-'));
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
  await db?.drop();
});

test('runs examples/standalone/gw.toml as documented (DATABASE_URL and JWT_SECRET from the environment)', async () => {
  const port = await freePort();
  const cli = run(['serve', '--config', 'examples/standalone/gw.toml', '--port', String(port)], { DATABASE_URL: db.appUrl, JWT_SECRET: jwtSecret });
  await cli.waitForOutput(/tablegate listening on (\S+)/, 30_000);
  const res = await fetch(`http://127.0.0.1:${port}/api/orders?select=id,tenant_id&limit=5`, { headers: { authorization: `Bearer ${signToken({ tenant_id: TENANT_A }, jwtSecret)}` } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: { tenant_id: string }[]; count: number };
  expect(body.count).toBe(5);
  expect(body.data.every((r) => r.tenant_id === TENANT_A)).toBe(true);
  cli.child.kill('SIGTERM');
  expect(await cli.exit(10_000)).toBe(0);
});

test('serves GET /api/orders from the config file, then exits 0 on SIGTERM', async () => {
  const port = await freePort();
  // bind's port is replaced by --port; the host stays.
  const config = writeConfig('ok.toml', [`database_url = ${JSON.stringify(db.appUrl)}`, 'bind = "127.0.0.1:1"', `jwt_secret = "${jwtSecret}"`]);
  const cli = run(['serve', '--config', config, '--port', String(port)]);
  await cli.waitForOutput(/tablegate listening on (\S+)/, 30_000);
  expect(cli.stdout().trim()).toBe(`tablegate listening on http://127.0.0.1:${port}/api`);

  const res = await fetch(`http://127.0.0.1:${port}/api/orders`, { headers: { authorization: `Bearer ${signToken({ tenant_id: TENANT_A, sub: 'u1' }, jwtSecret)}` } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: { tenant_id: string }[]; count: number };
  expect(body.count).toBeGreaterThan(0);
  expect(body.data.filter((r) => r.tenant_id !== TENANT_A)).toEqual([]);
  // Signed with another secret: refused. No token: refused (require_auth defaults to true).
  const forged = await fetch(`http://127.0.0.1:${port}/api/orders`, { headers: { authorization: `Bearer ${signToken({ tenant_id: TENANT_A }, 'another-secret')}` } });
  expect(forged.status).toBe(401);
  expect((await fetch(`http://127.0.0.1:${port}/api/orders`)).status).toBe(401);
  // gateway.admin is mounted at the root.
  expect((await fetch(`http://127.0.0.1:${port}/health/internal`)).status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
  // The API explorer at /docs (docs/getting-started.md, "The API explorer"), with its policy.
  const docs = await fetch(`http://127.0.0.1:${port}/docs/`);
  expect(docs.status).toBe(200);
  expect(docs.headers.get('content-security-policy')).toContain("script-src 'self'");
  expect(await docs.text()).toContain('data-api-url="/api"');

  cli.child.kill('SIGTERM');
  expect(await cli.exit(10_000)).toBe(0);
  // Through PgBouncer without max_prepared_statements the gateway finds at `ready` that prepared
  // statements are lost and says so once (docs/scaling-out.md).
  if (pgBouncerMode === 'transaction') expect(cli.stderr()).toMatch(/^tablegate: WARNING: named prepared statements do not last [^\n]*prepared_statements = false[^\n]*\n$/);
  else expect(cli.stderr()).toBe('');
});

test('mounts the agents\' door at /mcp with mcp = { enabled = true }: a real MCP client lists and calls the tools', async () => {
  const port = await freePort();
  const config = writeConfig('mcp.toml', [`database_url = ${JSON.stringify(db.appUrl)}`, `jwt_secret = "${jwtSecret}"`, 'mcp = { enabled = true, max_rows = 5 }']);
  const cli = run(['serve', '--config', config, '--port', String(port)]);
  await cli.waitForOutput(/tablegate listening on (\S+)/, 30_000);
  const token = signToken({ tenant_id: TENANT_B, user_id: 'bob', agent_id: 'cli-agent' }, jwtSecret);
  const client = await connect(`http://127.0.0.1:${port}/mcp`, bearer(token));
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['list_tables', 'describe_table', 'query_rows', 'get_row', 'aggregate', 'call_function']);
    const page = await ok(client, 'query_rows', { table: 'orders', select: ['id', 'tenant_id'] });
    expect(page['rows']).toHaveLength(5);
    expect((page['rows'] as { tenant_id: string }[]).every((r) => r.tenant_id === TENANT_B)).toBe(true);
  } finally {
    await client.close();
  }
  // No token: 401 with the resource metadata's address.
  const refused = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(refused.status).toBe(401);
  expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="http://127.0.0.1:${port}/mcp/.well-known/oauth-protected-resource"`);
  cli.child.kill('SIGTERM');
  expect(await cli.exit(10_000)).toBe(0);
});

test('does not mount /mcp without mcp.enabled', async () => {
  const port = await freePort();
  const config = writeConfig('no-mcp.toml', [`database_url = ${JSON.stringify(db.appUrl)}`, `jwt_secret = "${jwtSecret}"`]);
  const cli = run(['serve', '--config', config, '--port', String(port)]);
  await cli.waitForOutput(/tablegate listening on (\S+)/, 30_000);
  const token = signToken({ tenant_id: TENANT_A, user_id: 'alice' }, jwtSecret);
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(404);
  cli.child.kill('SIGTERM');
  expect(await cli.exit(10_000)).toBe(0);
});

test('SIGHUP reloads the schema: a table created after the start is served, and the outcome is printed', async () => {
  const port = await freePort();
  // No LISTEN and no polling: only the signal can make the new table known.
  const config = writeConfig('hup.toml', [`database_url = ${JSON.stringify(db.appUrl)}`, `jwt_secret = "${jwtSecret}"`, 'reload_listen = false', 'schema_poll_s = 0']);
  const cli = run(['serve', '--config', config, '--port', String(port)]);
  await cli.waitForOutput(/tablegate listening on (\S+)/, 30_000);
  await db.admin.query(`CREATE TABLE after_hup (id int PRIMARY KEY, tenant_id uuid NOT NULL);
    ALTER TABLE after_hup ENABLE ROW LEVEL SECURITY; ALTER TABLE after_hup FORCE ROW LEVEL SECURITY;
    CREATE POLICY t ON after_hup USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
    GRANT SELECT ON after_hup TO tablegate_app;
    INSERT INTO after_hup VALUES (1, '${TENANT_A}'), (2, '${TENANT_B}');`);
  const get = () => fetch(`http://127.0.0.1:${port}/api/after_hup`, { headers: { authorization: `Bearer ${signToken({ tenant_id: TENANT_A }, jwtSecret)}` } });
  expect((await get()).status).toBe(404);

  cli.child.kill('SIGHUP');
  await cli.waitForOutput(/tablegate: schema reloaded on SIGHUP in \d+ ms\n/, 10_000);
  const res = await get();
  expect(res.status).toBe(200);
  expect(((await res.json()) as { data: unknown[] }).data).toEqual([{ id: 1, tenant_id: TENANT_A }]);

  cli.child.kill('SIGTERM');
  expect(await cli.exit(10_000)).toBe(0);
});

test('dev mode with a non-loopback bind refuses to start and says why', async () => {
  const config = writeConfig('dev-open.toml', [`database_url = ${JSON.stringify(db.appUrl)}`, `bind = "0.0.0.0:${await freePort()}"`]);
  const cli = run(['serve', '--config', config], { GW_DEV_MODE: 'true', JWT_SECRET: jwtSecret });
  expect(await cli.exit(20_000)).toBe(1);
  expect(cli.stderr()).toMatch(/loopback/);
  expect(cli.stdout()).not.toMatch(/listening/);
  expectNoSecrets(cli.stderr() + cli.stdout());
});

test('dev mode without a JWT secret refuses to start and says why', async () => {
  const config = writeConfig('dev-nosecret.toml', [`database_url = ${JSON.stringify(db.appUrl)}`, `bind = "127.0.0.1:${await freePort()}"`]);
  const cli = run(['serve', '--config', config], { GW_DEV_MODE: 'true' });
  expect(await cli.exit(20_000)).toBe(1);
  expect(cli.stderr()).toMatch(/JWT_SECRET/);
  expect(cli.stdout()).not.toMatch(/listening/);
});

test('a database that refuses the login: exit 1, the password is not printed', async () => {
  const url = new URL(db.appUrl);
  url.password = `wrong-${randomBytes(8).toString('hex')}`;
  const config = writeConfig('bad-login.toml', [`database_url = ${JSON.stringify(url.toString())}`, `bind = "127.0.0.1:${await freePort()}"`, `jwt_secret = "${jwtSecret}"`]);
  const cli = run(['serve', '--config', config]);
  expect(await cli.exit(30_000)).toBe(1);
  expect(cli.stderr()).toMatch(/^tablegate: \S/);
  expect(cli.stderr()).not.toContain(url.password);
  expect(cli.stdout()).not.toMatch(/listening/);
});

test('an unreachable database: exit 1 with one line naming the database and host:port, no stack, no password', async () => {
  const dbPort = await freePort(); // nothing listens there
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const config = writeConfig('unreachable.toml', [`database_url = "postgres://app:${password}@127.0.0.1:${dbPort}/app"`, `bind = "127.0.0.1:${await freePort()}"`, `jwt_secret = "${jwtSecret}"`]);
  const cli = run(['serve', '--config', config]);
  expect(await cli.exit(30_000)).toBe(1);
  expect(cli.stderr()).toBe(`tablegate: cannot reach the database at 127.0.0.1:${dbPort}: connection refused (ECONNREFUSED)\n`);
  expect(cli.stdout()).toBe('');
});

test('require_auth without any key to verify tokens: exit 1 naming JWT_SECRET', async () => {
  const config = writeConfig('no-key.toml', [`database_url = ${JSON.stringify(db.appUrl)}`, `bind = "127.0.0.1:${await freePort()}"`]);
  const cli = run(['serve', '--config', config]);
  expect(await cli.exit(20_000)).toBe(1);
  expect(cli.stderr()).toMatch(/^tablegate: require_auth is on \(the default\) but no key to verify tokens is configured.*JWT_SECRET/);
  expect(cli.stdout()).not.toMatch(/listening/);
  expectNoSecrets(cli.stderr());
});

test('usage errors exit 2 with the usage text', async () => {
  const cli = run(['serve']);
  expect(await cli.exit(10_000)).toBe(2);
  expect(cli.stderr()).toMatch(/serve needs --config[\s\S]*Usage: tablegate/);
  const unknown = run(['serv']);
  expect(await unknown.exit(10_000)).toBe(2);
  expect(unknown.stderr()).toMatch(/unknown command "serv"/);
});

function expectNoSecrets(output: string): void {
  expect(output).not.toContain(new URL(db.appUrl).password);
  expect(output).not.toContain(jwtSecret);
}

function writeConfig(name: string, gatewayLines: string[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, ['[gateway]', ...gatewayLines, ''].join('\n'));
  return file;
}

/** Spawns the CLI with a clean environment (no inherited JWT_SECRET / GW_DEV_MODE). */
function run(args: string[], extraEnv: Record<string, string> = {}) {
  return runCli(children, args, extraEnv);
}
