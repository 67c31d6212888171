import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A temporary directory for the test file, removed after it; `write` returns the file's path. */
export function useTempFiles(prefix: string): { dir(): string; write(name: string, text: string): string } {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir: () => dir,
    write(name: string, text: string): string {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      return file;
    },
  };
}
