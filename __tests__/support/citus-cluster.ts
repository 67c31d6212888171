/**
 * A Citus cluster for one test file: a coordinator and two workers, each a private PostgreSQL 15
 * (Debian's binaries with the Citus build of ../shared/citus/install.sh, scripts/install-citus),
 * the workers registered, and the fixture of __tests__/fixtures/citus/schema.sql loaded: tenant
 * tables distributed by tenant_id and co-located, reference tables, RLS enabled and forced, the
 * gateway's role tablegate_app NOSUPERUSER NOBYPASSRLS. Two tenants are chosen so that their
 * shards sit on different workers, and given rows.
 *
 * Every node trusts loopback connections: the coordinator connects to the workers as the role
 * that runs the statement (tablegate_app or postgres), and that is not what these tests are about.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensurePostgresOsUser, PostgresCluster, withClient } from './postgres-cluster';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres';

export const citusBinDir = '/usr/lib/postgresql/15/bin';
export const citusLibrary = '/usr/lib/postgresql/15/lib/citus.so';

/** What is missing for a Citus cluster here (empty strings: nothing), for describeIfPresent. */
export function citusMissing(): string[] {
  return [
    process.platform === 'linux' ? '' : 'Linux',
    fs.existsSync(path.join(citusBinDir, 'postgres')) ? '' : `${citusBinDir}/postgres (Debian postgresql-15)`,
    fs.existsSync(citusLibrary) ? '' : `${citusLibrary} (Citus 13.2 for PostgreSQL 15)`,
  ];
}

/** The command that installs Citus (scripts/install-citus runs ../shared/citus/install.sh). */
export const INSTALL_CITUS = 'sudo bash scripts/install-citus';

export interface CitusCluster {
  readonly coordinator: PrivatePostgres;
  readonly workers: readonly PrivatePostgres[];
  /** tablegate_app on the coordinator. */
  readonly appUrl: string;
  /** Two tenants whose shards are on different workers: tenants[i] is on workers[i]. */
  readonly tenants: readonly [string, string];
  /** Rows per tenant of each table. */
  readonly rows: { readonly users: number; readonly orders: number; readonly order_items: number };
  /** The worker (index in `workers`) that holds a tenant's shard of `orders`. */
  workerOf(tenant: string): Promise<number>;
  /** The shard ids (of users, orders, order_items) the workers were sent statements on while `fn` ran. */
  shardsTouched(fn: () => Promise<unknown>): Promise<Set<number>>;
  /** The shard ids of a tenant's rows (one per distributed table). */
  shardsOf(tenant: string): Promise<Set<number>>;
  /**
   * A hot standby of the coordinator (pg_basebackup -R, streaming), started, caught up with the
   * coordinator; it reaches the workers directly with the coordinator's metadata. Stopped by stop().
   */
  startStandby(): Promise<{ readonly port: number; readonly appUrl: string; caughtUp(): Promise<void>; log(): string }>;
  stop(): Promise<void>;
}

/** Candidate tenant ids, in order; the first two on different workers are taken. */
const CANDIDATES = [
  '11111111-1111-4111-8111-111111111111',
  '22222222-2222-4222-8222-222222222222',
  '33333333-3333-4333-8333-333333333333',
  '44444444-4444-4444-8444-444444444444',
  '55555555-5555-4555-8555-555555555555',
  '66666666-6666-4666-8666-666666666666',
];

const ROWS = { users: 3, orders: 10, order_items: 20 } as const;

const step = (what: string) => process.env.TABLEGATE_CITUS_DEBUG && process.stderr.write(`citus cluster: ${what} ${new Date().toISOString()}\n`);

export async function startCitusCluster(): Promise<CitusCluster> {
  const node = () =>
    startPrivatePostgres({
      binDir: citusBinDir,
      // The server inherits the test's HOME: without sslmode=disable libpq would read its client certificate there.
      // log_statement: the tests read on the workers which shards a request touched (shardsTouched).
      settings: { shared_preload_libraries: "'citus'", 'citus.node_conninfo': "'sslmode=disable'", log_connections: 'off', max_connections: '100', log_statement: "'all'" },
      // replication: startStandby's pg_basebackup of the coordinator.
      hba: ['host all all 127.0.0.1/32 trust', 'host replication postgres 127.0.0.1/32 trust'],
      setupSql: 'CREATE EXTENSION citus',
    });
  const started = await Promise.allSettled([node(), node(), node()]);
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const standbys: PostgresCluster[] = [];
  const stopAll = () => Promise.all([...standbys.map((s) => s.destroy('immediate')), ...servers.map((s) => s.stop())]).then(() => undefined);
  if (servers.length < 3) {
    await stopAll();
    throw (started.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason;
  }
  step('nodes started');
  const [coordinator, ...workers] = servers as [PrivatePostgres, PrivatePostgres, PrivatePostgres];
  try {
    await coordinator.query('SELECT citus_set_coordinator_host($1, $2)', ['127.0.0.1', coordinator.port]);
    step('coordinator host set');
    for (const w of workers) await coordinator.query('SELECT citus_add_node($1, $2)', ['127.0.0.1', w.port]);
    step('workers added');
    // One statement at a time: Citus propagates each DDL statement to the workers by its text.
    const fixture = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'citus', 'schema.sql'), 'utf8').replace(/^--.*$/gm, '');
    await withClient(coordinator.adminUrl, async (client) => {
      for (const statement of fixture.split(/;\s*\n/).map((s) => s.trim()).filter(Boolean)) {
        await client.query(statement).catch((err: Error) => Promise.reject(new Error(`${statement}: ${err.message}`)));
      }
    });
    step('schema loaded');
    const workerOf = async (tenant: string): Promise<number> => {
      const { rows } = await coordinator.query<{ nodeport: number }>(
        "SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid) WHERE p.shardid = get_shard_id_for_distribution_column('orders', $1::uuid)",
        [tenant],
      );
      return workers.findIndex((w) => w.port === rows[0]?.nodeport);
    };
    const placed = new Map<number, string>();
    for (const t of CANDIDATES) {
      const w = await workerOf(t);
      if (!placed.has(w)) placed.set(w, t);
    }
    const a = placed.get(0);
    const b = placed.get(1);
    if (a === undefined || b === undefined) throw new Error('no two candidate tenants on different workers');
    const tenants = [a, b] as const;
    await coordinator.query(`INSERT INTO countries VALUES ('DE', 'Germany'), ('FR', 'France')`);
    for (const [i, t] of tenants.entries()) {
      await coordinator.query('INSERT INTO tenants VALUES ($1, $2)', [t, `tenant ${'AB'[i]}`]);
      await coordinator.query(`INSERT INTO users SELECT $1, g, 'user' || g || '@' || $2 || '.test', 'User ' || g FROM generate_series(1, ${ROWS.users}) AS g`, [t, 'AB'[i]]);
      await coordinator.query(
        `INSERT INTO orders SELECT $1, g, 1 + g % ${ROWS.users}, CASE WHEN g % 2 = 0 THEN 'DE' ELSE 'FR' END, CASE WHEN g % 3 = 0 THEN 'paid' ELSE 'pending' END, g * 10 FROM generate_series(1, ${ROWS.orders}) AS g`,
        [t],
      );
      await coordinator.query(`INSERT INTO order_items SELECT $1, g, 1 + g % ${ROWS.orders}, 'product ' || g, 1 + g % 4 FROM generate_series(1, ${ROWS.order_items}) AS g`, [t]);
    }
    return {
      coordinator,
      workers,
      appUrl: `postgres://tablegate_app@127.0.0.1:${coordinator.port}/postgres?sslmode=disable`,
      tenants,
      rows: ROWS,
      workerOf,
      async shardsTouched(fn) {
        const marks = workers.map((w) => w.logMark());
        await fn();
        // The log is written by the server process: give it a moment to reach the file.
        await new Promise((r) => setTimeout(r, 300));
        const touched = new Set<number>();
        workers.forEach((w, i) => {
          for (const m of w.logSince(marks[i]!).matchAll(/\b(?:users|orders|order_items)_(\d{6,})\b/g)) touched.add(Number(m[1]));
        });
        return touched;
      },
      async shardsOf(tenant) {
        const { rows } = await coordinator.query<{ id: string }>(
          "SELECT get_shard_id_for_distribution_column(t, $1::uuid)::text AS id FROM unnest(ARRAY['users', 'orders', 'order_items']::regclass[]) AS t",
          [tenant],
        );
        return new Set(rows.map((r) => Number(r.id)));
      },
      async startStandby() {
        const standby = await PostgresCluster.baseBackup({ binDir: citusBinDir, tempPrefix: 'tablegate-citus-standby-', owner: ensurePostgresOsUser() }, { port: coordinator.port, password: '' });
        standbys.push(standby);
        standby.configure({ hot_standby: 'on', log_statement: "'all'" });
        await standby.start();
        const caughtUp = async (): Promise<void> => {
          const { rows } = await coordinator.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
          const url = `postgres://postgres@127.0.0.1:${standby.port}/postgres?sslmode=disable`;
          for (let i = 0; i < 200; i++) {
            const done = await withClient(url, (c) => c.query<{ ok: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [rows[0]!.lsn]));
            if (done.rows[0]?.ok) return;
            await new Promise((r) => setTimeout(r, 50));
          }
          throw new Error('the standby did not catch up');
        };
        await caughtUp();
        return { port: standby.port, appUrl: `postgres://tablegate_app@127.0.0.1:${standby.port}/postgres?sslmode=disable`, caughtUp, log: () => standby.log() };
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
