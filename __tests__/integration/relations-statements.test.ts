/**
 * No N+1: the statements the gateway sends per request do not grow with the page size, for
 * expand, nested expand, child routes, aggregate and explain.
 *
 * The gateway is given its own pg.Pool whose connections count the extended-protocol messages
 * written to PostgreSQL: every statement PostgreSQL runs needs one Execute message (Simple Query
 * messages are counted too, in case a code path ever used them). One request must be exactly the
 * context statement, the plan statement and the fixed session reset after it (RESET ALL,
 * RESET ROLE, the advisory-lock release; no DISCARD TEMP after a read), whether the page holds 1
 * row or 100.
 */
import express from 'express';
import pg from 'pg';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET } from '../support/test-database';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let pool: pg.Pool;
let gateway: Gateway;
let app: express.Express;
const token = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
const sent = { execute: 0, simpleQuery: 0 };
/** Statements of one read: context, plan, then RESET ALL, RESET ROLE, unlock. */
const perRequest = 5;

/** The part of pg's internal Connection this test wraps. */
interface CountedConnection {
  execute(msg: unknown): void;
  query(text: string): void;
}

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.appUrl, max: 2 });
  // pool.end() resolves before its clients have closed; DROP DATABASE ... WITH (FORCE) in afterAll
  // may then terminate one, and an 'error' event without a listener would fail the file.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    const connection = (client as unknown as { connection: CountedConnection }).connection;
    const execute = connection.execute.bind(connection);
    const query = connection.query.bind(connection);
    connection.execute = (msg) => {
      sent.execute++;
      execute(msg);
    };
    connection.query = (text) => {
      sent.simpleQuery++;
      query(text);
    };
  });
  gateway = createGateway({ pool, jwtSecret: TEST_JWT_SECRET, maxLimit: 500, explainRoles: ['member'] });
  await gateway.ready;
  app = express();
  app.use('/api', gateway);
});

afterAll(async () => {
  await gateway?.close();
  await pool?.end();
  await db?.drop();
});

/** Statements sent for one request, and the number of rows in its page. */
async function statementsFor(path: string): Promise<{ statements: number; rows: number }> {
  sent.execute = 0;
  sent.simpleQuery = 0;
  const res = await request(app).get(path).set('Authorization', `Bearer ${token}`);
  expect(res.status).toBe(200);
  const rows = Array.isArray(res.body.data) ? res.body.data.length : 1;
  return { statements: sent.execute + sent.simpleQuery, rows };
}

describe('statements per request do not grow with the page size (no N+1)', () => {
  it.each([
    ['expand (forward)', '/api/orders?expand=user,tenant&limit='],
    ['expand=nested: (reverse)', '/api/orders?expand=nested:order_items&limit='],
    ['expand and nested together, LATERAL shape', '/api/orders?select=status&sort=-total&expand=user,nested:order_items,nested:order_tags&limit='],
    ['child route with expand', '/api/users/1/orders?expand=user,nested:order_items&limit='],
    ['explain with expand', '/api/orders/_explain?expand=user,nested:order_items&limit='],
  ])('%s', async (_name, path) => {
    const one = await statementsFor(`${path}1`);
    const many = await statementsFor(`${path}100`);
    // The context statement (tenant settings) + the one plan statement + the reset (4).
    expect(one.statements).toBe(perRequest);
    expect(many.statements).toBe(perRequest);
    if (!path.includes('_explain')) {
      expect(one.rows).toBe(1);
      expect(many.rows).toBeGreaterThan(5);
    }
  });

  it('GET /{table}/:id with expand and aggregate are one plan statement too', async () => {
    expect((await statementsFor('/api/orders/7?expand=user,nested:order_items')).statements).toBe(perRequest);
    expect((await statementsFor('/api/orders/aggregate?fn=sum&column=total')).statements).toBe(perRequest);
  });

  it('the counter sees statements (guard against a hook that counts nothing)', async () => {
    sent.execute = 0;
    sent.simpleQuery = 0;
    await pool.query('SELECT 1');
    await pool.query('SELECT $1::int', [1]);
    expect(sent).toEqual({ execute: 1, simpleQuery: 1 });
  });
});
