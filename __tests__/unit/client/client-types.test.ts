/**
 * The client's types are checked by the compiler (docs/client.md): `tsc --strict --noEmit` on
 * types/typed-calls.ts must pass, which means every `@ts-expect-error` line there (a wrong column in
 * select, eq, insert and update, a wrong enum value, a wrong rpc argument, ...) is an error. And the
 * same file against a Database type whose rows, inserts, updates and function arguments are `any`
 * must fail with "Unused '@ts-expect-error' directive" on those lines: the check cannot pass by
 * accident if the types degrade.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const typesDir = path.join(__dirname, 'types');
const tsc = require.resolve('typescript/bin/tsc');

/** Runs tsc on one file with the strict options users have; returns its exit code and output. */
function typeCheck(file: string): { code: number; output: string } {
  const args = [tsc, '--strict', '--noEmit', '--noUncheckedIndexedAccess', '--target', 'es2022', '--module', 'node16', '--moduleResolution', 'node16', '--skipLibCheck', '--types', 'node', '--typeRoots', path.join(root, 'node_modules/@types'), file];
  try {
    return { code: 0, output: execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }) };
  } catch (e) {
    const err = e as { status: number; stdout: string };
    return { code: err.status, output: err.stdout };
  }
}

/** 1-based line numbers of the `@ts-expect-error` lines whose comment contains `text`. */
function directiveLines(source: string, text: string): number[] {
  return source.split('\n').flatMap((line, i) => (line.includes('@ts-expect-error') && line.includes(text) ? [i + 1] : []));
}

describe('client types under tsc --strict', () => {
  it('typed-calls.ts compiles: every @ts-expect-error line is an error and every exact result type holds', () => {
    const { code, output } = typeCheck(path.join(typesDir, 'typed-calls.ts'));
    expect(output).toBe('');
    expect(code).toBe(0);
  }, 60_000);

  describe('against a Database whose row, insert, update and argument types are any', () => {
    let dir: string;
    let result: { code: number; output: string };
    let source: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-client-types-'));
      source = fs.readFileSync(path.join(typesDir, 'typed-calls.ts'), 'utf8').replace("'../../../../lib/client'", JSON.stringify(path.join(root, 'lib/client')));
      const degraded = fs
        .readFileSync(path.join(typesDir, 'test-database.ts'), 'utf8')
        .replace(/(Row|Insert|Update): \{[^}]*\};/g, '$1: any;')
        .replace(/(Row|Insert|Update): \{[\s\S]*?\n      \};/g, '$1: any;')
        .replace(/Args: \{[^}]*\}/g, 'Args: any');
      expect(degraded).not.toMatch(/Row: \{|Insert: \{|Update: \{|Args: \{/);
      fs.writeFileSync(path.join(dir, 'test-database.ts'), degraded);
      fs.writeFileSync(path.join(dir, 'typed-calls.ts'), source);
      result = typeCheck(path.join(dir, 'typed-calls.ts'));
    }, 60_000);
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it.each([
      'wrong column name in select',
      'wrong column name in eq',
      'wrong enum value',
      'wrong column name in insert',
      'wrong column name in update',
      'wrong rpc argument name',
      'wrong rpc argument type',
    ])('reports the "%s" directive as unused', (what) => {
      const lines = directiveLines(source, what);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(result.output).toContain(`typed-calls.ts(${line},`);
      for (const line of lines) expect(result.output).toMatch(new RegExp(`typed-calls\\.ts\\(${line},\\d+\\): error TS2578: Unused '@ts-expect-error' directive`));
      expect(result.code).not.toBe(0);
    });
  });
});
