/**
 * examples/express-app started against a real database (STYLE.md example 8: every example is
 * run by a test, so the docs cannot rot). Checks what the example exists to show: host routes
 * and host middleware live beside the gateway, the middleware can read `res.locals.gateway`,
 * tenants stay isolated, and `gateway.admin` works where the host mounts it.
 */
import request from 'supertest';
import { createApp } from '../../examples/express-app/app';
import { createTestDatabase, signToken, TEST_JWT_SECRET, TENANT_A, TENANT_B } from '../support/test-database';

type Db = Awaited<ReturnType<typeof createTestDatabase>>;
type App = ReturnType<typeof createApp>;

let db: Db;
let example: App;
const logLines: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  example = createApp({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, log: (line) => logLines.push(line) });
  await example.gateway.ready;
});

afterAll(async () => {
  await example?.gateway.close();
  await db?.drop();
});

test('the host route GET /hello answers beside the gateway', async () => {
  const res = await request(example.app).get('/hello').expect(200);
  expect(res.body).toEqual({ message: 'hello from the host app' });
  expect(res.headers['x-tablegate-command']).toBeUndefined();
});

test('GET /api/orders with a tenant A token returns exactly tenant A rows', async () => {
  const { rows } = await db.admin.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE tenant_id = $1', [TENANT_A]);
  const expected = rows[0]!.n;
  expect(expected).toBeGreaterThan(0);

  const res = await request(example.app)
    .get('/api/orders?limit=1000')
    .set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_A, sub: 'user-a' })}`)
    .expect(200);
  const data = res.body.data as { tenant_id: string }[];
  expect(res.body.count).toBe(expected);
  expect(data.length).toBe(expected);
  expect(data.filter((r) => r.tenant_id !== TENANT_A)).toEqual([]);
});

test('host middleware reads res.locals.gateway: x-tablegate-command header and log line', async () => {
  logLines.length = 0;
  const res = await request(example.app)
    .get('/api/orders?limit=2')
    .set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_B, sub: 'user-b' })}`)
    .expect(200);
  expect(res.headers['x-tablegate-command']).toBe('list');
  expect((res.body.data as { tenant_id: string }[]).every((r) => r.tenant_id === TENANT_B)).toBe(true);
  expect(logLines).toHaveLength(1);
  expect(logLines[0]).toMatch(new RegExp(`^GET /api/orders\\?limit=2 200 command=list tenant=${TENANT_B} [0-9.]+ms$`));
});

test('a request the gateway rejects before parsing carries no command', async () => {
  logLines.length = 0;
  const res = await request(example.app).get('/api/orders').expect(401);
  expect(res.body.code).toBe('UNAUTHORIZED');
  expect(res.headers['x-tablegate-command']).toBeUndefined();
  expect(logLines[0]).toMatch(/^GET \/api\/orders 401 command=- tenant=- /);
});

test('gateway.admin mounted at /ops: GET /ops/health/internal is 200 ok', async () => {
  const res = await request(example.app).get('/ops/health/internal').expect(200).expect('Content-Type', /application\/json/);
  expect(res.body.status).toBe('ok');
  expect(res.body.db.reachable).toBe(true);
  expect(res.body.schema.tables).toBeGreaterThan(0);
  // The gateway's routes are not reachable at the host root.
  await request(example.app).get('/health/internal').expect(404);
});
