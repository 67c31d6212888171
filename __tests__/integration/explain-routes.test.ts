/**
 * GET /{table}/_explain?<list params>: EXPLAIN (ANALYZE, FORMAT JSON) of the list statement, run
 * in the caller's read-only tenant transaction.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, TEST_JWT_SECRET } from '../support/test-database';
import { tokenA, tokenB, useGatewayApp } from '../support/gateway-app';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Actual Rows'?: number; 'Actual Loops'?: number; Plans?: PlanNode[] };
let db: TestDb;
let gateway: Gateway;
let app: express.Express;

useGatewayApp({ maxLimit: 500 }, (started) => ({ db, gateway, app } = started));

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
