/**
 * Bulk updates in ONE statement (docs/writing.md, "Bulk updates") over HTTP against real
 * PostgreSQL, as the RLS-bound app role with RLS forced and two tenants. The number of UPDATE
 * statements is counted by PostgreSQL itself: a statement-level trigger on `orders` (it fires
 * once per UPDATE statement, whatever the rows) adds one to a counter the app role cannot see.
 * Also: rows that set different columns, explicit nulls, duplicate keys (applied in order),
 * a bad value naming its row with nothing written, missing=ignore in one statement, and a legacy
 * policy's row conditions (its filter as USING, the body check as WITH CHECK).
 */
import express from 'express';
import request from 'supertest';
import { signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { gatewayFactory, tokenA, useGatewayApp } from '../support/gateway-app';

let db: TestDatabase;
let app: express.Express;
useGatewayApp({}, (started) => ({ db, app } = started));
const apps = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET }));
afterAll(() => apps.closeAll());

const patch = (target: express.Express, body: unknown, token = tokenA, query = '', headers: Record<string, string> = {}) => {
  let req = request(target).patch(`/api/orders${query}`).set('Content-Type', 'application/json').set('Authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return req.send(JSON.stringify(body));
};
const rows = async (sql: string, params: unknown[] = []) => (await db.admin.query(sql, params)).rows as Record<string, unknown>[];
const ordersOf = async (tenant: string, n: number) => (await rows('SELECT id::int, status, total::text, notes FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT $2', [tenant, n])) as { id: number; status: string; total: string | null; notes: string | null }[];
const byIds = async (ids: number[]) => rows('SELECT id::int, status, total::text, notes FROM orders WHERE id = ANY($1) ORDER BY id', [ids]);

/** UPDATE statements run on `orders` while `work` runs, as PostgreSQL counts them. */
async function updateStatements(work: () => Promise<unknown>): Promise<number> {
  const before = Number((await rows('SELECT n FROM test_probe.update_statements'))[0]!.n);
  await work();
  return Number((await rows('SELECT n FROM test_probe.update_statements'))[0]!.n) - before;
}

beforeAll(async () => {
  await db.admin.query(`
    CREATE SCHEMA test_probe;
    CREATE TABLE test_probe.update_statements (n integer NOT NULL);
    INSERT INTO test_probe.update_statements VALUES (0);
    CREATE FUNCTION test_probe.count_update() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS
      $$ BEGIN UPDATE test_probe.update_statements SET n = n + 1; RETURN NULL; END $$;
    CREATE TRIGGER count_update_statements AFTER UPDATE ON public.orders FOR EACH STATEMENT EXECUTE FUNCTION test_probe.count_update();
  `);
});

describe('bulk PATCH runs as one UPDATE statement', () => {
  it('updates 3 rows that set different columns with one statement, each row keeping the columns it does not name', async () => {
    const [a, b, c] = await ordersOf(TENANT_A, 3);
    let res: request.Response | undefined;
    const statements = await updateStatements(async () => {
      res = await patch(app, [
        { id: a!.id, total: 11.5 },
        { id: String(b!.id), status: 'shipped', notes: null },
        { id: c!.id, notes: 'bulk-one', total: '33.333' },
      ], tokenA, '?returning=id,status,total,notes');
    });
    expect(res!.status).toBe(200);
    expect(statements).toBe(1);
    expect(res!.body).toEqual({
      data: [
        { id: a!.id, status: a!.status, total: 11.5, notes: a!.notes },
        { id: b!.id, status: 'shipped', total: b!.total === null ? null : Number(b!.total), notes: null },
        { id: c!.id, status: c!.status, total: 33.33, notes: 'bulk-one' },
      ],
      count: 3,
    });
    expect(await byIds([a!.id, b!.id, c!.id])).toEqual([
      { id: a!.id, status: a!.status, total: '11.50', notes: a!.notes },
      { id: b!.id, status: 'shipped', total: b!.total, notes: null },
      { id: c!.id, status: c!.status, total: '33.33', notes: 'bulk-one' },
    ]);
  });

  it('updates 200 rows with one statement', async () => {
    const mine = await ordersOf(TENANT_A, 200);
    const body = mine.map((o, i) => ({ id: o.id, notes: `many-${i}` }));
    let res: request.Response | undefined;
    expect(await updateStatements(async () => (res = await patch(app, body, tokenA, '?returning=id')))).toBe(1);
    expect(res!.status).toBe(200);
    expect(res!.body.count).toBe(mine.length);
    expect(await rows("SELECT count(*)::int AS n FROM orders WHERE notes LIKE 'many-%'")).toEqual([{ n: mine.length }]);
  });

  it("skips another tenant's row and a missing one with Prefer: missing=ignore, in one statement, reporting them", async () => {
    const [a] = await ordersOf(TENANT_A, 1);
    const [theirs] = await ordersOf(TENANT_B, 1);
    let res: request.Response | undefined;
    const statements = await updateStatements(async () => {
      res = await patch(app, [{ id: theirs!.id, notes: 'hijack-1' }, { id: a!.id, notes: 'ignored-ok' }, { id: 987654321, notes: 'nope' }], tokenA, '?returning=id,notes', { Prefer: 'missing=ignore' });
    });
    expect(res!.status).toBe(200);
    expect(statements).toBe(1);
    expect(res!.body).toEqual({ data: [{ id: a!.id, notes: 'ignored-ok' }], count: 1, missing: [0, 2] });
    expect(await byIds([theirs!.id])).toEqual([theirs]);
  });

  it("is 404 naming the row for another tenant's row, nothing written", async () => {
    const [a, b] = await ordersOf(TENANT_A, 2);
    const [theirs] = await ordersOf(TENANT_B, 1);
    const res = await patch(app, [{ id: a!.id, notes: 'half-1' }, { id: b!.id, notes: 'half-2' }, { id: theirs!.id, notes: 'half-3' }]);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', details: { row: 2 } });
    expect(await byIds([a!.id, b!.id, theirs!.id])).toEqual([a, b, theirs].sort((x, y) => x!.id - y!.id));
  });

  it('applies two rows with the same key in order, as single PATCHes would (the later value wins, both columns set)', async () => {
    const [a] = await ordersOf(TENANT_A, 1);
    const res = await patch(app, [{ id: a!.id, notes: 'dup-first', total: 1 }, { id: String(a!.id), notes: 'dup-second' }], tokenA, '?returning=id,notes,total');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [{ id: a!.id, notes: 'dup-first', total: 1 }, { id: a!.id, notes: 'dup-second', total: 1 }], count: 2 });
    expect(await byIds([a!.id])).toEqual([{ id: a!.id, status: a!.status, total: '1.00', notes: 'dup-second' }]);
  });

  it('answers a value PostgreSQL refuses with 400 naming its row, and writes no row', async () => {
    const [a, b] = await ordersOf(TENANT_A, 2);
    const bad = await patch(app, [{ id: a!.id, notes: 'never-1' }, { id: b!.id, total: 'not a number' }]);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ details: { row: 1 } });
    const check = await patch(app, [{ id: a!.id, notes: 'never-2' }, { id: b!.id, status: 'lost' }]);
    expect(check.status).toBe(400);
    expect(check.body).toMatchObject({ details: { row: 1 } });
    expect(await byIds([a!.id, b!.id])).toEqual([a, b]);
  });

  it("refuses moving a row to another tenant (RLS WITH CHECK, 403 naming the row), nothing written", async () => {
    const [a, b] = await ordersOf(TENANT_A, 2);
    const res = await patch(app, [{ id: a!.id, notes: 'moved-1' }, { id: b!.id, tenant_id: TENANT_B }]);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ details: { row: 1 } });
    expect(await byIds([a!.id, b!.id])).toEqual([a, b]);
    expect(await rows('SELECT count(*)::int AS n FROM orders WHERE id = ANY($1) AND tenant_id = $2', [[a!.id, b!.id], TENANT_B])).toEqual([{ n: 0 }]);
  });
});

describe('bulk PATCH and max_response_bytes', () => {
  it('answers RESPONSE_TOO_LARGE when the rows it returns are over the bound together, and writes nothing', async () => {
    const small = await apps.appWith({ maxResponseBytes: 1024 });
    const mine = await ordersOf(TENANT_A, 10);
    const res = await patch(small, mine.map((o) => ({ id: o.id, notes: `too-large-${'x'.repeat(150)}` })), tokenA, '?returning=id,notes');
    expect(res.body.code).toBe('RESPONSE_TOO_LARGE');
    expect(await rows("SELECT count(*)::int AS n FROM orders WHERE notes LIKE 'too-large-%'")).toEqual([{ n: 0 }]);
    const fits = await patch(small, mine.slice(0, 2).map((o) => ({ id: o.id, notes: 'fits' })), tokenA, '?returning=id,notes');
    expect(fits.status).toBe(200);
  });
});

describe('bulk PATCH under a policy with row conditions (legacy filter)', () => {
  const POLICY = `
policies:
  - name: members update their own orders
    table: orders
    role: member
    operations: [read, update]
    filter: user_id = $user_id
`;
  let policed: express.Express;
  let me: number;
  let other: number;
  let token: string;
  beforeAll(async () => {
    const users = await rows('SELECT user_id FROM orders WHERE tenant_id = $1 AND user_id IS NOT NULL GROUP BY user_id ORDER BY count(*) DESC, user_id LIMIT 2', [TENANT_A]);
    [me, other] = users.map((r) => Number(r.user_id)) as [number, number];
    token = signToken({ tenant_id: TENANT_A, user_id: String(me), role: 'member' });
    policed = await apps.appWith({ policy: POLICY });
  });
  const idsOf = async (user: number) => (await rows('SELECT id::int FROM orders WHERE tenant_id = $1 AND user_id = $2 ORDER BY id LIMIT 2', [TENANT_A, user])).map((r) => Number(r.id));

  it('updates the rows the filter lets the caller reach in one statement', async () => {
    const [m1, m2] = await idsOf(me);
    let res: request.Response | undefined;
    expect(await updateStatements(async () => (res = await patch(policed, [{ id: m1, status: 'paid' }, { id: m2, notes: 'policed' }], token, '?returning=id,status')))).toBe(1);
    expect(res!.status).toBe(200);
    expect(res!.body.count).toBe(2);
  });

  it("is 404 for a row outside the filter (another user's order), nothing written; skipped with missing=ignore", async () => {
    const [m1] = await idsOf(me);
    const [o1] = await idsOf(other);
    const before = await byIds([m1!, o1!]);
    const res = await patch(policed, [{ id: m1, notes: 'filter-1' }, { id: o1, notes: 'filter-2' }], token);
    expect(res.status).toBe(404);
    expect(res.body.details).toMatchObject({ row: 1 });
    expect(await byIds([m1!, o1!])).toEqual(before);
    const ignored = await patch(policed, [{ id: o1, notes: 'filter-3' }, { id: m1, notes: 'filter-4' }], token, '?returning=id', { Prefer: 'missing=ignore' });
    expect(ignored.body).toEqual({ data: [{ id: m1 }], count: 1, missing: [0] });
    expect(await byIds([o1!])).toEqual([before.find((r) => r.id === o1)]);
  });

  it('refuses a row that would move out of the filter before any SQL (403 naming the row)', async () => {
    const [m1, m2] = await idsOf(me);
    const statements = await updateStatements(async () => {
      const res = await patch(policed, [{ id: m1, notes: 'x' }, { id: m2, user_id: other }], token);
      expect(res.status).toBe(403);
      expect(res.body.details).toMatchObject({ table: 'orders', column: 'user_id', row: 1 });
    });
    expect(statements).toBe(0);
  });
});
