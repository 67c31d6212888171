/**
 * search_path like PostgREST (docs/configuration.md `extra_search_path`, docs/rpc.md): every
 * request's transaction sets search_path to the exposed `schemas`, then `extra_search_path`
 * (default ["public"]), so functions that name their own schema's tables and types without
 * qualifying them work without touching the role's settings.
 *
 * The app role has a search_path default of its own in this database (tg_session_ext, public),
 * which the request's value replaces rather than extends. Fixtures: __tests__/fixtures/092-session-state.sql.
 */
import request from 'supertest';
import { createGateway } from '../../lib';
import { GatewayConfigError } from '../../lib/errors/gateway-config-error';
import { gatewayFactory, tokenA } from '../support/gateway-app';
import { createTestDatabase, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

const ODD_SCHEMA = 'Tg-Ext "Odd", Schema';

let db: TestDatabase;
const apps = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['tg_session'] }));

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query(`ALTER ROLE tablegate_app IN DATABASE ${db.name} SET search_path = tg_session_ext, public`);
});
afterAll(async () => {
  await apps.closeAll();
  await db?.drop();
});

const call = (app: Parameters<typeof request>[0], fn: string, body: unknown = {}) =>
  request(app).post(`/api/rpc/${fn}`).set('Authorization', `Bearer ${tokenA}`).send(body as object);

describe('the default extra_search_path (["public"])', () => {
  let app: Awaited<ReturnType<typeof apps.appWith>>;
  beforeAll(async () => {
    app = await apps.appWith();
  });

  it('sets search_path to the exposed schemas, then public, quoted', async () => {
    const res = await call(app, 'session_state');
    expect(res.status).toBe(200);
    expect(res.body.data.search_path).toBe('"tg_session", "public"');
  });

  it("resolves a function's unqualified table and type of its own exposed schema", async () => {
    // mood_of counts the caller's rows of `events` (1 under RLS) and returns a `mood`.
    expect((await call(app, 'mood_of', { n: 5 })).body).toEqual({ data: 'calm' });
    expect((await call(app, 'mood_of', { n: 1 })).body).toEqual({ data: 'tense' });
  });

  it('resolves unqualified names of public (the default extra schema)', async () => {
    expect((await call(app, 'tenant_names')).body).toEqual({ data: 'Acme Corp' });
  });

  it("does not search schemas that are neither exposed nor extra (the role's own default is replaced)", async () => {
    const res = await call(app, 'greet', { who: 'alice' });
    // shout() lives in tg_session_ext: "function shout(text) does not exist" inside greet.
    // Raised inside the function's body: the function failed (docs/errors.md, FUNCTION_FAILED).
    expect([res.status, res.body.code]).toEqual([500, 'FUNCTION_FAILED']);
    expect(res.body.details).toMatchObject({ sqlstate: '42883', source: 'function', function: 'greet' });
  });

  it('reads argument types at discovery under the same search_path, so a shadowed name keeps its schema', async () => {
    // tg_session.level and tg_session_ext.level both exist; level_name takes the second.
    const res = await call(app, 'level_name', { l: 'ext-only' });
    expect([res.status, res.body]).toEqual([200, { data: 'ext-only' }]);
    const contracts = await request(app).get('/api/_rpc/contracts').set('Authorization', `Bearer ${tokenA}`);
    const entry = contracts.body.data.find((f: { name: string }) => f.name === 'level_name');
    expect(entry.args).toEqual([{ name: 'l', type: 'tg_session_ext.level', has_default: false, variadic: false }]);
  });
});

describe('a custom extra_search_path', () => {
  it('searches the listed schemas, in order, with names that only work quoted', async () => {
    const app = await apps.appWith({ extraSearchPath: ['tg_session_ext', ODD_SCHEMA] });
    expect((await call(app, 'session_state')).body.data.search_path).toBe('"tg_session", "tg_session_ext", "Tg-Ext ""Odd"", Schema"');
    expect((await call(app, 'greet', { who: 'alice' })).body).toEqual({ data: 'HELLO ALICE!' });
    expect((await call(app, 'murmur', { who: 'Alice' })).body).toEqual({ data: 'hello alice...' });
    // public is no longer searched: `tenants` is unknown inside the function.
    const res = await call(app, 'tenant_names');
    expect([res.status, res.body.code, res.body.details]).toEqual([500, 'FUNCTION_FAILED', { sqlstate: '42P01', source: 'function', function: 'tenant_names' }]);
  });

  it('may be empty: only the exposed schemas', async () => {
    const app = await apps.appWith({ extraSearchPath: [] });
    expect((await call(app, 'session_state')).body.data.search_path).toBe('"tg_session"');
    expect((await call(app, 'mood_of', { n: 5 })).body).toEqual({ data: 'calm' });
  });

  it('is refused at createGateway when a name is not a schema name PostgreSQL would keep', () => {
    for (const bad of ['', ' public', 'x'.repeat(64), 'a\nb']) {
      let error: unknown;
      try {
        createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, extraSearchPath: ['public', bad] });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(GatewayConfigError);
      expect((error as GatewayConfigError).key).toBe('extraSearchPath');
    }
  });
});
