/**
 * The client's types for sort by a related column, nested inserts, updateMany and batch
 * (docs/client.md) under `tsc --strict --noEmit`: types/typed-nested.ts must compile, which means
 * every `@ts-expect-error` line there is an error and every exact type holds.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const tsc = require.resolve('typescript/bin/tsc');

it('types/typed-nested.ts compiles under tsc --strict', () => {
  const args = [tsc, '--strict', '--noEmit', '--noUncheckedIndexedAccess', '--target', 'es2022', '--module', 'node16', '--moduleResolution', 'node16', '--skipLibCheck', '--types', 'node', '--typeRoots', path.join(root, 'node_modules/@types'), path.join(__dirname, 'types/typed-nested.ts')];
  let output = '';
  let code = 0;
  try {
    output = execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  } catch (e) {
    const err = e as { status: number; stdout: string };
    code = err.status;
    output = err.stdout;
  }
  expect(output).toBe('');
  expect(code).toBe(0);
}, 120_000);
