/**
 * Read replicas (read_replica_urls) against a real streaming-replication cluster: a private
 * primary and two hot standbys made with `pg_basebackup -R` (support/replication.ts), never the
 * shared test server. Which server answered is read from the server itself: the fixtures of
 * __tests__/fixtures/replication/ return pg_is_in_recovery() and the server's port.
 *
 * - list reads and STABLE functions go to a replica; writes and VOLATILE functions to the
 *   primary, and a write shows up on the replica once replayed;
 * - with two replicas both get reads;
 * - a replica stopped (fast and immediate) while 16 clients read: no 500, no 503, the reads fall
 *   back to the primary, /health/internal shows it `out`; started again, it comes back;
 * - read-your-writes pins a writer's reads to the primary for read_your_writes_ms, and
 *   `x-gw-read-primary: true` does it per request;
 * - lag and state in /health/internal and /metrics; a replica whose replay is paused falls behind
 *   read_replica_max_lag_ms and is out until it catches up; a read of a table the replica has not
 *   replayed yet is answered by the primary; a replica that is down at start or
 *   whose role bypasses row-level security.
 */
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import express from 'express';
import pg from 'pg';
import request from 'supertest';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { freePort } from '../../lib/cli/free-port';
import { findPostgresBin, startReplicationCluster, waitFor, type ReplicationCluster } from '../support/replication';
import { signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { describeIfPresent, SETUP_SYSTEM } from '../support/skips';

const found = findPostgresBin();
const describeCluster = describeIfPresent('read-replicas.test.ts (primary and standbys)', ['bin' in found ? '' : found.missing], SETUP_SYSTEM);

const alice = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
const bob = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });

interface ServerView {
  readonly in_recovery: boolean;
  readonly port: number;
}

describeCluster('read replicas on a real streaming replica', () => {
  let cluster: ReplicationCluster;
  const gateways: Gateway[] = [];

  beforeAll(async () => {
    cluster = await startReplicationCluster(2);
  }, 120000);

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await cluster?.stop();
  }, 60000);

  /** A gateway on the cluster's primary with the given replicas (by index), at /api and /admin. */
  async function appWith(replicas: readonly number[], options: Partial<GatewayOptions> = {}): Promise<{ app: express.Express; gateway: Gateway }> {
    const gateway = createGateway({
      databaseUrl: cluster.primary.appUrl,
      jwtSecret: TEST_JWT_SECRET,
      schemas: ['replication'],
      readReplicaUrls: replicas.map((i) => cluster.replicas[i]!.appUrl),
      readReplicaRetryMs: 300,
      readReplicaCheckIntervalMs: 100,
      ...options,
    } as GatewayOptions);
    gateways.push(gateway);
    await gateway.ready;
    return { gateway, app: express().use('/api', gateway).use('/admin', gateway.admin) };
  }

  async function serverOf(app: express.Express, how: 'list' | 'stable' | 'volatile', token = alice, headers: Record<string, string> = {}): Promise<ServerView> {
    const req =
      how === 'list'
        ? request(app).get('/api/server_view')
        : request(app).post(`/api/rpc/server_${how}`).send({});
    for (const [k, v] of Object.entries(headers)) req.set(k, v);
    const res = await req.set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    return how === 'list' ? (res.body.data[0] as ServerView) : (res.body.data as ServerView);
  }

  async function health(app: express.Express): Promise<{ replicas: { host: string; port: number; state: string; reason: string | null; lag_bytes: number | null; lag_ms: number | null; in_use: number; retry_in_s: number | null; reads: number; fallbacks: number }[] }> {
    const res = await request(app).get('/admin/health/internal');
    expect(res.status).toBe(200);
    return res.body;
  }

  it('sends list reads and STABLE functions to the replica, writes and VOLATILE functions to the primary', async () => {
    const { app } = await appWith([0]);
    const replicaPort = cluster.replicas[0]!.port;
    expect(await serverOf(app, 'list')).toEqual({ in_recovery: true, port: replicaPort });
    expect(await serverOf(app, 'stable')).toEqual({ in_recovery: true, port: replicaPort });
    expect(await serverOf(app, 'volatile')).toEqual({ in_recovery: false, port: cluster.primary.port });

    // A write goes to the primary (a standby would refuse it) and is read back from the replica
    // once replayed, still through row-level security: bob (tenant B) never sees alice's note.
    const body = `note-${Date.now()}`;
    const created = await request(app).post('/api/notes').set('Authorization', `Bearer ${alice}`).send({ body });
    expect(created.status).toBe(201);
    await waitFor(async () => {
      const res = await request(app).get('/api/notes').query({ body: `eq.${body}` }).set('Authorization', `Bearer ${alice}`);
      return res.status === 200 && res.body.data.length === 1;
    }, 10000, 'the note on the replica');
    const asBob = await request(app).get('/api/notes').query({ body: `eq.${body}` }).set('Authorization', `Bearer ${bob}`);
    expect(asBob.status).toBe(200);
    expect(asBob.body.data).toEqual([]);

    const status = await health(app);
    expect(status.replicas).toHaveLength(1);
    expect(status.replicas[0]).toMatchObject({ host: '127.0.0.1', port: replicaPort, state: 'healthy', reason: null, retry_in_s: null });
    expect(status.replicas[0]!.reads).toBeGreaterThanOrEqual(3);
  });

  it('spreads reads over two replicas and never reads the primary while they are healthy', async () => {
    const { app } = await appWith([0, 1]);
    const ports = new Map<number, number>();
    for (let i = 0; i < 10; i++) {
      const view = await serverOf(app, i % 2 ? 'list' : 'stable');
      expect(view.in_recovery).toBe(true);
      ports.set(view.port, (ports.get(view.port) ?? 0) + 1);
    }
    expect([...ports.keys()].sort()).toEqual([cluster.replicas[0]!.port, cluster.replicas[1]!.port].sort());
    // Idle gateway: least busy ties are taken in turn, so the reads alternate.
    expect([...ports.values()]).toEqual([5, 5]);
  });

  it('reports each replica\'s state and lag in /health/internal and /metrics, never the password', async () => {
    const { app } = await appWith([0, 1], { adminToken: 'replica-admin' });
    await waitFor(async () => {
      const res = await request(app).get('/admin/health/internal').set('Authorization', 'Bearer replica-admin');
      return res.body.replicas.every((r: { lag_bytes: unknown }) => typeof r.lag_bytes === 'number');
    }, 5000, 'lag measured');
    const res = await request(app).get('/admin/health/internal').set('Authorization', 'Bearer replica-admin');
    expect(res.body.status).toBe('ok');
    for (const [i, r] of (res.body.replicas as Record<string, unknown>[]).entries()) {
      expect(r).toMatchObject({ host: '127.0.0.1', port: cluster.replicas[i]!.port, state: 'healthy' });
      expect(r['lag_bytes']).toBeGreaterThanOrEqual(0);
      expect(typeof r['lag_ms']).toBe('number');
      expect(typeof r['in_use']).toBe('number');
    }
    expect(res.text).not.toContain('tablegate-app-test-password');
    expect(res.text).not.toContain('tablegate_app');

    const metrics = await request(app).get('/admin/metrics').set('Authorization', 'Bearer replica-admin');
    expect(metrics.status).toBe(200);
    for (const [i, r] of cluster.replicas.entries()) {
      const labels = `replica="${i}",address="127.0.0.1:${r.port}"`;
      expect(metrics.text).toContain(`tablegate_replica_up{${labels}} 1`);
      expect(metrics.text).toMatch(new RegExp(`tablegate_replica_lag_bytes\\{${labels}\\} \\d+`));
      expect(metrics.text).toMatch(new RegExp(`tablegate_replica_lag_seconds\\{${labels}\\} [\\d.]+`));
    }
    expect(metrics.text).not.toContain('tablegate-app-test-password');
  });

  it('pins a writer\'s reads to the primary for read_your_writes_ms, and only that caller\'s', async () => {
    const { app } = await appWith([0], { readYourWritesMs: 1500 });
    expect((await serverOf(app, 'stable')).in_recovery).toBe(true);
    const created = await request(app).post('/api/notes').set('Authorization', `Bearer ${alice}`).send({ body: 'ryw' });
    expect(created.status).toBe(201);
    const wroteAt = Date.now();
    expect(await serverOf(app, 'stable')).toEqual({ in_recovery: false, port: cluster.primary.port });
    expect((await serverOf(app, 'list')).in_recovery).toBe(false);
    // Another caller is not pinned.
    expect((await serverOf(app, 'stable', bob)).in_recovery).toBe(true);
    // A VOLATILE call is a write too.
    await serverOf(app, 'volatile', bob);
    expect((await serverOf(app, 'stable', bob)).in_recovery).toBe(false);
    // After the window alice reads the replica again.
    await new Promise((r) => setTimeout(r, Math.max(0, wroteAt + 1600 - Date.now())));
    expect((await serverOf(app, 'stable')).in_recovery).toBe(true);
  });

  it('takes a replica further behind than read_replica_max_lag_ms out until it catches up', async () => {
    const { app } = await appWith([0], { readReplicaMaxLagMs: 300 });
    expect((await serverOf(app, 'stable')).in_recovery).toBe(true);
    const replicaAdmin = new pg.Client({ connectionString: cluster.replicas[0]!.adminUrl });
    await replicaAdmin.connect();
    try {
      await replicaAdmin.query('SELECT pg_wal_replay_pause()');
      // The primary moves on; the paused replica falls behind in bytes and, as time passes, in ms.
      expect((await request(app).post('/api/notes').set('Authorization', `Bearer ${bob}`).send({ body: 'while paused' })).status).toBe(201);
      await waitFor(async () => (await health(app)).replicas[0]!.reason === 'lagging', 10000, 'replica 0 lagging');
      const lagging = (await health(app)).replicas[0]!;
      expect(lagging).toMatchObject({ state: 'out', reason: 'lagging', retry_in_s: 0 });
      expect(lagging.lag_bytes).toBeGreaterThan(0);
      expect(lagging.lag_ms).toBeGreaterThan(300);
      expect(await serverOf(app, 'stable')).toEqual({ in_recovery: false, port: cluster.primary.port });
    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
      await replicaAdmin.end();
    }
    await waitFor(async () => (await health(app)).replicas[0]!.state === 'healthy', 10000, 'replica 0 caught up');
    expect((await health(app)).replicas[0]).toMatchObject({ lag_bytes: 0, lag_ms: 0 });
    expect((await serverOf(app, 'stable')).in_recovery).toBe(true);
  });

  it('answers a read of a table the replica has not replayed yet from the primary, keeping the replica', async () => {
    const { app, gateway } = await appWith([0]);
    const replicaAdmin = new pg.Client({ connectionString: cluster.replicas[0]!.adminUrl });
    const primaryAdmin = new pg.Client({ connectionString: cluster.primary.adminUrl });
    await Promise.all([replicaAdmin.connect(), primaryAdmin.connect()]);
    try {
      await replicaAdmin.query('SELECT pg_wal_replay_pause()');
      // A migration on the primary that the paused replica does not have yet.
      await primaryAdmin.query(`
        CREATE TABLE replication.fresh (id int PRIMARY KEY, tenant_id uuid NOT NULL);
        ALTER TABLE replication.fresh ENABLE ROW LEVEL SECURITY;
        ALTER TABLE replication.fresh FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_isolation ON replication.fresh USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
        GRANT SELECT ON replication.fresh TO tablegate_app;
        INSERT INTO replication.fresh VALUES (1, '${TENANT_A}'), (2, '${TENANT_B}');`);
      await gateway.reloadSchema();
      const before = (await health(app)).replicas[0]!;
      const res = await request(app).get('/api/fresh').set('Authorization', `Bearer ${alice}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: 1, tenant_id: TENANT_A }]);
      const after = (await health(app)).replicas[0]!;
      expect(after.state).toBe('healthy');
      expect(after.fallbacks).toBe(before.fallbacks + 1);
    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
      await primaryAdmin.query('DROP TABLE IF EXISTS replication.fresh');
      await Promise.all([replicaAdmin.end(), primaryAdmin.end()]);
    }
  });

  it('x-gw-read-primary: true sends a request\'s reads to the primary; other values are a 400', async () => {
    const { app } = await appWith([0]);
    expect((await serverOf(app, 'list', alice, { 'x-gw-read-primary': 'true' })).in_recovery).toBe(false);
    expect((await serverOf(app, 'stable', alice, { 'x-gw-read-primary': 'true' })).in_recovery).toBe(false);
    expect((await serverOf(app, 'stable', alice, { 'x-gw-read-primary': 'false' })).in_recovery).toBe(true);
    const bad = await request(app).get('/api/server_view').set('x-gw-read-primary', 'yes').set('Authorization', `Bearer ${alice}`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('PARSE_ERROR');
    expect(bad.body.details).toEqual({ header: 'x-gw-read-primary' });
  });

  describe.each(['fast', 'immediate'] as const)('a replica stopped (%s) under load', (mode) => {
    it('answers every read (no 500, no 503) from the primary and the other replica, shows it out, and takes it back after a restart', async () => {
      const { app } = await appWith([0, 1]);
      const server: HttpServer = app.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      let stop = false;
      let load: Promise<unknown> = Promise.resolve();
      try {
        const statuses = new Map<number, number>();
        const answeredBy = new Map<number, number>();
        const failures: string[] = [];
        const client = async (n: number): Promise<void> => {
          for (let i = 0; !stop; i++) {
            const path = (n + i) % 2 ? '/api/server_view' : '/api/rpc/server_stable';
            const res = await fetch(`${base}${path}`, {
              method: path.includes('rpc') ? 'POST' : 'GET',
              headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
              ...(path.includes('rpc') ? { body: '{}' } : {}),
            });
            const body = (await res.json()) as { data?: ServerView[] | ServerView };
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            if (res.status !== 200) failures.push(JSON.stringify(body));
            const view = Array.isArray(body.data) ? body.data[0] : body.data;
            const port = res.status === 200 ? view?.port : undefined;
            if (port !== undefined) answeredBy.set(port, (answeredBy.get(port) ?? 0) + 1);
          }
        };
        load = Promise.all(Array.from({ length: 16 }, (_, n) => client(n)));
        await new Promise((r) => setTimeout(r, 300));
        await cluster.stopReplica(0, mode);
        await waitFor(async () => (await health(app)).replicas[0]!.state === 'out', 5000, 'replica 0 out');
        await new Promise((r) => setTimeout(r, 500));
        const out = await health(app);
        expect(out.replicas[0]).toMatchObject({ state: 'out', reason: 'unreachable' });
        expect(out.replicas[1]!.state).toBe('healthy');
        const readsWhileOut = out.replicas[0]!.reads;
        stop = true;
        await load;

        expect(failures).toEqual([]);
        expect([...statuses.keys()]).toEqual([200]);
        expect(statuses.get(200)).toBeGreaterThan(50);
        expect(answeredBy.get(cluster.replicas[1]!.port)).toBeGreaterThan(0);

        await cluster.startReplica(0);
        // Back in rotation after read_replica_retry_ms and a successful check.
        await waitFor(async () => (await health(app)).replicas[0]!.state === 'healthy', 10000, 'replica 0 healthy again');
        const ports = new Set<number>();
        for (let i = 0; i < 6; i++) ports.add((await serverOf(app, 'stable')).port);
        expect(ports).toEqual(new Set([cluster.replicas[0]!.port, cluster.replicas[1]!.port]));
        expect((await health(app)).replicas[0]!.reads).toBeGreaterThan(readsWhileOut);
      } finally {
        stop = true;
        await load.catch(() => undefined);
        if (!cluster.replicas[0] || (await health(app)).replicas[0]!.state !== 'healthy') await cluster.startReplica(0).catch(() => undefined);
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    }, 60000);
  });

  it('falls back to the primary for every read when the only replica is down, and says so', async () => {
    // No periodic check in the test's time: only the failing reads can notice the replica is gone.
    const { app } = await appWith([0], { readReplicaCheckIntervalMs: 600000 });
    expect((await serverOf(app, 'stable')).in_recovery).toBe(true);
    await cluster.stopReplica(0, 'immediate');
    try {
      expect((await health(app)).replicas[0]!.state).toBe('healthy');
      // The first read after the stop fails on the replica and is retried on the primary.
      for (let i = 0; i < 4; i++) expect(await serverOf(app, i % 2 ? 'list' : 'stable')).toEqual({ in_recovery: false, port: cluster.primary.port });
      const status = await health(app);
      expect(status.replicas[0]).toMatchObject({ state: 'out', reason: 'unreachable' });
      expect(status.replicas[0]!.retry_in_s).toEqual(expect.any(Number));
      expect(status.replicas[0]!.fallbacks).toBeGreaterThanOrEqual(1);
    } finally {
      await cluster.startReplica(0);
    }
  }, 30000);

  it('starts with a replica that is down, serving reads from the primary', async () => {
    const closed = new URL(cluster.replicas[0]!.appUrl);
    closed.port = String(await freePort());
    const gateway = createGateway({
      databaseUrl: cluster.primary.appUrl,
      jwtSecret: TEST_JWT_SECRET,
      schemas: ['replication'],
      readReplicaUrls: [closed.toString()],
    });
    gateways.push(gateway);
    await gateway.ready;
    const app = express().use('/api', gateway).use('/admin', gateway.admin);
    expect((await serverOf(app, 'stable')).in_recovery).toBe(false);
    const status = await health(app);
    expect(status.replicas[0]).toMatchObject({ state: 'out', reason: 'unreachable', port: Number(closed.port) });
  });

  it('refuses to start when a replica\'s role bypasses row-level security', async () => {
    const gateway = createGateway({
      databaseUrl: cluster.primary.appUrl,
      jwtSecret: TEST_JWT_SECRET,
      schemas: ['replication'],
      readReplicaUrls: [cluster.replicas[0]!.adminUrl],
    });
    gateways.push(gateway);
    await expect(gateway.ready).rejects.toThrow(/read replica 1 of read_replica_urls \(127\.0\.0\.1:\d+\): database role "postgres" is a superuser/);
    await expect(gateway.ready).rejects.not.toThrow(/postgres:\/\//);
  });
});
