/**
 * The published entry points: `require('tablegate')` and `import 'tablegate'` resolve through the
 * exports map to the built dist/ (self-reference by package name), and share one implementation;
 * and the quick starts of README.md in a new consumer project.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../../lib/cli/free-port';
import { createTestDatabase, FIXTURE_ROWS, signToken, TEST_JWT_SECRET, TENANT_A, type TestDatabase } from '../support/test-database';

const root = join(__dirname, '..', '..');
const run = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();

describe('package entry points', () => {
  it('ships CommonJS, ESM and type declarations', () => {
    for (const file of ['dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/esm/index.mjs', 'dist/esm/index.d.mts', 'bin/tablegate.js']) {
      expect(existsSync(join(root, file))).toBe(true);
    }
  });

  it('require() and import give the same createGateway and GatewayError', () => {
    expect(run(['-e', "const t = require('tablegate'); console.log(typeof t.createGateway, typeof t.GatewayError)"])).toBe('function function');
    expect(
      run(['--input-type=module', '-e', "import { createGateway, GatewayError } from 'tablegate'; import { createRequire } from 'node:module'; const c = createRequire(import.meta.url)('tablegate'); console.log(createGateway === c.createGateway, GatewayError === c.GatewayError)"]),
    ).toBe('true true');
  });

  it('the bin prints its version', () => {
    const { version } = require(join(root, 'package.json')) as { version: string };
    expect(run(['bin/tablegate.js', '--version'])).toContain(version);
  });
});

describe('the tablegate/client entry point', () => {
  it('ships CommonJS, real ESM and type declarations for both', () => {
    for (const file of ['dist/cjs/client/index.js', 'dist/cjs/client/index.d.ts', 'dist/esm/client/index.mjs', 'dist/esm/client/index.d.mts']) {
      expect(existsSync(join(root, file))).toBe(true);
    }
  });

  it('require() loads only files of dist/cjs/client: no express, pg or server code', () => {
    const loaded = JSON.parse(
      run(['-e', "const before = new Set(Object.keys(require.cache)); const c = require('tablegate/client'); if (typeof c.createClient !== 'function') throw new Error('no createClient'); console.log(JSON.stringify(Object.keys(require.cache).filter((f) => !before.has(f))))"]),
    ) as string[];
    expect(loaded.length).toBeGreaterThan(3);
    expect(loaded.filter((f) => !f.startsWith(join(root, 'dist', 'cjs', 'client') + '/'))).toEqual([]);
  });

  it('the ESM build imports only its own .mjs files, and runs in Node as an ES module', () => {
    const dir = join(root, 'dist', 'esm', 'client');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.mjs'))) {
      const specifiers = [...readFileSync(join(dir, file), 'utf8').matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
      for (const s of specifiers) {
        expect({ file, s, ok: /^\.\/[a-z-]+\.mjs$/.test(s) && existsSync(join(dir, s)) }).toEqual({ file, s, ok: true });
      }
    }
    // A query built by the ESM build; an error of the CommonJS build is recognised by the ESM one.
    const out = run([
      '--input-type=module',
      '-e',
      "import { createClient, isTablegateClientError } from 'tablegate/client'; import { createRequire } from 'node:module'; const cjs = createRequire(import.meta.url)('tablegate/client'); const q = createClient('http://x.test/api', { fetch: async () => { throw new Error('x'); } }).from('orders').select(['id']).eq('status', 'paid'); console.log(q.toPath(), isTablegateClientError(new cjs.TablegateClientError({ code: 'NOT_FOUND', message: 'm', status: 404 })), createClient === cjs.createClient);",
    ]);
    expect(out).toBe('/orders?select=id&status.eq=paid true false');
  });

  it('type-checks for TypeScript consumers through the exports map (import and require), wrong columns included', () => {
    const dir = join(root, 'dist', 'client-consumer-check');
    mkdirSync(dir, { recursive: true });
    try {
      const db = "interface Db { tables: { orders: { Row: { id: number; status: 'open' | 'paid' }; Insert: { status?: 'open' | 'paid' }; Update: { status?: 'open' | 'paid' }; Relationships: {} } }; enums: {}; functions: {} }";
      const body = "const c = createClient<Db>('http://x.test/api', { token: 't' });\nexport const q = c.from('orders').select(['id']).eq('status', 'paid');\n// @ts-expect-error wrong column\nc.from('orders').select(['idd']);\n";
      writeFileSync(join(dir, 'esm.mts'), `import { createClient } from 'tablegate/client';\n${db}\n${body}`);
      writeFileSync(join(dir, 'cjs.cts'), `import { createClient } from 'tablegate/client';\n${db}\n${body}`);
      const tsc = require.resolve('typescript/bin/tsc');
      expect(run([tsc, '--strict', '--noEmit', '--module', 'node16', '--moduleResolution', 'node16', '--types', 'node', join(dir, 'esm.mts'), join(dir, 'cjs.cts')])).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/**
 * A new consumer project, as a user makes one: the package as `npm pack` ships it, unpacked into
 * node_modules/tablegate of a temp directory, beside its dependencies and express. The quick
 * starts are read from README.md and docs/getting-started.md (so the docs cannot rot), compiled
 * with `tsc --strict` WITHOUT @types/pg (the public declarations must not need it, db/pg-pool.ts),
 * and run against the test database, each answering one request as tenant A.
 */
interface QuickStart {
  readonly file: string;
  readonly code: string;
}

/** Every fenced block whose first line is `// server.<ext>`, deduplicated by content. */
function quickStarts(): QuickStart[] {
  const found = new Map<string, QuickStart>();
  for (const doc of ['README.md', 'docs/getting-started.md']) {
    const text = readFileSync(join(root, doc), 'utf8');
    for (const m of text.matchAll(/```(?:js|ts)\n(\/\/ (server\.(?:mjs|cjs|ts))\b[^\n]*\n[\s\S]*?)```/g)) {
      const file = m[2]!;
      const code = m[1]!;
      const key = `${file}\n${code}`;
      if (!found.has(key)) found.set(key, { file, code });
    }
  }
  return [...found.values()];
}

/** `npm pack` of this checkout (dist/ as built), unpacked to `<dir>/node_modules/tablegate`. */
function installPacked(dir: string, packDir: string): void {
  const tgz = readdirSync(packDir).find((f) => f.endsWith('.tgz'))!;
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  const into = mkdtempSync(join(packDir, 'x-'));
  execFileSync('tar', ['xzf', join(packDir, tgz), '-C', into]);
  renameSync(join(into, 'package'), join(dir, 'node_modules', 'tablegate'));
  // Its dependencies as npm would install them: linked from this checkout. Node and tsc resolve a
  // link by its real path, so their own dependencies are found there; tablegate's declarations
  // resolve `pg` from the consumer, whose node_modules has no @types/pg.
  const { dependencies } = JSON.parse(readFileSync(join(dir, 'node_modules', 'tablegate', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  link(dir, Object.keys(dependencies));
}

function link(dir: string, names: readonly string[]): void {
  for (const name of names) {
    const to = join(dir, 'node_modules', name);
    if (existsSync(to)) continue;
    mkdirSync(dirname(to), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), to, 'dir');
  }
}

/** Writes the quick starts; the TypeScript one also as server.mts (the same code compiled as ESM). */
function writeConsumer(dir: string, starts: readonly QuickStart[]): string[] {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'commonjs' }));
  const ts: string[] = [];
  for (const { file, code } of starts) {
    writeFileSync(join(dir, file), code);
    if (file === 'server.ts') {
      writeFileSync(join(dir, 'server.mts'), code);
      ts.push('server.ts', 'server.mts');
    }
  }
  // strict, and no skipLibCheck: every declaration file of tablegate that the program reaches is checked.
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022', outDir: 'out' }, files: ts }));
  return ts;
}

function tsc(dir: string): string {
  try {
    execFileSync(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir, encoding: 'utf8' });
    return '';
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  }
}

/** Starts one quick start, waits for its "listening on" line, does GET /api/orders as tenant A. */
async function runQuickStart(dir: string, file: string, db: TestDatabase): Promise<void> {
  const port = await freePort();
  const child = spawn(process.execPath, [file], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: db.appUrl, JWT_SECRET: TEST_JWT_SECRET, PORT: String(port) },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const deadline = Date.now() + 20000;
    while (!out.includes(`listening on http://127.0.0.1:${port}/api`)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${file} did not start (exit ${child.exitCode}):\n${out}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const res = await fetch(`http://127.0.0.1:${port}/api/orders?limit=1000`, { headers: { Authorization: `Bearer ${signToken({ tenant_id: TENANT_A, sub: 'alice' })}` } });
    const body = (await res.json()) as { data: { tenant_id: string }[]; count: number };
    expect({ file, status: res.status, count: body.count, others: body.data.filter((r) => r.tenant_id !== TENANT_A).length }).toEqual({ file, status: 200, count: FIXTURE_ROWS.orders.A, others: 0 });
  } finally {
    child.kill('SIGKILL');
  }
}

describe('a new consumer project (npm pack)', () => {
  const starts = quickStarts();
  let db: TestDatabase;
  let work: string;
  let packDir: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tablegate-consumer-'));
    packDir = join(work, 'pack');
    mkdirSync(packDir);
    // --ignore-scripts: dist/ is built already (the integration setup needs it); prepack would rebuild it.
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir], { cwd: root, stdio: 'ignore' });
    db = await createTestDatabase();
  }, 60000);

  afterAll(async () => {
    await db?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('ships swagger-ui-dist (the API explorer, ~12 MB, with @scarf/scarf and its install script) only as an optional peer', () => {
    const dir = join(work, 'manifest');
    mkdirSync(dir);
    installPacked(dir, packDir);
    const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', 'tablegate', 'package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
    expect(Object.keys(manifest['dependencies'] ?? {})).not.toContain('swagger-ui-dist');
    expect(Object.keys(manifest['optionalDependencies'] ?? {})).not.toContain('swagger-ui-dist');
    expect(manifest['peerDependencies']?.['swagger-ui-dist']).toBeDefined();
    expect(manifest['peerDependenciesMeta']?.['swagger-ui-dist']).toEqual({ optional: true });
  });

  it('without swagger-ui-dist, reading gateway.docs throws GatewayConfigError naming the install command; the gateway itself works', () => {
    const dir = join(work, 'no-swagger-ui');
    mkdirSync(dir);
    installPacked(dir, packDir);
    link(dir, ['express']);
    writeFileSync(join(dir, 'docs.cjs'), `
const { createGateway } = require('tablegate');
const gateway = createGateway({ databaseUrl: ${JSON.stringify(db.appUrl)}, jwtSecret: ${JSON.stringify(TEST_JWT_SECRET)} });
let outcome = 'no error';
try { gateway.docs; } catch (err) { outcome = err.name + ': ' + err.message; }
gateway.ready.then(() => gateway.close()).then(() => console.log(outcome + ' | keys: ' + Object.keys(gateway).includes('docs')));
`);
    const out = execFileSync(process.execPath, ['docs.cjs'], { cwd: dir, encoding: 'utf8' }).trim();
    expect(out).toMatch(/^GatewayConfigError: .*npm install swagger-ui-dist.* \| keys: false$/);
  }, 30000);

  it('installs with npm without an install-time script: no install-scripts warning, no lifecycle script a consumer runs', () => {
    const tgz = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz'))!);
    const manifest = JSON.parse(execFileSync('tar', ['xzfO', tgz, 'package/package.json'], { encoding: 'utf8' })) as { scripts?: Record<string, string> };
    // What npm runs in a consumer's install: https://docs.npmjs.com/cli/using-npm/scripts#npm-install
    const consumerRun = ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare'].filter((k) => manifest.scripts?.[k] !== undefined);
    expect(consumerRun).toEqual([]);
    const consumer = mkdtempSync(join(work, 'npm-install-'));
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    let output: string;
    try {
      // 2>&1: npm prints its warnings on stderr.
      output = execFileSync('sh', ['-c', `npm install --no-audit --no-fund "${tgz}" 2>&1`], { cwd: consumer, encoding: 'utf8' });
    } catch (err) {
      const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
      console.log(`tablegate: skipped: installing the packed tarball with npm: npm install failed (${message})`);
      return;
    }
    expect(existsSync(join(consumer, 'node_modules', 'tablegate', 'dist', 'cjs', 'index.js'))).toBe(true);
    expect(output).not.toMatch(/install scripts|allowScripts|tablegate@[^ ]* \(prepare/i);
  }, 180000);

  it('README.md has the quick start in ESM, CommonJS and TypeScript', () => {
    expect([...new Set(starts.map((s) => s.file))].sort()).toEqual(['server.cjs', 'server.mjs', 'server.ts']);
  });

  it('with express 5: the TypeScript quick start compiles with strict and no @types/pg, and every quick start serves a request', async () => {
    const dir = join(work, 'express5');
    mkdirSync(dir);
    installPacked(dir, packDir);
    link(dir, ['express', 'typescript', '@types/express', '@types/node']);
    expect(existsSync(join(dir, 'node_modules', '@types', 'pg'))).toBe(false);
    const ts = writeConsumer(dir, starts);
    expect(tsc(dir)).toBe('');
    const compiled = ts.map((f) => join('out', f.replace(/\.ts$/, '.js').replace(/\.mts$/, '.mjs')));
    await Promise.all([...starts.filter((s) => !s.file.endsWith('.ts')).map((s) => s.file), ...compiled].map((f) => runQuickStart(dir, f, db)));
  }, 90000);

  // Express 4 is a peer range too; it is installed from the npm registry (reported skipped when that fails).
  const express4 = (() => {
    try {
      const dir = mkdtempSync(join(tmpdir(), 'tablegate-express4-'));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer4', private: true }));
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', 'express@^4.21.0', '@types/express@^4'], { cwd: dir, stdio: 'ignore', timeout: 120000 });
      return { dir };
    } catch (err) {
      console.log(`tablegate: skipped: the quick start with express 4: npm install express@4 failed (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`);
      return undefined;
    }
  })();
  afterAll(() => {
    if (express4) rmSync(express4.dir, { recursive: true, force: true });
  });

  (express4 ? it : it.skip)('with express 4: the TypeScript quick start compiles and the ESM and compiled quick starts serve a request', async () => {
    const dir = express4!.dir;
    expect(JSON.parse(readFileSync(join(dir, 'node_modules', 'express', 'package.json'), 'utf8')).version).toMatch(/^4\./);
    installPacked(dir, packDir);
    link(dir, ['typescript', '@types/node']);
    expect(existsSync(join(dir, 'node_modules', '@types', 'pg'))).toBe(false);
    const ts = writeConsumer(dir, starts);
    expect(tsc(dir)).toBe('');
    await Promise.all(['server.mjs', 'server.cjs', join('out', ts[0]!.replace(/\.ts$/, '.js'))].map((f) => runQuickStart(dir, f, db)));
  }, 90000);
});
