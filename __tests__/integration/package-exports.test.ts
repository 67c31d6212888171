/**
 * The published entry points: `require('tablegate')` and `import 'tablegate'` resolve through the
 * exports map to the built dist/ (self-reference by package name), and share one implementation.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
