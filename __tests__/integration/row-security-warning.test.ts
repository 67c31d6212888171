/**
 * At `ready`, the gateway logs one warning listing the exposed relations that row-level security
 * does not cover (tables without RLS enabled and forced, views without security_invoker), and
 * still serves them: fail open, but loudly. The fixture database is fully covered and logs nothing.
 * Needs PostgreSQL 15+ (security_invoker).
 */
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

const dbs: TestDatabase[] = [];
const gateways: Gateway[] = [];
let warn: jest.SpyInstance;

beforeEach(() => {
  warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
});
afterEach(() => warn.mockRestore());
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await Promise.all(dbs.map((d) => d.drop()));
});

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  dbs.push(db);
  return db;
}

async function readyGateway(db: TestDatabase): Promise<Gateway> {
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET });
  gateways.push(gateway);
  await gateway.ready;
  return gateway;
}

/** The console.warn messages about row-level security coverage. */
function rowSecurityWarnings(): string[] {
  return warn.mock.calls.map((args) => String(args[0])).filter((m) => m.startsWith('tablegate: WARNING:') && m.includes('row-level security'));
}

test('lists the uncovered tables and views (and nothing else), and still serves them', async () => {
  const db = await database();
  await db.admin.query(`
    CREATE TABLE no_rls (id int PRIMARY KEY, tenant_id uuid);
    CREATE TABLE rls_not_forced (id int PRIMARY KEY, tenant_id uuid);
    ALTER TABLE rls_not_forced ENABLE ROW LEVEL SECURITY;
    CREATE POLICY tenant ON rls_not_forced USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
    CREATE VIEW owner_rights_view AS SELECT id, tenant_id FROM orders;
    GRANT SELECT ON no_rls, rls_not_forced, owner_rights_view TO tablegate_app;

    -- Not listed: a view with security_invoker, and a table without RLS the role holds no privilege on.
    CREATE VIEW invoker_view WITH (security_invoker = true) AS SELECT id, tenant_id FROM orders;
    GRANT SELECT ON invoker_view TO tablegate_app;
    -- (010-schema.sql's default privileges grant every new table to the app role: revoke them.)
    CREATE TABLE not_granted (id int PRIMARY KEY);
    REVOKE ALL ON not_granted FROM tablegate_app;
    INSERT INTO no_rls VALUES (1, '${TENANT_A}'), (2, gen_random_uuid());
  `);

  const gateway = await readyGateway(db);

  expect(rowSecurityWarnings()).toEqual([
    [
      'tablegate: WARNING: 3 exposed relations are not covered by row-level security (enabled and forced); ' +
        'the gateway serves them anyway, and callers may see rows of other tenants through them:',
      '  tables:',
      '    public.no_rls: RLS not enabled',
      '    public.rls_not_forced: RLS enabled but not forced (the table owner bypasses it)',
      '  views (RLS applies only through their base tables; use security_invoker = true on PostgreSQL 15+):',
      '    public.owner_rights_view: security_invoker not set',
    ].join('\n'),
  ]);
  // One warning in all: nothing else was printed at ready.
  expect(warn).toHaveBeenCalledTimes(1);

  // A warning, not a refusal: the table is served, every tenant's rows included.
  const app = express().use('/api', gateway);
  const res = await request(app).get('/api/no_rls').set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_A })}`);
  expect(res.status).toBe(200);
  expect(res.body.count).toBe(2);
});

test('a database where every exposed table has RLS enabled and forced logs no such warning', async () => {
  const db = await database();
  const { rows } = await db.admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_class c
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND c.relrowsecurity AND c.relforcerowsecurity`,
  );
  expect(rows[0]!.n).toBeGreaterThan(0); // the fixture tables, all covered

  await readyGateway(db);

  expect(rowSecurityWarnings()).toEqual([]);
  expect(warn).not.toHaveBeenCalled();
});

test('a column-level grant counts as exposed, and a materialized view is listed as a table RLS cannot cover', async () => {
  const db = await database();
  await db.admin.query(`
    CREATE TABLE column_granted (id int PRIMARY KEY, secret text);
    REVOKE ALL ON column_granted FROM tablegate_app;
    GRANT SELECT (id) ON column_granted TO tablegate_app;
    CREATE MATERIALIZED VIEW order_totals AS SELECT tenant_id, count(*) AS n FROM orders GROUP BY tenant_id;
    GRANT SELECT ON order_totals TO tablegate_app;
  `);

  await readyGateway(db);

  expect(rowSecurityWarnings()).toEqual([
    [
      'tablegate: WARNING: 2 exposed relations are not covered by row-level security (enabled and forced); ' +
        'the gateway serves them anyway, and callers may see rows of other tenants through them:',
      '  tables:',
      '    public.column_granted: RLS not enabled',
      '    public.order_totals: materialized view; RLS cannot apply (it holds every row its owner saw at the last REFRESH)',
    ].join('\n'),
  ]);
});
