/**
 * Schema reload on DDL (docs/scaling-out.md): with the event trigger of
 * `tablegate install-reload-trigger` in the database, a running gateway sees CREATE TABLE,
 * ALTER TABLE ... ADD COLUMN and DROP TABLE within 2 s, and nobody calls reloadSchema(); a burst
 * of DDL costs a bounded number of reloads; the LISTEN connection comes back after it is killed;
 * and with LISTEN off, `schema_poll_s` does the same job.
 *
 * DROP is watched through /health/internal, not the data route: a request for a dropped table
 * would itself trigger the older drift reload and hide whether the DDL reload worked.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { reloadTriggerStatements } from '../../lib/schema/reload-trigger-sql';
import { gatewayFactory, tokenA, tokenB } from '../support/gateway-app';
import { createTestDatabase, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
const gateways = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['reload'] }));

beforeAll(async () => {
  db = await createTestDatabase();
  // As `tablegate install-reload-trigger` does (tested through the CLI in many-instances.test.ts).
  const client = await db.admin.connect();
  try {
    await client.query('BEGIN');
    for (const statement of reloadTriggerStatements('tablegate_reload')) await client.query(statement);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
});
afterAll(async () => {
  await gateways.closeAll();
  await db?.drop();
});

interface Started {
  readonly app: express.Express;
  readonly gateway: Gateway;
}

async function start(options: Partial<GatewayOptions> = {}): Promise<Started> {
  const gateway = gateways.track(createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['reload'], ...options }));
  await gateway.ready;
  return { gateway, app: express().use('/api', gateway).use(gateway.admin) };
}

const get = (app: express.Express, path: string, token = tokenA) => request(app).get(path).set('Authorization', `Bearer ${token}`);

/** Milliseconds until `probe` holds (polled every 20 ms); fails after `limitMs`. */
async function msUntil(probe: () => Promise<boolean>, limitMs = 6000): Promise<number> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

async function tablesOf(app: express.Express): Promise<number> {
  const res = await request(app).get('/health/internal');
  return (res.body as { schema: { tables: number } }).schema.tables;
}

/** tablegate_schema_reloads_total{reason, result="ok"} from /metrics. */
async function reloads(app: express.Express, reason: string): Promise<number> {
  const res = await request(app).get('/metrics');
  const match = new RegExp(`^tablegate_schema_reloads_total\\{reason="${reason}",result="ok"\\} (\\d+)$`, 'm').exec(res.text);
  return match ? Number(match[1]) : 0;
}

/** A new table as a migration would create it: RLS enabled and forced, a tenant policy, a grant. */
function createTableSql(name: string): string {
  return `
    CREATE TABLE reload.${name} (id integer PRIMARY KEY, tenant_id uuid NOT NULL, note text);
    ALTER TABLE reload.${name} ENABLE ROW LEVEL SECURITY;
    ALTER TABLE reload.${name} FORCE ROW LEVEL SECURITY;
    CREATE POLICY tenant_isolation ON reload.${name}
      USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
    GRANT SELECT ON reload.${name} TO tablegate_app;
    INSERT INTO reload.${name} VALUES (1, '${TENANT_A}', 'a1'), (2, '${TENANT_B}', 'b2'), (3, '${TENANT_A}', 'a3');`;
}

describe('reload on DDL through LISTEN (reload_listen, the default)', () => {
  let app: express.Express;
  beforeAll(async () => {
    ({ app } = await start());
  });

  it('serves a table created by CREATE TABLE within 2 s, with RLS applied', async () => {
    expect((await get(app, '/api/fresh')).status).toBe(404);
    await db.admin.query(createTableSql('fresh')); // one transaction: one notification at commit
    const ms = await msUntil(async () => (await get(app, '/api/fresh')).status === 200);
    expect(ms).toBeLessThan(2000);
    const a = await get(app, '/api/fresh?select=id,note');
    expect(a.body.data).toEqual([{ id: 1, note: 'a1' }, { id: 3, note: 'a3' }]);
    const b = await get(app, '/api/fresh?select=id,note', tokenB);
    expect(b.body.data).toEqual([{ id: 2, note: 'b2' }]);
  });

  it('serves a column added by ALTER TABLE ... ADD COLUMN within 2 s', async () => {
    const before = await get(app, '/api/items?select=id,extra&limit=1');
    expect([before.status, before.body.code]).toEqual([400, 'UNKNOWN_COLUMN']);
    await db.admin.query("ALTER TABLE reload.items ADD COLUMN extra text NOT NULL DEFAULT 'x'");
    const ms = await msUntil(async () => (await get(app, '/api/items?select=id,extra&limit=1')).status === 200);
    expect(ms).toBeLessThan(2000);
    expect((await get(app, '/api/items?select=id,extra&limit=1')).body.data).toEqual([{ id: 1, extra: 'x' }]);
  });

  it('forgets a table removed by DROP TABLE within 2 s: the next request is a plain 404', async () => {
    await db.admin.query(createTableSql('doomed'));
    await msUntil(async () => (await get(app, '/api/doomed')).status === 200);
    const tables = await tablesOf(app);
    await db.admin.query('DROP TABLE reload.doomed');
    const ms = await msUntil(async () => (await tablesOf(app)) === tables - 1);
    expect(ms).toBeLessThan(2000);
    const res = await get(app, '/api/doomed');
    expect(res.status).toBe(404);
    // Not the drift path ("The table is no longer available."): the cache already knew.
    expect(res.body.hint ?? '').not.toMatch(/schema changed since discovery/);
  });

  it('coalesces a burst of 50 DDL transactions into a few reloads', async () => {
    const tables = await tablesOf(app);
    const before = await reloads(app, 'notify');
    // 50 transactions, each committing (and notifying) on its own, sent in one round trip.
    const burst = Array.from({ length: 50 }, (_, i) => `BEGIN; CREATE TABLE reload.burst_${i} (id int PRIMARY KEY); COMMIT;`).join('\n');
    await db.admin.query(burst);
    const ms = await msUntil(async () => (await tablesOf(app)) === tables + 50);
    expect(ms).toBeLessThan(2000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // any follow-up reload has run
    const burstReloads = (await reloads(app, 'notify')) - before;
    expect(burstReloads).toBeGreaterThanOrEqual(1);
    expect(burstReloads).toBeLessThanOrEqual(5);
  });

  it('does not reload for DDL on temporary objects', async () => {
    const before = await reloads(app, 'notify');
    await db.admin.query('CREATE TEMP TABLE scratch (id int); ALTER TABLE scratch ADD COLUMN x int; DROP TABLE scratch;');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await reloads(app, 'notify')).toBe(before);
  });

  it('reconnects after the LISTEN connection is killed, reloads, and keeps seeing DDL', async () => {
    const before = await reloads(app, 'reconnect');
    const killed = await db.admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tablegate-reload'");
    expect(killed.rowCount).toBe(1);
    await msUntil(async () => (await reloads(app, 'reconnect')) === before + 1);
    await db.admin.query(createTableSql('after_reconnect'));
    const ms = await msUntil(async () => (await get(app, '/api/after_reconnect')).status === 200);
    expect(ms).toBeLessThan(2000);
  });
});

describe('atomic reload', () => {
  it('a request keeps the schema it started with while a reload replaces it; the next one sees the new schema', async () => {
    const seen: unknown[] = [];
    let gateway: Gateway | undefined;
    const started = await start({
      stages: {
        // Between parse/compile (done with the request's schema) and execute: change the table
        // and reload, as a LISTEN notification would.
        execute: async (ctx, execute) => {
          seen.push(ctx.schema);
          if (seen.length === 1) {
            await db.admin.query('ALTER TABLE reload.items ADD COLUMN during_request int NOT NULL DEFAULT 5');
            await gateway!.reloadSchema();
          }
          return execute(ctx);
        },
      },
    });
    gateway = started.gateway;
    const first = await get(started.app, '/api/items?limit=1');
    const second = await get(started.app, '/api/items?limit=1');
    expect(first.status).toBe(200);
    expect(Object.keys(first.body.data[0])).not.toContain('during_request');
    expect(second.body.data[0]).toMatchObject({ id: 1, during_request: 5 });
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
  });
});

describe('LISTEN connection settings', () => {
  it('opens the LISTEN connection to reload_database_url when it is given', async () => {
    const { app } = await start({ reloadDatabaseUrl: db.adminUrl, reloadChannel: 'tablegate_reload' });
    const { rows } = await db.admin.query("SELECT usename FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tablegate-reload' ORDER BY backend_start DESC LIMIT 1");
    expect(rows).toEqual([{ usename: new URL(db.adminUrl).username }]);
    await db.admin.query(createTableSql('via_direct_url'));
    expect(await msUntil(async () => (await get(app, '/api/via_direct_url')).status === 200)).toBeLessThan(2000);
  });

  it('makes ready reject, naming the fix, when the LISTEN connection cannot be opened', async () => {
    const gateway = gateways.track(createGateway({
      databaseUrl: db.appUrl,
      jwtSecret: TEST_JWT_SECRET,
      schemas: ['reload'],
      reloadDatabaseUrl: 'postgres://nobody:secret-password@127.0.0.1:1/none',
    }));
    const error = await gateway.ready.then(() => undefined, (e: unknown) => e as Error);
    expect(error?.message).toMatch(/cannot LISTEN for schema changes on channel tablegate_reload .*reload_database_url.*reload_listen = false/);
    expect(error?.message).not.toContain('secret-password');
  });

  it('opens no LISTEN connection with reload_listen = false', async () => {
    const count = async () => Number((await db.admin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tablegate-reload'")).rows[0].n);
    const before = await count();
    await start({ reloadListen: false });
    expect(await count()).toBe(before);
  });
});

describe('reload by polling the catalog (schema_poll_s, reload_listen = false)', () => {
  let app: express.Express;
  beforeAll(async () => {
    ({ app } = await start({ reloadListen: false, schemaPollS: 1 }));
  });

  it('sees CREATE TABLE, ADD COLUMN and DROP TABLE within 2 s each', async () => {
    const polls = await reloads(app, 'poll');
    await db.admin.query(createTableSql('polled'));
    expect(await msUntil(async () => (await get(app, '/api/polled')).status === 200)).toBeLessThan(2000);

    await db.admin.query('ALTER TABLE reload.polled ADD COLUMN added int NOT NULL DEFAULT 7');
    expect(await msUntil(async () => (await get(app, '/api/polled?select=added&limit=1')).status === 200)).toBeLessThan(2000);

    const tables = await tablesOf(app);
    await db.admin.query('DROP TABLE reload.polled');
    expect(await msUntil(async () => (await tablesOf(app)) === tables - 1)).toBeLessThan(2000);
    // One reload per change (a fourth only if a poll lands while a reload is still running).
    expect((await reloads(app, 'poll')) - polls).toBeGreaterThanOrEqual(3);
    expect((await reloads(app, 'poll')) - polls).toBeLessThanOrEqual(4);
  });

  it('does not reload while nothing changes, even when rows are written and vacuumed', async () => {
    const polls = await reloads(app, 'poll');
    await db.admin.query("INSERT INTO reload.items (id, tenant_id, label) VALUES (100, '" + TENANT_A + "', 'new')");
    await db.admin.query('VACUUM ANALYZE reload.items');
    await new Promise((resolve) => setTimeout(resolve, 2200));
    expect(await reloads(app, 'poll')).toBe(polls);
  });
});
