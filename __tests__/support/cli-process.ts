/**
 * Runs `bin/tablegate.js` as a child process for the CLI tests, with a clean environment: no
 * inherited JWT_SECRET, GW_DEV_MODE or DATABASE_URL unless `extraEnv` sets them. Each child is
 * added to `children`, which the test file kills in afterAll.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Exit code, or 'timeout' if the process is still running after `ms`. */
  exit(ms: number): Promise<number | null | 'timeout'>;
  waitForOutput(pattern: RegExp, ms: number): Promise<void>;
}

export function runCli(children: ChildProcess[], args: string[], extraEnv: Record<string, string> = {}): CliProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  for (const name of ['JWT_SECRET', 'GW_DEV_MODE', 'DATABASE_URL']) if (!(name in extraEnv)) delete env[name];
  const child = spawn(process.execPath, [path.join(root, 'bin/tablegate.js'), ...args], { cwd: root, env });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async exit(ms) {
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([exited, new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, ms, 'timeout')))]);
      clearTimeout(timer);
      return result;
    },
    async waitForOutput(pattern, ms) {
      const deadline = Date.now() + ms;
      while (!pattern.test(out)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${pattern} (exit ${child.exitCode})\nstdout:\n${out}\nstderr:\n${err}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}
