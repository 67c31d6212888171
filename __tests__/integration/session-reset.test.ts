/**
 * Nothing a request leaves on its pooled connection reaches the next caller (docs/security.md,
 * "What is reset after each request").
 *
 * The gateway gets a host pool of ONE connection, so tenant B's requests run on the very
 * connection that tenant A's function has just changed. The app role has defaults of its own in
 * this database (ALTER ROLE ... IN DATABASE ... SET), unlike the database's (TimeZone UTC) and the
 * server's, so "clean" below means the role's defaults, not merely the server's. The fixture
 * functions are in __tests__/fixtures/092-session-state.sql. Each case runs with prepared
 * statements on and off (the reset statements are named in one, unnamed in the other).
 */
import express from 'express';
import pg from 'pg';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice' });
const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob' });

/** The app role's defaults in this database, set in beforeAll. */
const ROLE_TIME_ZONE = 'America/New_York';
const ROLE_SEARCH_PATH = 'tg_session_ext, public';
/** 2024-01-15 12:00 UTC, as PostgreSQL prints it in the role's zone and in Tokyo. */
const AT_ROLE_ZONE = '2024-01-15T07:00:00-05:00';
const AT_TOKYO = '2024-01-15T21:00:00+09:00';

/** What session_state() reports inside a request of a clean connection. */
const cleanState = {
  time_zone: ROLE_TIME_ZONE,
  custom: 'role-default',
  search_path: '"tg_session", "public"',
  work_mem: '5MB',
  date_style: 'ISO, MDY',
  current_user: 'tablegate_app',
  advisory_locks: 0,
  date_text: '2024-01-15',
  temp_tables: 0,
};

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  // Before any connection of the app role exists: new sessions start from these.
  for (const setting of [
    `TimeZone = '${ROLE_TIME_ZONE}'`,
    `search_path = ${ROLE_SEARCH_PATH}`,
    "app.custom = 'role-default'",
    "work_mem = '5MB'",
  ]) {
    await db.admin.query(`ALTER ROLE tablegate_app IN DATABASE ${db.name} SET ${setting}`);
  }
});
afterAll(async () => {
  await db?.drop();
});

describe.each([
  ['prepared statements', true],
  ['unnamed statements (prepared_statements = false)', false],
])('one pooled connection shared by two tenants, %s', (_name, preparedStatements) => {
  let pool: pg.Pool;
  let gateway: Gateway;
  let app: express.Express;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: db.appUrl, max: 1 });
    gateway = createGateway({ pool, jwtSecret: TEST_JWT_SECRET, schemas: ['tg_session'], preparedStatements });
    await gateway.ready;
    app = express().use('/api', gateway);
  });
  afterAll(async () => {
    await gateway?.close();
    await pool?.end();
  });

  const rpc = (fn: string, token: string, body: unknown = {}, format?: 'binary') => {
    const req = request(app).post(`/api/rpc/${fn}`).set('Authorization', `Bearer ${token}`).send(body as object);
    return format ? req.set('x-gw-result-format', format) : req;
  };
  const stateOf = async (token: string): Promise<unknown> => {
    const res = await rpc('session_state', token);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  /** The connection as the host (or the next pool user) finds it after the gateway gave it back. */
  const connection = async (): Promise<unknown> =>
    (
      await pool.query(
        `SELECT current_setting('TimeZone') AS time_zone, current_setting('search_path') AS search_path,
                current_setting('statement_timeout') AS statement_timeout, current_setting('work_mem') AS work_mem,
                current_setting('app.custom', true) AS custom, current_setting('app.current_tenant_id', true) AS tenant,
                current_setting('DateStyle') AS date_style, current_user::text AS current_user,
                (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS advisory_locks`,
      )
    ).rows[0];
  const cleanConnection = {
    time_zone: ROLE_TIME_ZONE,
    search_path: ROLE_SEARCH_PATH,
    statement_timeout: '0',
    work_mem: '5MB',
    custom: 'role-default',
    tenant: '',
    date_style: 'ISO, MDY',
    current_user: 'tablegate_app',
    advisory_locks: 0,
  };

  /** Everything tenant B reads after tenant A's function ran: all of it at the role's defaults. */
  async function expectCleanForB(): Promise<void> {
    // A custom setting that only the function created still exists on the connection, empty: a
    // placeholder, once created, is reset to '' rather than removed (documented).
    expect(await stateOf(tokenB)).toEqual({ ...cleanState, only_set_by_poison: '' });
    // An unqualified `events` means tg_session.events again, not a temporary table left behind.
    expect((await rpc('event_labels', tokenB)).body).toEqual({ data: 'b' });
    const list = await request(app).get('/api/events').set('Authorization', `Bearer ${tokenB}`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([{ id: 2, tenant_id: TENANT_B, at: AT_ROLE_ZONE, label: 'b' }]);
    for (const format of [undefined, 'binary'] as const) {
      const times = await rpc('event_times', tokenB, {}, format);
      expect([format, times.status, times.body.data]).toEqual([format, 200, [AT_ROLE_ZONE]]);
    }
    expect(await connection()).toEqual(cleanConnection);
  }

  it('starts clean (the role defaults are in force, and the test can see them)', async () => {
    const { only_set_by_poison: neverSet, ...state } = (await stateOf(tokenB)) as Record<string, unknown>;
    expect(state).toEqual(cleanState);
    // NULL on a server connection that never had the setting; '' once an earlier request set and
    // reset it (behind PgBouncer the server connection may have served this file's other run).
    expect([null, '']).toContain(neverSet);
    expect(await connection()).toEqual(cleanConnection);
  });

  it("resets the settings, role, temporary tables and advisory lock a function left, before another tenant's request", async () => {
    const poisoned = await rpc('poison', tokenA, { p_label: 'A' });
    expect(poisoned.status).toBe(200);
    expect(poisoned.body.data).toBe('poisoned by A');
    await expectCleanForB();
  });

  it('resets after a read too (READ ONLY): settings, and the session advisory lock at once', async () => {
    const read = await rpc('lock_in_read', tokenA);
    expect([read.status, read.body]).toEqual([200, { data: 'Asia/Tokyo' }]);
    expect(await connection()).toEqual(cleanConnection);
    await expectCleanForB();
  });

  it('refuses a temporary table in a read (READ ONLY), so no DISCARD TEMP is needed after one', async () => {
    const read = await rpc('temp_in_read', tokenA);
    expect([read.status, read.body.code]).toEqual([403, 'FORBIDDEN']);
    expect(await connection()).toEqual(cleanConnection);
    await expectCleanForB();
  });

  it('leaves nothing when the function changes the session and then fails (the transaction is rolled back)', async () => {
    const failed = await rpc('poison_then_fail', tokenA, { p_label: 'F' });
    expect(failed.status).toBe(400);
    expect(failed.body).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Poisoned, then failed.' });
    await expectCleanForB();
  });

  it('reads the time zone for binary results in the plan statement, before the reset', async () => {
    for (const format of [undefined, 'binary'] as const) {
      const res = await rpc('times_in', tokenA, { zone: 'Asia/Tokyo' }, format);
      expect([format, res.status, res.body.data]).toEqual([format, 200, [AT_TOKYO]]);
    }
    await expectCleanForB();
  });

  it("runs deferred triggers at COMMIT in the caller's context (the context is set again after the reset)", async () => {
    const id = preparedStatements ? 10 : 11;
    const created = await request(app)
      .post('/api/events')
      .set('Authorization', `Bearer ${tokenA}`)
      .send({ id, at: '2024-02-01T00:00:00Z', label: 'deferred' });
    expect(created.status).toBe(201);
    const { rows } = await db.admin.query('SELECT tenant_id, seen_tenant, seen_search_path FROM tg_session.commit_log WHERE event_id = $1', [id]);
    expect(rows).toEqual([{ tenant_id: TENANT_A, seen_tenant: TENANT_A, seen_search_path: '"tg_session", "public"' }]);
    expect(await connection()).toEqual(cleanConnection);
    await db.admin.query('DELETE FROM tg_session.events WHERE id = $1', [id]);
  });

  it("probes a failing batch's rows with the search path, and leaves no advisory lock behind", async () => {
    const base = preparedStatements ? 20 : 30;
    const at = '2024-02-01T00:00:00Z';
    const res = await request(app)
      .post('/api/events')
      .set('Authorization', `Bearer ${tokenA}`)
      .send([
        { id: base, at, label: 'lock' },
        { id: base + 1, at, label: 'fine' },
        { id: base + 2, at, label: 'bad' },
      ]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { row: 2 } });
    // The probes took the trigger's session-level lock again; the reset after them released it.
    expect(await connection()).toEqual(cleanConnection);
    expect((await db.admin.query('SELECT count(*)::int AS n FROM tg_session.events WHERE id >= $1 AND id < $2', [base, base + 10])).rows[0].n).toBe(0);
  });
});
