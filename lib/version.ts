import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package version, read once from the nearest tablegate package.json (works from lib/ and dist/). */
export const version: string = (() => {
  let dir = __dirname;
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'tablegate' && pkg.version) return pkg.version;
    } catch {
      // not here; look one level up
    }
    dir = dirname(dir);
  }
  return '0.0.0';
})();
