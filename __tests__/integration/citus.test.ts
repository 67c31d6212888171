/**
 * tablegate on Citus (docs/citus.md): a coordinator and two workers of its own
 * (support/citus-cluster.ts), tenant tables distributed by tenant_id and co-located, reference
 * tables, RLS enabled and forced, the gateway as tablegate_app (NOSUPERUSER NOBYPASSRLS), two
 * tenants whose shards are on different workers. Skipped, saying why and how to install Citus,
 * when Citus or Debian's PostgreSQL 15 is missing.
 */
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
