/**
 * The published entry points: `require('tablegate')` and `import 'tablegate'` resolve through the
 * exports map to the built dist/ (self-reference by package name), and share one implementation.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
