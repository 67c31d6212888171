/**
 * `tablegate demo` end to end, as a user runs it: spawn the real CLI (bin/tablegate.js -> dist,
 * so `npm run build` must have run), wait for the printed curl line, use the token and URL from
 * it, then Ctrl-C. Guards the promise of the README: a working, tenant-isolated API within
 * seconds and with nothing installed, and a clean stop that leaves no database behind.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { freePort } from '../../lib/cli/free-port';

const root = path.resolve(__dirname, '../..');
const ACME = '11111111-1111-4111-8111-111111111111';
const GLOBEX = '22222222-2222-4222-8222-222222222222';
const curlLine = /^curl -H "Authorization: Bearer ([^"]+)" "(http:\/\/[^"]+)"$/gm;

jest.setTimeout(120_000);

let child: ChildProcess | undefined;
afterAll(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

test('demo serves tenant-isolated data within seconds and stops cleanly on SIGINT', async () => {
  expect(fs.existsSync(path.join(root, 'dist/cjs/cli/main.js'))).toBe(true); // run `npm run build` first
  const port = await freePort();
  const env = { ...process.env };
  delete env['GW_DEV_MODE'];
  delete env['JWT_SECRET'];
  const started = Date.now();
  const proc = spawn(process.execPath, [path.join(root, 'bin/tablegate.js'), 'demo', '--port', String(port)], { cwd: root, env });
  child = proc;
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );

  const lines = await waitFor(() => {
    const found = [...stdout.matchAll(curlLine)];
    return found.length >= 2 ? found : undefined;
  }, 60_000, () => `no curl lines after 60 s\nstdout:\n${stdout}\nstderr:\n${stderr}`);

  // The demo's own PostgreSQL: a child process of the CLI, running on a temporary data directory.
  const dataDir = postgresDataDirOf(proc.pid!);
  expect(dataDir).toMatch(/tablegate-demo-/);
  expect(fs.existsSync(dataDir!)).toBe(true);

  const [acme, globex] = lines.map((m) => ({ token: m[1]!, url: m[2]! }));
  expect(acme!.url).toBe(`http://127.0.0.1:${port}/api/orders?limit=5`);
  expect((jwt.decode(acme!.token) as { tenant_id: string }).tenant_id).toBe(ACME);
  expect((jwt.decode(globex!.token) as { tenant_id: string }).tenant_id).toBe(GLOBEX);

  const acmeRes = await fetch(acme!.url, { headers: { authorization: `Bearer ${acme!.token}` } });
  const firstAnswerS = (Date.now() - started) / 1000;
  expect(acmeRes.status).toBe(200);
  const acmeBody = (await acmeRes.json()) as { data: { id: number; tenant_id: string }[]; count: number };
  console.log(`tablegate demo: ${firstAnswerS.toFixed(1)} s from spawn to the first successful answer`);
  expect(acmeBody.count).toBe(5);
  expect(acmeBody.data.map((r) => r.tenant_id)).toEqual(Array(5).fill(ACME));

  const globexRes = await fetch(globex!.url, { headers: { authorization: `Bearer ${globex!.token}` } });
  const globexBody = (await globexRes.json()) as { data: { id: number; tenant_id: string }[] };
  expect(globexRes.status).toBe(200);
  expect(globexBody.data.length).toBe(5);
  expect(globexBody.data.every((r) => r.tenant_id === GLOBEX)).toBe(true);

  // The demo's function, as documented in docs/getting-started.md: each tenant's own totals.
  const rpcUrl = acme!.url.replace(/\/orders\?limit=5$/, '/rpc/sales_by_status');
  for (const t of [acme!, globex!]) {
    const headers = { authorization: `Bearer ${t.token}` };
    const res = await fetch(rpcUrl, { method: 'POST', headers });
    expect(res.status).toBe(200);
    const rows = ((await res.json()) as { data: { status: string; orders: number }[] }).data;
    const counted = (await (await fetch(t.url.replace(/limit=5$/, 'limit=1&count=exact'), { headers })).json()) as { total: number };
    expect(rows.reduce((sum, r) => sum + r.orders, 0)).toBe(counted.total);
  }
  // The lines printed for the OpenAPI document and an export work as printed, for the caller's tenant only.
  expect(stdout).toContain(`${acme!.url.replace(/\/orders\?limit=5$/, '')}/openapi.json`);
  // The API explorer at /docs (docs/getting-started.md).
  const explorer = await fetch(acme!.url.replace(/\/api\/orders\?limit=5$/, '/docs/'));
  expect(explorer.status).toBe(200);
  expect(await explorer.text()).toContain('swagger-ui-bundle.js');
  const doc = (await (await fetch(acme!.url.replace(/\/orders\?limit=5$/, '/openapi.json'), { headers: { authorization: `Bearer ${acme!.token}` } })).json()) as { openapi: string; paths: Record<string, unknown> };
  expect(doc.openapi).toBe('3.1.0');
  expect(Object.keys(doc.paths)).toContain('/orders');
  expect(stdout).toContain('-H "Accept: application/x-ndjson"');
  const exported = await fetch(acme!.url.replace(/\?limit=5$/, ''), { headers: { authorization: `Bearer ${acme!.token}`, accept: 'application/x-ndjson' } });
  expect(exported.status).toBe(200);
  const exportedRows = (await exported.text()).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { tenant_id: string });
  const acmeTotal = ((await (await fetch(acme!.url.replace(/limit=5$/, 'limit=1&count=exact'), { headers: { authorization: `Bearer ${acme!.token}` } })).json()) as { total: number }).total;
  expect(exportedRows).toHaveLength(acmeTotal);
  expect(exportedRows.every((r) => r.tenant_id === ACME)).toBe(true);

  const acmeIds = new Set(acmeBody.data.map((r) => r.id));
  expect(globexBody.data.filter((r) => acmeIds.has(r.id))).toEqual([]);

  // A forged token (signed with another secret) is refused: the demo is not an open database.
  const forged = jwt.sign({ tenant_id: ACME }, 'not-the-demo-secret', { algorithm: 'HS256' });
  expect((await fetch(acme!.url, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);

  const stopAt = Date.now();
  proc.kill('SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 10_000, 'timeout')))]);
  clearTimeout(timer);
  expect(result).toEqual({ code: 0, signal: null });
  console.log(`tablegate demo: stopped ${((Date.now() - stopAt) / 1000).toFixed(1)} s after SIGINT`);
  expect(stderr).not.toMatch(/error|Error/);
  // PostgreSQL has stopped, its data directory is deleted, and the API port is closed.
  expect(processesUsing(dataDir!)).toEqual([]);
  expect(fs.existsSync(dataDir!)).toBe(false);
  await expect(fetch(acme!.url)).rejects.toThrow();
});

/** `-D <dir>` of the postgres server whose parent is `pid`. */
function postgresDataDirOf(pid: number): string | undefined {
  for (const line of execFileSync('ps', ['-eo', 'ppid=,args='], { encoding: 'utf8' }).split('\n')) {
    const match = /^\s*(\d+)\s+\S*postgres\s.*-D\s+(\S+)/.exec(line);
    if (match && Number(match[1]) === pid) return match[2];
  }
  return undefined;
}

function processesUsing(dataDir: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(`-D ${dataDir} `));
}

async function waitFor<T>(probe: () => T | undefined, ms: number, why: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(why());
    await sleep(50);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
