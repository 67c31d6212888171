/**
 * The gateway behind a real PgBouncer in pool_mode = transaction (docs/scaling-out.md), with
 * PgBouncers of this file's own (support/pgbouncer.js) in front of the run's PostgreSQL:
 *
 * - no session state passes between tenants through a shared server connection: one server
 *   connection (default_pool_size = 1), two tenants on two gateways, alternating and concurrent,
 *   every `app.*` setting, search_path and statement_timeout checked on every request;
 * - prepared_statements left on behind a PgBouncer that cannot keep them (before 1.21): found at
 *   `ready`, or by the first request that meets a lost statement, and switched to unnamed
 *   statements with one warning; never a 500;
 * - from PgBouncer 1.21, max_prepared_statements keeps them: no warning, statements stay named.
 *
 * The whole integration suite also runs through PgBouncer: the `integration-pgbouncer` projects
 * of jest.config.js (this file runs only in the plain `integration` project).
 */
import express from 'express';
import pg from 'pg';
import request from 'supertest';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { findPgBouncer, PREPARED_STATEMENTS_SINCE, type RunningPgBouncer as PgBouncer, startPgBouncer } from '../support/pgbouncer';
import { describeIfPresent, recordSkip, SETUP_SYSTEM } from '../support/skips';

const found = findPgBouncer();
const withPgBouncer = describeIfPresent('pgbouncer.test.ts (PgBouncer in transaction mode)', [found.missing ?? ''], SETUP_SYSTEM);
const modern = found.missing === undefined && found.versionNum >= PREPARED_STATEMENTS_SINCE;
if (found.missing === undefined && !modern) {
  recordSkip('pgbouncer.test.ts (max_prepared_statements)', `PgBouncer ${found.version} has none (1.21+)`, 'a PgBouncer 1.21 or later');
}

let db: TestDatabase;
const bouncers: PgBouncer[] = [];
const gateways: Gateway[] = [];
const clients: pg.Client[] = [];

beforeAll(async () => {
  if (!found.missing) db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await Promise.all(gateways.map((g) => g.close()));
  await Promise.all(bouncers.map((b) => b.stop()));
  await db?.drop();
});

/** A PgBouncer in transaction mode in front of the test server, with the app role in its auth_file. */
async function pgBouncer(settings: { defaultPoolSize: number; maxPreparedStatements?: number }): Promise<PgBouncer> {
  const bouncer = await startPgBouncer(process.env.TABLEGATE_TEST_ADMIN_URL!, {
    users: [{ user: process.env.TABLEGATE_TEST_APP_USER!, password: process.env.TABLEGATE_TEST_APP_PASSWORD! }],
    poolMode: 'transaction',
    // From 1.21 PgBouncer can keep prepared statements; off unless a test asks, as before 1.21.
    ...(modern ? { maxPreparedStatements: 0 } : {}),
    ...settings,
  });
  bouncers.push(bouncer);
  return bouncer;
}

async function appOn(bouncer: PgBouncer, options: Partial<GatewayOptions> = {}): Promise<express.Express> {
  const gateway = createGateway({ databaseUrl: bouncer.rewrite(db.appUrl), jwtSecret: TEST_JWT_SECRET, schemas: ['pooler'], ...options });
  gateways.push(gateway);
  await gateway.ready;
  return express().use('/api', gateway);
}

/** A plain client of the app role through `bouncer`, closed in afterAll. */
async function clientOn(bouncer: PgBouncer): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: bouncer.rewrite(db.appUrl) });
  clients.push(client);
  await client.connect();
  return client;
}

interface SessionState {
  tenant_id: string;
  user_id: string;
  agent_id: string;
  is_super_admin: string;
  search_path: string;
  statement_timeout: string;
  leaked: string | null;
  backend_pid: number;
}

/** One caller: a gateway app, its token, and the settings every one of its requests must see. */
interface Caller {
  readonly app: express.Express;
  readonly token: string;
  readonly expected: Omit<SessionState, 'backend_pid' | 'leaked' | 'search_path'>;
}

async function sessionState(caller: Caller): Promise<SessionState> {
  const res = await request(caller.app).post('/api/rpc/session_state').set('Authorization', `Bearer ${caller.token}`);
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(1);
  return res.body.data[0] as SessionState;
}

/** The caller's own settings, and the server defaults for everything the gateway does not set. */
function expectOwn(state: SessionState, caller: Caller, defaultSearchPath: string): void {
  // A custom setting never set in the session reads as NULL, and as '' once RESET.
  expect({ ...state, leaked: state.leaked ?? '', backend_pid: 0 }).toEqual({ ...caller.expected, search_path: defaultSearchPath, leaked: '', backend_pid: 0 });
}

/** Two tenants, each on its own gateway (own statement_timeout), both through `bouncer`. */
async function twoTenants(bouncer: PgBouncer, options: Partial<GatewayOptions> = {}): Promise<[Caller, Caller]> {
  const a: Caller = {
    app: await appOn(bouncer, { statementTimeoutMs: 1111, ...options }),
    token: signToken({ tenant_id: TENANT_A, user_id: 'alice', agent_id: 'agent-a' }),
    expected: { tenant_id: TENANT_A, user_id: 'alice', agent_id: 'agent-a', is_super_admin: 'false', statement_timeout: '1111ms' },
  };
  const b: Caller = {
    app: await appOn(bouncer, { statementTimeoutMs: 2222, ...options }),
    token: signToken({ tenant_id: TENANT_B, user_id: 'bob', agent_id: 'agent-b' }),
    expected: { tenant_id: TENANT_B, user_id: 'bob', agent_id: 'agent-b', is_super_admin: 'false', statement_timeout: '2222ms' },
  };
  return [a, b];
}

withPgBouncer('one server connection shared by two tenants (default_pool_size = 1)', () => {
  let single: PgBouncer;
  // Every request's transaction sets search_path to the exposed schemas, then extra_search_path
  // (docs/rpc.md), whatever a previous transaction on the server connection left.
  const defaultSearchPath = '"pooler", "public"';
  beforeAll(async () => {
    single = await pgBouncer({ defaultPoolSize: 1 });
  });

  for (const preparedStatements of [false, true]) {
    it(`every request sees only its caller's settings, alternating and concurrent (prepared_statements = ${preparedStatements})`, async () => {
      const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
      try {
        const [a, b] = await twoTenants(single, { preparedStatements });
        const pids = new Set<number>();
        // Alternating: each request takes the server connection the other tenant just used.
        for (let i = 0; i < 10; i++) {
          for (const caller of [a, b]) {
            const state = await sessionState(caller);
            expectOwn(state, caller, defaultSearchPath);
            pids.add(state.backend_pid);
          }
        }
        // Concurrent: 40 requests queue for the one server connection in PgBouncer.
        const callers = Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b));
        const states = await Promise.all(callers.map((caller) => sessionState(caller)));
        states.forEach((state, i) => {
          expectOwn(state, callers[i]!, defaultSearchPath);
          pids.add(state.backend_pid);
        });
        expect(pids.size).toBe(1);
      } finally {
        warn.mockRestore();
      }
    });
  }

  it("a function's session-level app.* and statement_timeout do not reach the next tenant", async () => {
    const [a, b] = await twoTenants(single, { preparedStatements: false });
    const left = await request(a.app).post('/api/rpc/leave_state').set('Authorization', `Bearer ${a.token}`).send({ note: 'from tenant A' });
    expect(left.status).toBe(200);
    const state = await sessionState(b);
    expect(state.backend_pid).toBe(left.body.data);
    // The gateway sets these in every transaction, so a session-level value never shows.
    expect({ tenant_id: state.tenant_id, user_id: state.user_id, agent_id: state.agent_id, is_super_admin: state.is_super_admin, statement_timeout: state.statement_timeout }).toEqual(b.expected);
  });

  // Settings the gateway does not set itself (any other app.*) are reset at the end of every
  // request's own transaction (RESET ALL, docs/security.md), so nothing a previous tenant's
  // function left reaches the next tenant through the shared server connection.
  it("a function's session-level search_path and other app.* settings do not reach the next tenant", async () => {
    const [a, b] = await twoTenants(single, { preparedStatements: false });
    const left = await request(a.app).post('/api/rpc/leave_state').set('Authorization', `Bearer ${a.token}`).send({ note: 'from tenant A' });
    expect(left.status).toBe(200);
    const state = await sessionState(b);
    expect(state.backend_pid).toBe(left.body.data);
    expectOwn(state, b, defaultSearchPath);
  });
});

withPgBouncer('prepared_statements left on behind PgBouncer without max_prepared_statements (before 1.21)', () => {
  const warnings = (warn: jest.SpyInstance): string[] => warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes('named prepared statements'));

  it('is found at ready and switched to unnamed statements with one warning; no request fails', async () => {
    const pooled = await pgBouncer({ defaultPoolSize: 4 });
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const [a, b] = await twoTenants(pooled); // prepared_statements: the default, true
      expect(warnings(warn)).toHaveLength(2); // one per gateway, at ready
      expect(warnings(warn)[0]).toMatch(/^tablegate: WARNING: named prepared statements do not last from one transaction to the next .*Set the option `preparedStatements: false`/);
      // Reads, a write and a call of each tenant, concurrently, several rounds.
      const requests = [];
      for (let i = 0; i < 15; i++) {
        for (const caller of [a, b]) {
          const own = caller === a ? TENANT_A : TENANT_B;
          requests.push(
            request(caller.app).get('/api/notes?sort=id').set('Authorization', `Bearer ${caller.token}`).then((res) => {
              expect(res.status).toBe(200);
              expect(res.body.data.length).toBeGreaterThan(0);
              expect(res.body.data.every((n: { tenant_id: string }) => n.tenant_id === own)).toBe(true);
            }),
            request(caller.app).get(`/api/notes/${caller === a ? 1 : 4}`).set('Authorization', `Bearer ${caller.token}`).then((res) => {
              expect(res.status).toBe(200);
              expect(res.body.data.tenant_id).toBe(own);
            }),
            request(caller.app).post('/api/notes').set('Authorization', `Bearer ${caller.token}`).send({ body: `round ${i}` }).then((res) => {
              expect(res.status).toBe(201);
              expect(res.body.data.tenant_id).toBe(own);
            }),
            sessionState(caller).then((state) => expect(state.tenant_id).toBe(own)),
          );
        }
      }
      await Promise.all(requests);
      expect(warnings(warn)).toHaveLength(2);
    } finally {
      warn.mockRestore();
    }
  });

  it('a statement lost at request time ("already exists") is sent again unnamed, with one warning', async () => {
    // One server connection; gateways of one pooled connection each cannot prove anything at
    // ready, so they keep named statements until a request meets another client's statement.
    const single = await pgBouncer({ defaultPoolSize: 1 });
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const [a, b] = await twoTenants(single, { poolMax: 1 });
      expect(warnings(warn)).toEqual([]);
      expect((await sessionState(a)).tenant_id).toBe(TENANT_A); // prepares the read context statement on the server connection
      expect(warnings(warn)).toEqual([]);
      // b's client prepares the same name on the same server connection: 42P05.
      expect((await sessionState(b)).tenant_id).toBe(TENANT_B);
      expect(warnings(warn)).toHaveLength(1);
      expect(warnings(warn)[0]).toMatch(/\(a request failed with "prepared statement "tablegate_context_ro_v[0-9]+" already exists"\)/);
      for (let i = 0; i < 5; i++) {
        expect((await sessionState(a)).tenant_id).toBe(TENANT_A);
        expect((await sessionState(b)).tenant_id).toBe(TENANT_B);
      }
      expect(warnings(warn)).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });

  it('a statement lost at request time ("does not exist") is sent again unnamed, with one warning', async () => {
    const two = await pgBouncer({ defaultPoolSize: 2 });
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const a: Caller = {
        app: await appOn(two, { poolMax: 1 }),
        token: signToken({ tenant_id: TENANT_A, user_id: 'alice' }),
        expected: { tenant_id: TENANT_A, user_id: 'alice', agent_id: '', is_super_admin: 'false', statement_timeout: '30s' },
      };
      expect((await sessionState(a)).tenant_id).toBe(TENANT_A); // named statements prepared on server connection S
      // Another client takes S (PgBouncer hands out the most recently used server connection
      // first) and keeps it in a transaction, so a's next transaction gets another one.
      const other = await clientOn(two);
      await other.query('BEGIN');
      const held = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const state = await sessionState(a);
      expect(state.tenant_id).toBe(TENANT_A);
      expect(state.backend_pid).not.toBe(held);
      await other.query('COMMIT');
      expect(warnings(warn)).toHaveLength(1);
      expect(warnings(warn)[0]).toMatch(/\(a request failed with "prepared statement "tablegate_\w+" does not exist"\)/);
    } finally {
      warn.mockRestore();
    }
  });
});

(modern ? withPgBouncer : describe.skip)('PgBouncer 1.21+ with max_prepared_statements', () => {
  it('keeps named statements: no warning, and every request answers', async () => {
    const bouncer = await pgBouncer({ defaultPoolSize: 2, maxPreparedStatements: 100 });
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const [a, b] = await twoTenants(bouncer);
      const states = await Promise.all(Array.from({ length: 40 }, (_, i) => sessionState(i % 2 ? a : b)));
      states.forEach((state, i) => expect(state.tenant_id).toBe(i % 2 ? TENANT_A : TENANT_B));
      expect(warn.mock.calls.filter((c) => String(c[0]).includes('named prepared statements'))).toEqual([]);
      // The server session holds prepared statements, under PgBouncer's names, not the gateway's.
      const names = (await request(a.app).post('/api/rpc/prepared_statements').set('Authorization', `Bearer ${a.token}`)).body.data as string[];
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => n.startsWith('tablegate_'))).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });
});
