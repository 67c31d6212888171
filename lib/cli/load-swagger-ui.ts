/**
 * Finds the `swagger-ui-dist` package (~12 MB, the API explorer's assets) for `tablegate serve`
 * and `tablegate demo`. It is an optional peer of tablegate, so that library users never download
 * it (docs/getting-started.md, "The API explorer"). Out: its directory, or undefined.
 *
 * Looked for, in order: where Node resolves it from tablegate (a project that installed it;
 * tablegate's own devDependency); the per-user cache (package-cache.ts); only when `fetch` is
 * given (the demo), installed into that cache with `npm install --ignore-scripts`, so the install
 * script of its dependency @scarf/scarf (download reporting) never runs.
 */
import path from 'node:path';
import { swaggerUiDir } from '../http/docs/swagger-ui-dir';
import { findCached, installIntoCache, tablegateCacheDir, type CachedPackage } from './package-cache';

/** The versions tablegate is tested with; the range of package.json's peer and devDependency (a unit test checks). */
export const swaggerUiRange = '^5.35.0';

/** No allowScripts: the cache installs it with --ignore-scripts. */
export const swaggerUi: CachedPackage = { name: 'swagger-ui-dist', range: swaggerUiRange, description: 'the API explorer\'s Swagger UI (~12 MB, once)' };

export interface SwaggerUiOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Install into the cache when missing, printing `message` lines (the demo). */
  readonly fetch?: (message: string) => void;
  /** Node's resolution from tablegate (replaced in unit tests). */
  readonly resolve?: (request: string) => string;
}

export async function loadSwaggerUi(opts: SwaggerUiOptions = {}): Promise<string | undefined> {
  const env = opts.env ?? process.env;
  try {
    return swaggerUiDir(opts.resolve);
  } catch (err) {
    if ((err as Error).name !== 'GatewayConfigError') throw err;
  }
  const cacheDir = tablegateCacheDir(env);
  let cached = findCached(cacheDir, swaggerUi, '/package.json');
  if (cached.entry === undefined && opts.fetch !== undefined) {
    await installIntoCache(swaggerUi, cached.dir, opts.fetch, env);
    cached = findCached(cacheDir, swaggerUi, '/package.json');
    if (cached.entry === undefined) throw new Error(`npm did not install swagger-ui-dist into ${cached.dir}`);
  }
  return cached.entry === undefined ? undefined : path.dirname(cached.entry);
}
