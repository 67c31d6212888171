/**
 * tablegate on Citus (docs/citus.md): a coordinator and two workers of its own
 * (support/citus-cluster.ts), tenant tables distributed by tenant_id and co-located, reference
 * tables, RLS enabled and forced, the gateway as tablegate_app (NOSUPERUSER NOBYPASSRLS), two
 * tenants whose shards are on different workers. Skipped, saying why and how to install Citus,
 * when Citus or Debian's PostgreSQL 15 is missing.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PostgrestClient } from '@supabase/postgrest-js';
import express from 'express';
import pg from 'pg';
import request from 'supertest';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { citusMissing, INSTALL_CITUS, startCitusCluster, type CitusCluster } from '../support/citus-cluster';
import { describeIfPresent } from '../support/skips';
import { signToken, TEST_JWT_SECRET } from '../support/test-database';

const run = describeIfPresent('citus.test.ts (a Citus coordinator and two workers)', citusMissing(), INSTALL_CITUS);

run('tablegate on Citus', () => {
  let cluster: CitusCluster;
  const gateways: Gateway[] = [];
  let api: express.Express;
  let scoped: express.Express;
  let postgrest: express.Express;
  let tokenA: string;
  let tokenB: string;
  let A: string;
  let B: string;

  const gatewayApp = async (options: Partial<GatewayOptions>): Promise<express.Express> => {
    const gateway = createGateway({ databaseUrl: cluster.appUrl, jwtSecret: TEST_JWT_SECRET, reloadListen: false, maxExportRows: 1000, ...options } as GatewayOptions);
    gateways.push(gateway);
    await gateway.ready;
    return express().use('/api', gateway);
  };

  beforeAll(async () => {
    cluster = await startCitusCluster();
    [A, B] = cluster.tenants;
    tokenA = signToken({ tenant_id: A, user_id: 'alice', role: 'member' });
    tokenB = signToken({ tenant_id: B, user_id: 'bob', role: 'member' });
    api = await gatewayApp({});
    scoped = await gatewayApp({ tenantColumn: 'tenant_id' });
    postgrest = await gatewayApp({ tenantColumn: 'tenant_id', dialect: 'postgrest' });
  }, 120000);

  afterAll(async () => {
    for (const g of gateways) await g.close();
    await cluster?.stop();
  });

  const as = (app: express.Express, token: string) => ({
    get: (url: string) => request(app).get(url).set('Authorization', `Bearer ${token}`),
    post: (url: string, body: unknown) => request(app).post(url).set('Authorization', `Bearer ${token}`).send(body as object),
    patch: (url: string, body: unknown) => request(app).patch(url).set('Authorization', `Bearer ${token}`).send(body as object),
    del: (url: string) => request(app).delete(url).set('Authorization', `Bearer ${token}`),
  });

  it('the cluster: two workers, the tenants on different ones, the role without superuser or BYPASSRLS, RLS forced', async () => {
    const nodes = await cluster.coordinator.query("SELECT count(*)::int AS n FROM pg_dist_node WHERE noderole = 'primary' AND shouldhaveshards");
    expect(nodes.rows[0]?.n).toBe(2);
    expect([await cluster.workerOf(A), await cluster.workerOf(B)]).toEqual([0, 1]);
    const role = await cluster.coordinator.query("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'tablegate_app'");
    expect(role.rows).toEqual([{ rolsuper: false, rolbypassrls: false }]);
    const rls = await cluster.coordinator.query("SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname IN ('users', 'orders', 'order_items') ORDER BY relname");
    expect(rls.rows.every((r) => r.relrowsecurity && r.relforcerowsecurity)).toBe(true);
  });

  it('without SET LOCAL propagation, a set_config tenant does not reach the workers (what the gateway must work around)', async () => {
    const client = new pg.Client({ connectionString: cluster.appUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query("SELECT set_config('app.current_tenant_id', $1, true)", [A]);
      const plain = await client.query('SELECT count(*)::int AS n FROM orders');
      await client.query('ROLLBACK');
      expect(plain.rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('list: each tenant sees its own rows, on either worker', async () => {
    for (const [token, tenant] of [[tokenA, A], [tokenB, B]] as const) {
      const res = await as(api, token).get('/api/orders?limit=100');
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(cluster.rows.orders);
      expect(new Set(res.body.data.map((r: { tenant_id: string }) => r.tenant_id))).toEqual(new Set([tenant]));
    }
  });

  it('get, expand, nested expand, children, aggregate and an export: each tenant its own rows', async () => {
    const a = as(scoped, tokenA);
    const one = await a.get('/api/orders/3?expand=users');
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ tenant_id: A, id: 3, users: { tenant_id: A, id: 1 } });
    // The composite form keeps working.
    expect((await a.get(`/api/orders/${A},3`)).body.data).toMatchObject({ id: 3 });
    // Another tenant's composite key is not found (RLS and the tenant filter).
    expect((await a.get(`/api/orders/${B},3`)).status).toBe(404);
    const nested = await a.get('/api/users/1?expand=nested:orders');
    expect(nested.status).toBe(200);
    expect(nested.body.data.orders.length).toBeGreaterThan(0);
    expect(nested.body.data.orders.every((o: { tenant_id: string }) => o.tenant_id === A)).toBe(true);
    const children = await a.get('/api/orders/1/order_items');
    expect(children.status).toBe(200);
    expect(children.body.data.map((r: { order_id: number }) => r.order_id)).toEqual(children.body.data.map(() => 1));
    const expanded = await a.get('/api/orders?expand=users&limit=100');
    expect(expanded.status).toBe(200);
    expect(expanded.body.data).toHaveLength(cluster.rows.orders);
    expect(expanded.body.data.every((o: { users: { tenant_id: string } }) => o.users.tenant_id === A)).toBe(true);
    const count = await a.get('/api/orders/aggregate?fn=count');
    expect(count.status).toBe(200);
    expect(Number(count.body.data.value)).toBe(cluster.rows.orders);
    const exported = await a.get('/api/orders?limit=1000').set('Accept', 'application/x-ndjson');
    expect(exported.status).toBe(200);
    const lines = exported.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(cluster.rows.orders);
    expect(lines.every((o: { tenant_id: string }) => o.tenant_id === A)).toBe(true);
  });

  it('writes pass RLS WITH CHECK on the workers: insert, batch insert, upsert, update, delete', async () => {
    for (const [token, tenant] of [[tokenA, A], [tokenB, B]] as const) {
      const c = as(scoped, token);
      const inserted = await c.post('/api/orders', { id: 1001, total: 5 });
      expect(inserted.status).toBe(201);
      expect(inserted.body.data).toMatchObject({ tenant_id: tenant, id: 1001 });
      const batch = await c.post('/api/orders', [{ id: 1002 }, { id: 1003 }]);
      expect(batch.status).toBe(201);
      const upsert = await request(scoped).post('/api/orders').set('Authorization', `Bearer ${token}`).set('X-Upsert', 'true').send({ id: 1002, total: 7 });
      expect(upsert.status).toBeLessThan(300);
      const updated = await c.patch('/api/orders/1002', { status: 'paid' });
      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({ id: 1002, status: 'paid', total: 7 });
      for (const id of [1001, 1002, 1003]) expect((await c.del(`/api/orders/${id}`)).status).toBeLessThan(300);
      expect((await c.get('/api/orders/1001')).status).toBe(404);
    }
    // A row for another tenant is refused by the policy on the worker.
    const foreign = await as(scoped, tokenA).post('/api/orders', { tenant_id: B, id: 1004 });
    expect(foreign.status).toBe(403);
    const { rows } = await cluster.coordinator.query('SELECT count(*)::int AS n FROM orders WHERE id > 1000');
    expect(rows[0]?.n).toBe(0);
  });

  it('RPC: a function reading and one writing distributed tables run as the caller, on its tenant', async () => {
    const a = as(scoped, tokenA);
    const counted = await a.post('/api/rpc/order_count', {});
    expect(counted.status).toBe(200);
    expect(Number(counted.body.data ?? counted.body)).toBe(cluster.rows.orders);
    const added = await as(scoped, tokenB).post('/api/rpc/add_order', { p_id: 2001, p_total: 1 });
    expect(added.status).toBe(200);
    expect((await cluster.coordinator.query('SELECT tenant_id FROM orders WHERE id = 2001')).rows).toEqual([{ tenant_id: B }]);
    await cluster.coordinator.query('DELETE FROM orders WHERE id = 2001');
  });

  it('PostgREST dialect: embeds, nested embeds and writes', async () => {
    const headers = { Authorization: `Bearer ${tokenA}` };
    const read = await request(postgrest).get('/api/orders?select=id,tenant_id,users(id,name,orders(id)),order_items(id)&id=eq.1').set(headers);
    expect(read.status).toBe(200);
    expect(read.body).toHaveLength(1);
    expect(read.body[0]).toMatchObject({ id: 1, tenant_id: A, users: { id: 2 } });
    const written = await request(postgrest).post('/api/orders').set(headers).set('Prefer', 'return=representation').send({ id: 3001, total: 1 });
    expect(written.status).toBe(201);
    expect(written.body).toEqual([expect.objectContaining({ id: 3001, tenant_id: A })]);
    expect((await request(postgrest).delete('/api/orders?id=eq.3001').set(headers)).status).toBeLessThan(300);
  });

  it("Citus's own views are not served", async () => {
    for (const name of ['citus_tables', 'citus_schemas']) expect((await as(api, tokenA).get(`/api/${name}`)).status).toBe(404);
  });

  it('isolation matrix: neither tenant reads, changes or deletes the other one\'s rows, on any route', async () => {
    for (const [token, other] of [[tokenA, B], [tokenB, A]] as const) {
      for (const app of [api, scoped]) {
        const c = as(app, token);
        const list = await c.get('/api/order_items?limit=1000');
        expect(list.body.data.some((r: { tenant_id: string }) => r.tenant_id === other)).toBe(false);
        expect((await c.get(`/api/users/${other},1`)).status).toBe(404);
        expect((await c.get(`/api/users/${other},1/orders`)).status).toBe(404);
      }
      // Writes by another tenant's key: with tenant_column, 404 before SQL (without it, Citus
      // fails such an UPDATE internally: docs/citus.md, "What does not work").
      const c = as(scoped, token);
      expect((await c.patch(`/api/orders/${other},1`, { status: 'cancelled' })).status).toBe(404);
      expect((await c.del(`/api/orders/${other},1`)).status).toBe(404);
    }
    // Without tenant_column the key goes to the cluster as it is: Citus prunes the UPDATE/DELETE to
    // the other tenant's shard, where RLS leaves nothing to change: 404, as on plain PostgreSQL.
    for (const [token, other] of [[tokenA, B], [tokenB, A]] as const) {
      const c = as(api, token);
      // Repeated: PostgreSQL switches a prepared statement to its generic plan after five runs.
      for (let i = 0; i < 8; i++) {
        const patched = await c.patch(`/api/orders/${other},1`, { status: 'cancelled' });
        expect({ i, status: patched.status, body: patched.body }).toEqual({ i, status: 404, body: expect.anything() });
        const deleted = await c.del(`/api/orders/${other},1`);
        expect({ i, status: deleted.status, body: deleted.body }).toEqual({ i, status: 404, body: expect.anything() });
      }
    }
    const { rows } = await cluster.coordinator.query("SELECT count(*)::int AS n FROM orders WHERE status = 'cancelled'");
    expect(rows[0]?.n).toBe(0);
  });

  describe('the rest of the surface on Citus (docs/citus.md): answers, never a 500', () => {
    it('cursors: next_cursor pages through every row of the tenant, once each, with and without tenant_column', async () => {
      for (const app of [api, scoped]) {
        for (const [token, tenant] of [[tokenA, A], [tokenB, B]] as const) {
          const seen: number[] = [];
          let url = '/api/orders?limit=3&sort=id';
          for (let page = 0; page < 10 && url; page++) {
            const res = await as(app, token).get(url);
            expect(res.status).toBe(200);
            expect(res.body.data.every((o: { tenant_id: string }) => o.tenant_id === tenant)).toBe(true);
            seen.push(...res.body.data.map((o: { id: number }) => Number(o.id)));
            url = res.body.next_cursor ? `/api/orders?limit=3&sort=id&cursor=${encodeURIComponent(res.body.next_cursor)}` : '';
          }
          expect(seen).toEqual(Array.from({ length: cluster.rows.orders }, (_, i) => i + 1));
        }
      }
    });

    it('counts: count=exact is the tenant\'s total, with a filter too', async () => {
      for (const app of [api, scoped]) {
        const all = await as(app, tokenA).get('/api/orders?limit=2&count=exact');
        expect(all.status).toBe(200);
        expect(all.body.total).toBe(cluster.rows.orders);
        const paid = await as(app, tokenB).get('/api/orders?limit=1&count=exact&status=paid');
        expect(paid.status).toBe(200);
        expect(paid.body.total).toBe(Math.floor(cluster.rows.orders / 3));
      }
    });

    it('exports: ndjson and csv carry only the tenant\'s rows, on either worker', async () => {
      for (const app of [api, scoped]) {
        for (const [token, tenant] of [[tokenA, A], [tokenB, B]] as const) {
          const nd = await as(app, token).get('/api/order_items?limit=1000').set('Accept', 'application/x-ndjson');
          expect(nd.status).toBe(200);
          const rows = nd.text.trim().split('\n').map((l) => JSON.parse(l) as { tenant_id: string });
          expect(rows).toHaveLength(cluster.rows.order_items);
          expect(rows.every((r) => r.tenant_id === tenant)).toBe(true);
          const csv = await as(app, token).get('/api/orders?limit=1000&select=tenant_id,id').set('Accept', 'text/csv');
          expect(csv.status).toBe(200);
          expect(csv.headers['content-type']).toMatch(/^text\/csv/);
          const lines = csv.text.trim().split(/\r?\n/);
          expect(lines[0]).toBe('tenant_id,id');
          expect(lines.slice(1)).toHaveLength(cluster.rows.orders);
          expect(lines.slice(1).every((l) => l.startsWith(`${tenant},`))).toBe(true);
        }
      }
    });

    it('PostgREST dialect through postgrest-js: reads with embeds, a count, and writes, each tenant its own rows', async () => {
      const listening = await new Promise<Server>((resolve) => {
        const s = postgrest.listen(0, '127.0.0.1', () => resolve(s));
      });
      try {
        const url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}/api`;
        for (const [token, tenant] of [[tokenA, A], [tokenB, B]] as const) {
          const client = new PostgrestClient(url, { headers: { Authorization: `Bearer ${token}` } });
          const read = await client.from('orders').select('id, tenant_id, users(id, tenant_id), order_items(id, tenant_id)', { count: 'exact' }).order('id').limit(100);
          expect(read.error).toBeNull();
          expect(read.status).toBe(200);
          expect(read.count).toBe(cluster.rows.orders);
          const rows = read.data as unknown as { tenant_id: string; users: { tenant_id: string } | null; order_items: { tenant_id: string }[] }[];
          expect(rows).toHaveLength(cluster.rows.orders);
          expect(rows.every((o) => o.tenant_id === tenant && o.users?.tenant_id === tenant && o.order_items.every((i) => i.tenant_id === tenant))).toBe(true);
          const inserted = await client.from('orders').insert({ id: 5001, total: 2 }).select('id, tenant_id').single();
          expect(inserted.error).toBeNull();
          expect(inserted.data).toEqual({ id: 5001, tenant_id: tenant });
          const updated = await client.from('orders').update({ status: 'paid' }).eq('id', 5001).select('id, status');
          expect(updated.error).toBeNull();
          expect(updated.data).toEqual([{ id: 5001, status: 'paid' }]);
          const upserted = await client.from('orders').upsert({ tenant_id: tenant, id: 5001, total: 9 }).select('id, total');
          expect(upserted.error).toBeNull();
          expect(upserted.data).toEqual([{ id: 5001, total: 9 }]);
          const rpc = await client.rpc('order_count');
          expect(rpc.error).toBeNull();
          expect(Number(rpc.data)).toBe(cluster.rows.orders + 1);
          const deleted = await client.from('orders').delete().eq('id', 5001).select('id');
          expect(deleted.error).toBeNull();
          expect(deleted.data).toEqual([{ id: 5001 }]);
        }
        // Another tenant's row is refused by the policy on its worker: a 4xx, not a 500.
        const foreign = await new PostgrestClient(url, { headers: { Authorization: `Bearer ${tokenA}` } }).from('orders').insert({ tenant_id: B, id: 5002 });
        expect(foreign.status).toBeGreaterThanOrEqual(400);
        expect(foreign.status).toBeLessThan(500);
      } finally {
        await new Promise((r) => listening.close(r));
      }
      expect((await cluster.coordinator.query('SELECT count(*)::int AS n FROM orders WHERE id > 5000')).rows[0]?.n).toBe(0);
    });

    it('read replicas: a streaming standby of the coordinator serves the reads, each tenant its own rows; writes go to the coordinator', async () => {
      const standby = await cluster.startStandby();
      const gateway = createGateway({ databaseUrl: cluster.appUrl, jwtSecret: TEST_JWT_SECRET, reloadListen: false, tenantColumn: 'tenant_id', readReplicaUrls: [standby.appUrl] } as GatewayOptions);
      gateways.push(gateway);
      await gateway.ready;
      const app = express().use('/api', gateway);
      for (const [token, tenant] of [[tokenA, A], [tokenB, B]] as const) {
        const mark = standby.log().length;
        const list = await as(app, token).get('/api/orders?expand=users&limit=100&count=exact');
        expect(list.status).toBe(200);
        expect(list.body.total).toBe(cluster.rows.orders);
        expect(list.body.data).toHaveLength(cluster.rows.orders);
        expect(list.body.data.every((o: { tenant_id: string; users: { tenant_id: string } }) => o.tenant_id === tenant && o.users.tenant_id === tenant)).toBe(true);
        const counted = await as(app, token).get('/api/orders/aggregate?fn=count');
        expect(Number(counted.body.data.value)).toBe(cluster.rows.orders);
        // The reads ran on the standby (its statement log), not on the coordinator.
        expect(standby.log().slice(mark)).toMatch(/orders/);
        const written = await as(app, token).post('/api/orders', { id: 6001, total: 1 });
        expect(written.status).toBe(201);
        await standby.caughtUp();
        const again = await as(app, token).get('/api/orders/6001');
        expect(again.status).toBe(200);
        expect(again.body.data).toMatchObject({ tenant_id: tenant, id: 6001 });
        expect((await as(app, token).del('/api/orders/6001')).status).toBeLessThan(300);
      }
    }, 60000);

    it('schema reload: a column added to a distributed table is served after reloadSchema(), to each tenant', async () => {
      const gateway = createGateway({ databaseUrl: cluster.appUrl, jwtSecret: TEST_JWT_SECRET, reloadListen: false, tenantColumn: 'tenant_id' } as GatewayOptions);
      gateways.push(gateway);
      await gateway.ready;
      const app = express().use('/api', gateway);
      expect((await as(app, tokenA).get('/api/orders?select=id,note&limit=1')).status).toBe(400);
      await cluster.coordinator.query("ALTER TABLE orders ADD COLUMN note text NOT NULL DEFAULT 'n'");
      try {
        await gateway.reloadSchema();
        for (const token of [tokenA, tokenB]) {
          const res = await as(app, token).get('/api/orders?select=id,note&limit=100');
          expect(res.status).toBe(200);
          expect(res.body.data).toHaveLength(cluster.rows.orders);
          expect(res.body.data.every((o: { note: string }) => o.note === 'n')).toBe(true);
        }
      } finally {
        await cluster.coordinator.query('ALTER TABLE orders DROP COLUMN note');
        await gateway.reloadSchema();
      }
    });
  });

  describe('router queries: with tenant_column, a tenant-scoped request touches only its tenant\'s shards', () => {
    const kinds: [string, () => request.Test][] = [
      ['list', () => as(scoped, tokenB).get('/api/orders')],
      ['get', () => as(scoped, tokenB).get('/api/orders/2')],
      ['expand', () => as(scoped, tokenB).get('/api/orders?expand=users')],
      ['nested expand', () => as(scoped, tokenB).get('/api/users/1?expand=nested:orders')],
      ['children', () => as(scoped, tokenB).get('/api/orders/1/order_items')],
      ['aggregate', () => as(scoped, tokenB).get('/api/orders/aggregate?fn=count')],
      ['count', () => as(scoped, tokenB).get('/api/orders?count=exact')],
      ['export', () => as(scoped, tokenB).get('/api/orders?limit=1000').set('Accept', 'application/x-ndjson')],
      ['insert', () => as(scoped, tokenB).post('/api/orders', { id: 4001 })],
      ['batch insert', () => as(scoped, tokenB).post('/api/orders', [{ id: 4002 }, { id: 4003 }])],
      ['upsert', () => request(scoped).post('/api/orders').set('Authorization', `Bearer ${tokenB}`).set('X-Upsert', 'true').send({ id: 4002, total: 3 })],
      ['update', () => as(scoped, tokenB).patch('/api/orders/4001', { status: 'paid' })],
      ['delete', () => as(scoped, tokenB).del('/api/orders/4003')],
      ['PostgREST embed', () => request(postgrest).get('/api/orders?select=id,users(id,orders(id))').set('Authorization', `Bearer ${tokenB}`)],
    ];
    it.each(kinds)('%s', async (kind, send) => {
      const own = await cluster.shardsOf(B);
      let status = 0;
      const touched = await cluster.shardsTouched(async () => {
        status = (await send()).status;
      });
      expect(status).toBeLessThan(300);
      expect(touched.size).toBeGreaterThan(0);
      expect({ kind, outside: [...touched].filter((s) => !own.has(s)) }).toEqual({ kind, outside: [] });
    });

    it('without tenant_column a list fans out to every shard (the policy alone does not route)', async () => {
      const touched = await cluster.shardsTouched(() => as(api, tokenB).get('/api/orders'));
      expect(touched.size).toBeGreaterThan(3);
    });

    afterAll(() => cluster?.coordinator.query('DELETE FROM orders WHERE id > 4000'));
  });
});
