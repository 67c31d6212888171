/**
 * The integration harness itself: the gateway's database role really is subject to row-level
 * security, and the fixture data is what 020-data.sql documents. If this file fails, the other
 * integration tests prove nothing about tenant isolation.
 */
import pg from 'pg';
import { createTestDatabase, FIXTURE_ROWS, TENANT_A, TENANT_B, TENANT_C, type TestDatabase } from '../support/test-database';

const TENANT_TABLES = Object.keys(FIXTURE_ROWS);
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

let db: TestDatabase;
let app: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  app = new pg.Pool({ connectionString: db.appUrl, max: 2 });
});

afterAll(async () => {
  await app?.end();
  await db?.drop();
});

/** Runs fn as the app role in one transaction, with the tenant set as the gateway sets it. */
async function asTenant<T>(tenant: string | null, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await app.connect();
  try {
    await client.query('BEGIN');
    if (tenant !== null) await client.query("SELECT set_config('app.current_tenant_id', $1, true)", [tenant]);
    return await fn(client);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

async function count(client: pg.ClientBase, table: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quote(table)}`);
  return rows[0]!.n;
}

test('the app role is a plain login role: not superuser, no BYPASSRLS, cannot create databases or roles', async () => {
  const { rows } = await app.query(
    'SELECT current_user AS name, rolsuper, rolbypassrls, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user',
  );
  expect(rows).toEqual([{ name: 'tablegate_app', rolsuper: false, rolbypassrls: false, rolcreatedb: false, rolcreaterole: false }]);
});

test('every tenant table has row-level security enabled and forced, and is owned by the admin', async () => {
  const { rows } = await db.admin.query(
    `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity, pg_get_userbyid(c.relowner) <> 'tablegate_app' AS admin_owned
       FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname = ANY($1)
      ORDER BY c.relname`,
    [TENANT_TABLES],
  );
  expect(rows.map((r) => r.relname)).toEqual([...TENANT_TABLES].sort());
  for (const row of rows) {
    expect(row).toEqual({ relname: row.relname, relrowsecurity: true, relforcerowsecurity: true, admin_owned: true });
  }
});

test('the app role sees only tenant A rows of orders while tenant A is set', async () => {
  const seen = await asTenant(TENANT_A, (client) =>
    client.query<{ tenant_id: string; n: number }>('SELECT tenant_id::text, count(*)::int AS n FROM orders GROUP BY 1'),
  );
  expect(seen.rows).toEqual([{ tenant_id: TENANT_A, n: 120 }]);
  // The other tenants' orders exist: RLS hides them, they are not missing.
  const { rows } = await db.admin.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE tenant_id <> $1', [TENANT_A]);
  expect(rows[0]!.n).toBe(82);
});

test('without a tenant the app role sees no rows, also after a tenant was set and rolled back on the connection', async () => {
  const fresh = new pg.Client({ connectionString: db.appUrl });
  await fresh.connect();
  try {
    // Never set in this session: current_setting(..., true) is NULL.
    expect((await fresh.query('SELECT count(*)::int AS n FROM orders')).rows[0].n).toBe(0);
    await fresh.query('BEGIN');
    await fresh.query("SELECT set_config('app.current_tenant_id', $1, true)", [TENANT_B]);
    expect((await fresh.query('SELECT count(*)::int AS n FROM orders')).rows[0].n).toBe(80);
    await fresh.query('ROLLBACK');
    // Set once, then rolled back: the setting is '' now, which must also mean "no tenant".
    expect((await fresh.query("SELECT current_setting('app.current_tenant_id', true) AS v")).rows[0].v).toBe('');
    for (const table of TENANT_TABLES) {
      expect({ table, n: await count(fresh, table) }).toEqual({ table, n: 0 });
    }
  } finally {
    await fresh.end();
  }
});

test('per tenant, every table holds exactly the rows documented in 020-data.sql', async () => {
  for (const [tenant, key] of [[TENANT_A, 'A'], [TENANT_B, 'B'], [TENANT_C, 'C']] as const) {
    const counts = await asTenant(tenant, async (client) => {
      const out: Record<string, number> = {};
      for (const table of TENANT_TABLES) out[table] = await count(client, table);
      return out;
    });
    const expected = Object.fromEntries(Object.entries(FIXTURE_ROWS).map(([table, perTenant]) => [table, perTenant[key]]));
    expect({ tenant: key, counts }).toEqual({ tenant: key, counts: expected });
  }
});

test('RLS WITH CHECK stops the app role from writing a row for another tenant', async () => {
  await expect(
    asTenant(TENANT_A, (client) =>
      client.query("INSERT INTO audit_log (tenant_id, message) VALUES ($1, 'cross-tenant write')", [TENANT_B]),
    ),
  ).rejects.toMatchObject({ code: '42501' });
});

test('test databases are isolated: a write in one is invisible in another', async () => {
  const other = await createTestDatabase();
  try {
    await db.admin.query("INSERT INTO audit_log (tenant_id, message) VALUES ($1, 'only in the first database')", [TENANT_C]);
    const mine = await db.admin.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1', [TENANT_C]);
    const theirs = await other.admin.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE tenant_id = $1', [TENANT_C]);
    expect([mine.rows[0]!.n, theirs.rows[0]!.n]).toEqual([2, 1]);
  } finally {
    await db.admin.query("DELETE FROM audit_log WHERE message = 'only in the first database'");
    await other.drop();
  }
  const gone = await db.admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [other.name]);
  expect(gone.rowCount).toBe(0);
});
