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
    expect(nodes.rows[0].n).toBe(2);
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
});
