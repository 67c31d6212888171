/**
 * Hints name only what the caller's access policy lets it see (docs/security.md, "Names a caller
 * cannot see"; docs/openapi.md, "What a caller sees"): "did you mean" suggestions for columns,
 * tables, relations and body keys in both dialects, and the 404 reload hint for a table added
 * after start, never name a column the policy hides or a table `default_decision = "deny"` hides.
 * Two tenants, RLS forced, over HTTP against real PostgreSQL.
 */
import express from 'express';
import request from 'supertest';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { gatewayFactory } from '../support/gateway-app';
import { startPostgrestApp, type PostgrestApp } from '../support/postgrest-app';

const POLICY = {
  default_decision: 'deny',
  tables: {
    orders: { operations: ['read', 'create'], read_columns: { except: ['notes'] }, write_columns: { only: ['user_id', 'status', 'total'] } },
    users: { operations: ['read'], read_columns: { only: ['id', 'tenant_id', 'name'] } },
  },
};
/** The same over the PostgREST dialect's fixture tables: authors.secret and shelves hidden. */
const PGRST_POLICY = {
  default_decision: 'deny',
  tables: {
    authors: { operations: ['read'], read_columns: { except: ['secret'] } },
    books: { operations: ['read'] },
  },
};

const tokens = [signToken({ tenant_id: TENANT_A, user_id: 'u1', role: 'member' }), signToken({ tenant_id: TENANT_B, user_id: 'u2', role: 'member' })];

let db: TestDatabase;
let pgrst: PostgrestApp;
const apps = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET }));
let app: express.Express;
let open: express.Express;

beforeAll(async () => {
  db = await createTestDatabase();
  app = await apps.appWith({ access: { policy: POLICY } });
  open = await apps.appWith();
  pgrst = await startPostgrestApp({ access: { policy: PGRST_POLICY } }, db);
  // Added after the gateways started: not in their schema cache.
  await db.admin.query('CREATE TABLE public.payroll_late (tenant_id uuid, amount int); ALTER TABLE public.payroll_late ENABLE ROW LEVEL SECURITY; ALTER TABLE public.payroll_late FORCE ROW LEVEL SECURITY; GRANT SELECT ON public.payroll_late TO tablegate_app');
});

afterAll(async () => {
  await pgrst?.close();
  await apps.closeAll();
  await db?.drop();
});

/** The whole response body: a hidden name must appear nowhere in it. */
const text = (res: { body: unknown; text: string }): string => res.text || JSON.stringify(res.body);

describe.each(tokens.map((t, i) => [i === 0 ? 'tenant A' : 'tenant B', t] as const))('default dialect, %s', (_name, token) => {
  const get = (path: string) => request(app).get(path).set('Authorization', `Bearer ${token}`);

  it('a column the policy hides is never suggested (select, sort, filter)', async () => {
    for (const path of ['/api/orders?select=id,note', '/api/orders?sort=note', '/api/orders?note=eq.x', '/api/users?select=emai']) {
      const res = await get(path);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('UNKNOWN_COLUMN');
      expect(text(res)).not.toMatch(/notes|email/);
    }
    // A visible column still is.
    const near = await get('/api/orders?sort=totl');
    expect(near.body.hint).toBe('Did you mean `total`?');
  });

  it('a body key: the hidden column is not suggested', async () => {
    const res = await request(app).post('/api/orders').set('Authorization', `Bearer ${token}`).send({ note: 'x' });
    expect(res.status).toBe(400);
    expect(text(res)).not.toContain('notes');
  });

  it('a table default_decision = "deny" hides is never suggested; an allowed one is', async () => {
    const res = await get('/api/audit_lo');
    expect(res.status).toBe(404);
    expect(text(res)).not.toContain('audit_log');
    expect((await get('/api/order')).body.hint).toBe('Did you mean `orders`?');
  });

  it('a relation into a hidden table is never suggested', async () => {
    const res = await get('/api/orders?expand=order_item');
    expect(res.status).toBe(400);
    expect(text(res)).not.toContain('order_items');
  });

  it('the reload hint is not given for a table the policy hides', async () => {
    const res = await get('/api/payroll_late');
    expect(res.status).toBe(404);
    expect(res.body.hint).toBeUndefined();
    // Without a policy the same request gets it: the table does exist.
    const seen = await request(open).get('/api/payroll_late').set('Authorization', `Bearer ${token}`);
    expect(seen.body.hint).toMatch(/reload/);
  });
});

describe.each(tokens.map((t, i) => [i === 0 ? 'tenant A' : 'tenant B', t] as const))('PostgREST dialect, %s', (_name, token) => {
  const get = (path: string) => fetch(`${pgrst.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });

  it('a column the policy hides is never suggested', async () => {
    for (const path of ['/authors?select=id,secre', '/authors?secre=eq.x', '/authors?order=secre']) {
      const res = await get(path);
      expect(res.status).toBe(400);
      expect(await res.text()).not.toContain('secret');
    }
    const near = (await (await get('/authors?select=nam')).json()) as { hint: string };
    expect(near.hint).toBe('Perhaps you meant to reference the column "authors.name".');
  });

  it('a table default_decision = "deny" hides is never suggested', async () => {
    const res = await get('/shelve');
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('shelves');
    const near = (await (await get('/book')).json()) as { hint: string };
    expect(near.hint).toBe("Perhaps you meant the table 'pgrst.books'");
  });
});
