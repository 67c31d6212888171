/**
 * Identity -> transaction-local context -> RLS, over HTTP against real PostgreSQL.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import type { GatewayOptions } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
const gateways: Gateway[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await db?.drop();
});

async function appWith(options: Partial<GatewayOptions> = {}): Promise<express.Express> {
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, ...options });
  gateways.push(gateway);
  await gateway.ready;
  const app = express();
  app.use('/api', gateway);
  return app;
}

describe('tenant context', () => {
  it('sets tenant, user, agent, is_super_admin, statement_timeout and READ ONLY for a read, transaction-locally', async () => {
    const app = await appWith({ statementTimeoutMs: 1234 });
    const token = signToken({ tenant_id: TENANT_A, user_id: 'alice', agent_id: 'agent-7', operator_id: TENANT_B });
    const res = await request(app).get('/api/session_context').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { tenant_id: TENANT_A, user_id: 'alice', agent_id: 'agent-7', is_super_admin: 'false', statement_timeout: '1234ms', read_only: 'on', db_user: 'tablegate_app' },
    ]);
    // Nothing leaks to the next request on the same pooled connection.
    const anon = signToken({ user_id: 'nobody' });
    const next = await request(app).get('/api/session_context').set('Authorization', `Bearer ${anon}`);
    expect(next.body.data[0]).toMatchObject({ tenant_id: '', user_id: 'nobody', agent_id: '' });
  });

  it('never maps operator_id to the tenant', async () => {
    const app = await appWith();
    const token = signToken({ operator_id: TENANT_A, user_id: 'op' });
    const res = await request(app).get('/api/orders').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });

  it('scopes rows to the tenant by RLS: A and B see disjoint, complete sets', async () => {
    const app = await appWith({ maxLimit: 1000 });
    const counts = await db.admin.query<{ tenant_id: string; n: number }>('SELECT tenant_id::text, count(*)::int AS n FROM orders GROUP BY 1');
    const byTenant = new Map(counts.rows.map((r) => [r.tenant_id, r.n]));
    for (const tenant of [TENANT_A, TENANT_B]) {
      const res = await request(app).get('/api/orders?limit=1000&select=id,tenant_id').set('Authorization', `Bearer ${signToken({ tenant_id: tenant })}`);
      expect(res.body.count).toBe(byTenant.get(tenant));
      expect(new Set(res.body.data.map((r: { tenant_id: string }) => r.tenant_id))).toEqual(new Set([tenant]));
    }
  });

  it('cuts off a statement at statement_timeout_ms with 504 TIMEOUT', async () => {
    const app = await appWith({ statementTimeoutMs: 200 });
    const res = await request(app).get('/api/slow_view').set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_A })}`);
    expect(res.status).toBe(504);
    expect(res.body.code).toBe('TIMEOUT');
  });
});

describe('authentication over HTTP', () => {
  it('answers 401 without credentials when require_auth, and anonymous (no rows) when not', async () => {
    const strict = await appWith();
    const res = await request(strict).get('/api/orders');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(res.body.code).toBe('UNAUTHORIZED');
    const open = await appWith({ requireAuth: false });
    const anon = await request(open).get('/api/orders');
    expect(anon.status).toBe(200);
    expect(anon.body.data).toEqual([]);
  });

  it('rejects a forged, expired or alg:none token with 401 and no fallback to dev headers', async () => {
    const app = await appWith({ devMode: true });
    const forged = signToken({ tenant_id: TENANT_A }, 'another-secret-that-is-long-enough-1234');
    const expired = signToken({ tenant_id: TENANT_A, exp: Math.floor(Date.now() / 1000) - 3600 });
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ tenant_id: TENANT_A })).toString('base64url')}.`;
    for (const token of [forged, expired, none, 'garbage']) {
      const res = await request(app).get('/api/orders').set('Authorization', `Bearer ${token}`).set('x-tenant-id', TENANT_A).set('x-user-id', 'dev');
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
      expect(JSON.stringify(res.body)).not.toMatch(/jwt expired|invalid signature|jwt malformed/);
    }
  });

  it('honours dev headers only in dev mode (loopback connection)', async () => {
    const dev = await appWith({ devMode: true });
    const res = await request(dev).get('/api/session_context').set('x-tenant-id', TENANT_B).set('x-user-id', 'dev-user').set('x-user-role', 'admin');
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toMatchObject({ tenant_id: TENANT_B, user_id: 'dev-user' });
    const prod = await appWith({ devMode: false });
    const denied = await request(prod).get('/api/session_context').set('x-tenant-id', TENANT_B).set('x-user-id', 'dev-user');
    expect(denied.status).toBe(401);
  });
});

describe('database role safety', () => {
  it('rejects ready for a superuser role', async () => {
    const gateway = createGateway({ databaseUrl: db.adminUrl, jwtSecret: TEST_JWT_SECRET });
    gateways.push(gateway);
    await expect(gateway.ready).rejects.toThrow(/superuser/);
    const app = express().use('/api', gateway);
    const res = await request(app).get('/api/orders').set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_A })}`);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('rejects ready for a BYPASSRLS role, unless allow_rls_bypass_role', async () => {
    await db.admin.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tablegate_bypass') THEN CREATE ROLE tablegate_bypass LOGIN BYPASSRLS PASSWORD 'bypass'; END IF; END $$`);
    await db.admin.query(`GRANT CONNECT ON DATABASE "${db.name}" TO tablegate_bypass`);
    const url = new URL(db.appUrl);
    url.username = 'tablegate_bypass';
    url.password = 'bypass';
    const strict = createGateway({ databaseUrl: url.toString(), jwtSecret: TEST_JWT_SECRET });
    gateways.push(strict);
    await expect(strict.ready).rejects.toThrow(/BYPASSRLS/);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const allowed = createGateway({ databaseUrl: url.toString(), jwtSecret: TEST_JWT_SECRET, allowRlsBypassRole: true });
    gateways.push(allowed);
    await expect(allowed.ready).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/BYPASSRLS/));
    warn.mockRestore();
  });

  it('answers 503 when the database is unreachable', async () => {
    const gateway = createGateway({ databaseUrl: 'postgres://nobody:x@127.0.0.1:1/none', jwtSecret: TEST_JWT_SECRET, poolConnectionTimeoutMs: 500 });
    gateways.push(gateway);
    await expect(gateway.ready).rejects.toThrow();
    const res = await request(express().use('/api', gateway)).get('/api/orders').set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_A })}`);
    expect(res.status).toBe(503);
  });
});
