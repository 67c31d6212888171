/**
 * A list's prepared statement runs on PostgreSQL's cached generic plan instead of being planned
 * again on every request (docs/architecture.md, "Page size in the text"): LIMIT and the offset of
 * the first pages are literals, so the generic plan costs what a custom one does and
 * plan_cache_mode = auto picks it after five executions. Seen from inside the gateway's only
 * connection (a host pool of one) through pg_prepared_statements (generic_plans: PostgreSQL 14+).
 *
 * The tables live in a schema of this file's own, in its own database, with enough rows (40,000
 * events over two tenants) that a tenth of them costs more than a page: on the small shared
 * fixtures both shapes get the generic plan, and the difference would not show.
 */
import express from 'express';
import pg from 'pg';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { describeFrom } from '../support/server-version';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: pg.Pool;
let gateway: Gateway;
let app: express.Express;
const token = signToken({ tenant_id: TENANT_A });

beforeAll(async () => {
  db = await createTestDatabase();
  const tenant = "tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid";
  await db.admin.query(`
    CREATE SCHEMA plan_cache;
    CREATE TABLE plan_cache.events (id bigint PRIMARY KEY, tenant_id uuid NOT NULL, kind text NOT NULL, at timestamptz NOT NULL);
    INSERT INTO plan_cache.events
      SELECT i, CASE WHEN i % 2 = 0 THEN '${TENANT_A}'::uuid ELSE '${TENANT_B}'::uuid END, (ARRAY['a', 'b', 'c'])[i % 3 + 1], timestamptz '2024-01-01' + i * interval '1 minute'
      FROM generate_series(1, 40000) AS i;
    CREATE TABLE plan_cache.details (id bigint PRIMARY KEY, tenant_id uuid NOT NULL, event_id bigint NOT NULL REFERENCES plan_cache.events (id), note text);
    INSERT INTO plan_cache.details SELECT i, e.tenant_id, e.id, 'note ' || i FROM generate_series(1, 40000) AS i JOIN plan_cache.events e ON e.id = i;
    CREATE INDEX ON plan_cache.events (tenant_id, kind, id);
    CREATE INDEX ON plan_cache.details (event_id);
    ALTER TABLE plan_cache.events ENABLE ROW LEVEL SECURITY;
    ALTER TABLE plan_cache.events FORCE ROW LEVEL SECURITY;
    CREATE POLICY tenant_isolation ON plan_cache.events USING (${tenant});
    ALTER TABLE plan_cache.details ENABLE ROW LEVEL SECURITY;
    ALTER TABLE plan_cache.details FORCE ROW LEVEL SECURITY;
    CREATE POLICY tenant_isolation ON plan_cache.details USING (${tenant});
    GRANT USAGE ON SCHEMA plan_cache TO tablegate_app;
    GRANT SELECT ON plan_cache.events, plan_cache.details TO tablegate_app;
    ANALYZE plan_cache.events;
    ANALYZE plan_cache.details;
  `);
  pool = new pg.Pool({ connectionString: db.appUrl, max: 1 });
  gateway = createGateway({ pool, jwtSecret: TEST_JWT_SECRET, schemas: ['plan_cache'] });
  await gateway.ready;
  app = express().use('/api', gateway);
});
afterAll(async () => {
  await gateway?.close();
  await pool?.end();
  await db?.drop();
});

interface Prepared {
  statement: string;
  generic_plans: string;
  custom_plans: string;
}

/** The gateway's prepared plan statements whose text contains `marker`, on its one connection. */
async function preparedWith(marker: string): Promise<Prepared[]> {
  const { rows } = await pool.query<Prepared>(
    "SELECT statement, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name LIKE 'tablegate_q%' AND strpos(statement, $1) > 0",
    [marker],
  );
  return rows;
}

const get = (path: string) => request(app).get(path).set('Authorization', `Bearer ${token}`);

describeFrom(140000, 'pg_prepared_statements.generic_plans')('list plan cache', () => {
  it('runs a list with expansions on one cached generic plan once it was used five times', async () => {
    const kinds = ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c', 'a'];
    for (const kind of kinds) {
      const res = await get(`/api/events?kind=${kind}&limit=3&offset=3&expand=nested:details`);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(3);
      expect(res.body.data[0].details).toHaveLength(1);
      expect(res.body.data.every((e: { tenant_id: string; kind: string }) => e.tenant_id === TENANT_A && e.kind === kind)).toBe(true);
    }
    const [statement, ...others] = await preparedWith('"details"');
    expect(others).toEqual([]);
    // The first five executions are custom plans; PostgreSQL then compares costs and keeps the generic one.
    expect({ custom: Number(statement!.custom_plans), generic: Number(statement!.generic_plans) }).toEqual({ custom: 5, generic: kinds.length - 5 });
    expect(statement!.statement).toContain(' LIMIT 3 OFFSET 3) AS _q');
  });

  it('would re-plan on every request with LIMIT and OFFSET as parameters (why they are literals)', async () => {
    const [ours] = await preparedWith('"details"');
    // LIMIT and OFFSET become the next two parameters after the statement's own ($1 the kind, then
    // any the compiler adds, such as the response-size marker, bound as NULL here).
    const own = Math.max(...[...ours!.statement.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    const text = ours!.statement.replace(' LIMIT 3 OFFSET 3) AS _q', ` LIMIT $${own + 1} OFFSET $${own + 2}) AS _q`);
    const others = Array.from({ length: own - 1 }, () => 'NULL').join(', ');
    expect(text).not.toBe(ours!.statement);
    const client = await pool.connect();
    try {
      await client.query('BEGIN READ ONLY');
      await client.query("SELECT set_config('app.current_tenant_id', $1, true)", [TENANT_A]);
      await client.query(`PREPARE bound_page AS ${text}`);
      for (let i = 0; i < 10; i++) await client.query(`EXECUTE bound_page('${['a', 'b', 'c'][i % 3]}', ${others ? `${others}, ` : ''}3, 3)`);
      const { rows } = await client.query<Prepared>("SELECT generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name = 'bound_page'");
      expect(rows).toEqual([{ generic_plans: '0', custom_plans: '10' }]);
    } finally {
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE bound_page');
      client.release();
    }
  });

  it('keeps deep offsets a parameter, so paging far does not make a statement per page', async () => {
    for (const offset of [60, 63, 90]) {
      const res = await get(`/api/events?select=id&limit=3&offset=${offset}&sort=at`);
      expect(res.status).toBe(200);
    }
    const deep = await preparedWith('ORDER BY _t."at"');
    expect(deep).toHaveLength(1);
    expect(deep[0]!.statement).toMatch(/ LIMIT 3 OFFSET \$\d+\) AS _p(\)|$)/);
  });
});
