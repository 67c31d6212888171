/**
 * GET /{table}/_explain?<list params>: EXPLAIN (ANALYZE, FORMAT JSON) of the list statement, run
 * in the caller's read-only tenant transaction; open only to the roles and scopes that
 * explain_roles / explain_scopes name (everyone in dev mode), because its row counts include
 * other tenants' rows. A recording execute stage proves that a refused caller ran no SQL.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, operationOf, type Gateway } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { gatewayFactory, tokenA, tokenB, useGatewayApp } from '../support/gateway-app';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Actual Rows'?: number; 'Actual Loops'?: number; 'Rows Removed by Filter'?: number; Plans?: PlanNode[] };
let db: TestDb;
let gateway: Gateway;
let app: express.Express;

// alice and bob have role `member`; explain is closed to callers explain_roles / explain_scopes do not name.
useGatewayApp({ maxLimit: 500, explainRoles: ['member'] }, (started) => ({ db, gateway, app } = started));

const get = (path: string, token = tokenA) => request(app).get(path).set('Authorization', `Bearer ${token}`);

function nodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodes)];
}

/** Rows the scans of `relation` produced (over all loops). */
function scannedRows(plan: { Plan: PlanNode }[], relation: string): number {
  return nodes(plan[0]!.Plan)
    .filter((n) => n['Relation Name'] === relation)
    .reduce((sum, n) => sum + (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1), 0);
}

describe('GET /{table}/_explain', () => {
  it('returns the EXPLAIN ANALYZE JSON plan of the list statement', async () => {
    const res = await get('/api/orders/_explain?status=paid&limit=5');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    const { plan } = res.body.data;
    expect(Array.isArray(plan)).toBe(true);
    expect(plan[0].Plan['Node Type']).toBe('Aggregate'); // json_agg over the page
    expect(plan[0]['Execution Time']).toEqual(expect.any(Number)); // ANALYZE ran it
    expect(nodes(plan[0].Plan).some((n: PlanNode) => n['Node Type'] === 'Limit')).toBe(true);
  });

  it('runs under the caller\'s tenant context (RLS): the scan sees only that tenant\'s rows', async () => {
    const a = await get('/api/orders/_explain?limit=500&select=id');
    const b = await get('/api/orders/_explain?limit=500&select=id', tokenB);
    expect(scannedRows(a.body.data.plan, 'orders')).toBe(120);
    expect(scannedRows(b.body.data.plan, 'orders')).toBe(80);
  });

  it('explains expansions as subplans of the same statement, run once per page row', async () => {
    const res = await get('/api/orders/_explain?limit=7&select=id&expand=user,nested:order_items');
    expect(res.status).toBe(200);
    const all = nodes(res.body.data.plan[0].Plan);
    const users = all.filter((n) => n['Relation Name'] === 'users');
    const items = all.filter((n) => n['Relation Name'] === 'order_items');
    expect(users.length).toBeGreaterThan(0);
    expect(items.length).toBeGreaterThan(0);
    // Computed over the limited page, not over every order of the tenant.
    for (const n of [...users, ...items]) expect(n['Actual Loops']).toBeLessThanOrEqual(7);
  });

  it('validates the parameters like the list route', async () => {
    expect((await get('/api/orders/_explain?nope=1')).body.code).toBe('UNKNOWN_COLUMN');
    expect((await get('/api/orders/_explain?expand=nope')).body.code).toBe('UNKNOWN_RELATION');
    expect((await get('/api/orders/_explain?limit=-1')).body.code).toBe('PARSE_ERROR');
    expect((await get('/api/orders/_explain?id=abc')).body.code).toBe('VALIDATION_ERROR');
  });

  it('is a 404 when explain_enabled = false', async () => {
    const off = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, explainEnabled: false });
    try {
      await off.ready;
      const offApp = express();
      offApp.use('/api', off);
      const res = await request(offApp).get('/api/orders/_explain').set('Authorization', `Bearer ${tokenA}`);
      expect(res.status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe('who may use _explain (its row counts cross tenants)', () => {
  /** Kinds of the commands that reached the execute stage: none means no SQL ran. */
  let executed: string[] = [];
  const apps = gatewayFactory(() => ({
    databaseUrl: db.appUrl,
    jwtSecret: TEST_JWT_SECRET,
    maxLimit: 500,
    stages: { execute: (ctx, next) => (executed.push(operationOf(ctx.command)), next(ctx)) },
  }));
  afterAll(() => apps.closeAll());
  beforeEach(() => {
    executed = [];
  });
  const admin = signToken({ tenant_id: TENANT_A, user_id: 'ops', role: 'admin' });
  const withScope = signToken({ tenant_id: TENANT_A, user_id: 'carol', role: 'member', scope: 'orders:read db:explain' });
  const explain = (app: express.Express, token: string, query = 'select=id&limit=500') =>
    request(app).get(`/api/order_items/_explain?${query}`).set('Authorization', `Bearer ${token}`);

  function expectRefused(res: request.Response): void {
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      code: 'FORBIDDEN',
      message: 'This caller may not use the explain route.',
      hint: "EXPLAIN ANALYZE row counts include other tenants' rows, so _explain is open only to the roles in explain_roles and the scopes in explain_scopes (and to everyone in dev mode).",
    });
  }

  it('is closed by default: a tenant caller gets 403 before any SQL, and the list route still works', async () => {
    const app = await apps.appWith();
    expectRefused(await explain(app, tokenA));
    expectRefused(await explain(app, admin));
    expect(executed).toEqual([]);
    expect((await request(app).get('/api/order_items?limit=1').set('Authorization', `Bearer ${tokenA}`)).status).toBe(200);
    expect(executed).toEqual(['list']);
  });

  it('opens to the roles in explain_roles only', async () => {
    const app = await apps.appWith({ explainRoles: ['admin', 'dba'] });
    expectRefused(await explain(app, tokenA)); // role member
    expect(executed).toEqual([]);
    const res = await explain(app, admin);
    expect(res.status).toBe(200);
    expect(res.body.data.plan[0]['Execution Time']).toEqual(expect.any(Number));
    expect(executed).toEqual(['explain']);
  });

  it('opens to a caller holding any scope in explain_scopes', async () => {
    const app = await apps.appWith({ explainScopes: ['db:explain', 'ops'] });
    expect((await explain(app, withScope)).status).toBe(200);
    expectRefused(await explain(app, tokenA));
    expectRefused(await explain(app, admin)); // a role, but explain_roles is unset
    expect(executed).toEqual(['explain']);
  });

  it('an empty list opens it to nobody, an anonymous caller is never named', async () => {
    const app = await apps.appWith({ explainRoles: [], explainScopes: [], requireAuth: false });
    expectRefused(await explain(app, admin));
    expectRefused(await request(app).get('/api/order_items/_explain'));
    expect(executed).toEqual([]);
  });

  it('is open to everyone in dev mode (dev headers and tokens alike)', async () => {
    const app = await apps.appWith({ devMode: true });
    expect((await explain(app, tokenA)).status).toBe(200);
    const dev = await request(app).get('/api/order_items/_explain?select=id').set('x-tenant-id', TENANT_B).set('x-user-id', 'dev');
    expect(dev.status).toBe(200);
    expect(executed).toEqual(['explain', 'explain']);
  });

  it('a refused tenant learns nothing: the answer is the same whatever the other tenants hold', async () => {
    const app = await apps.appWith();
    // Predicates that match many, some and none of tenant B's rows answer byte for byte alike.
    const answers = await Promise.all(
      ['select=id', 'qty=gte.1', 'qty=gt.1000000', `tenant_id=eq.${TENANT_B}`, 'id=eq.190'].map(async (q) => {
        const res = await explain(app, tokenA, q);
        return [res.status, res.text, res.headers['content-length']];
      }),
    );
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]![0]).toBe(403);
    expect(executed).toEqual([]);
  });

  it('an allowed caller sees counts that include other tenants\' rows (why the route is gated)', async () => {
    const app = await apps.appWith({ explainRoles: ['admin'] });
    const res = await explain(app, admin);
    expect(res.status).toBe(200);
    const scans = nodes(res.body.data.plan[0].Plan).filter((n) => n['Relation Name'] === 'order_items');
    expect(scans.map((n) => n['Node Type'])).toEqual(['Seq Scan']); // no index on tenant_id
    const { rows } = await db.admin.query<{ others: number }>('SELECT count(*)::int AS others FROM order_items WHERE tenant_id <> $1', [TENANT_A]);
    // RLS is a filter on the scan: the rows it removed are exactly the other tenants' rows.
    expect(scans[0]!['Rows Removed by Filter']).toBe(rows[0]!.others);
    expect(scans[0]!['Actual Rows']).toBe(180);
  });
});
