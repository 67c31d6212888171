/**
 * The typed fetch client (`tablegate/client`, docs/client.md) over real HTTP (a gateway on an
 * ephemeral port, global fetch) against real PostgreSQL as the RLS-bound app role, schema
 * `client_test` (__tests__/fixtures/096-client.sql), two tenants. Each client method is checked
 * for the exact body it resolves to, and tenant B's client never sees or changes tenant A's rows
 * (checked in the database with the admin pool, which bypasses RLS).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createClient, isTablegateClientError, type TablegateClient } from '../../lib/client';
import type { Database } from '../unit/client/types/test-database';
import { tokenA, tokenB, startGatewayApp, stopGatewayApp, type GatewayApp } from '../support/gateway-app';
import { TENANT_A, TENANT_B } from '../support/test-database';

let started: GatewayApp | undefined;
let server: Server;
let baseUrl: string;
let a: TablegateClient<Database>;
let b: TablegateClient<Database>;

beforeAll(async () => {
  started = await startGatewayApp({ schemas: ['client_test'] });
  server = started.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  a = createClient<Database>(baseUrl, { token: tokenA });
  // A token callback, as a browser app refreshing its JWT would pass.
  b = createClient<Database>(baseUrl, { token: async () => tokenB });
});
afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await stopGatewayApp(started);
});

async function adminRows(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await started!.db.admin.query(sql, params)).rows;
}

/** The ok branch of a result, failing the test with the error when there is one. */
function ok<R extends { error: unknown }>(result: R): Exclude<R, { error: Exclude<R['error'], null> }> {
  if (result.error !== null) throw new Error(`expected success, got ${JSON.stringify(result.error)}`);
  return result as Exclude<R, { error: Exclude<R['error'], null> }>;
}

describe('list: select, filters, sort, paging', () => {
  it('select narrows the columns and eq filters: from(orders).select([id,total]).eq(status,paid)', async () => {
    const page = ok(await a.from('orders').select(['id', 'total']).eq('status', 'paid'));
    expect(page).toEqual({ data: [{ id: 1, total: 10.0 }, { id: 3, total: 7.25 }], count: 2, limit: 100, offset: 0, error: null, status: 200 });
    const pageB = ok(await b.from('orders').select(['id', 'total']).eq('status', 'paid'));
    expect(pageB.data).toEqual([{ id: 4, total: 99.0 }]);
  });

  it('tenant B never sees tenant A rows, whatever it asks for', async () => {
    const all = ok(await b.from('orders').select(['id', 'tenant_id']).limit(1000));
    expect(all.data).toEqual([{ id: 4, tenant_id: TENANT_B }, { id: 5, tenant_id: TENANT_B }]);
    expect(ok(await b.from('orders').in('id', [1, 2, 3]).select(['id'])).data).toEqual([]);
    expect(ok(await b.from('customers').select(['name'])).data).toEqual([{ name: 'Bea' }]);
    expect(ok(await b.from('order_lines').select(['product'])).data).toEqual([{ product: 'b-widget' }]);
    expect(ok(await b.from('order_counts').sort('status')).data).toEqual([{ status: 'open', n: 1 }, { status: 'paid', n: 1 }]);
    const aCounts = ok(await a.from('order_counts').sort('status'));
    expect(aCounts.data).toEqual([{ status: 'open', n: 1 }, { status: 'paid', n: 2 }]);
  });

  it('ne, gt, gte, lt, lte, in, like, ilike, isNull, contains and search send the gateway operators', async () => {
    const ids = async (q: PromiseLike<{ data: { id: number }[] | null }>) => (await q).data?.map((r) => r.id);
    const orders = () => a.from('orders').select(['id']);
    expect(await ids(orders().ne('status', 'paid'))).toEqual([2]);
    expect(await ids(orders().gt('total', 10))).toEqual([2]);
    expect(await ids(orders().gte('total', 10))).toEqual([1, 2]);
    expect(await ids(orders().lt('total', 10))).toEqual([3]);
    expect(await ids(orders().lte('total', 10).gte('total', 7.25))).toEqual([1, 3]);
    expect(await ids(orders().in('status', ['open']))).toEqual([2]);
    expect(await ids(orders().in('id', []))).toEqual([]);
    expect(await ids(orders().like('note', 'g*'))).toEqual([1]);
    expect(await ids(orders().ilike('note', 'RUSH'))).toEqual([3]);
    expect(await ids(orders().isNull('note'))).toEqual([2]);
    expect(await ids(orders().isNull('note', false))).toEqual([1, 3]);
    expect(await ids(orders().contains('tags', 'vip'))).toEqual([1]);
    expect(await ids(orders().search('gift'))).toEqual([1]);
    expect(await ids(orders().search('gift', ['note']))).toEqual([1]);
    // Values that need quoting in an `in` list reach PostgreSQL intact.
    expect(await ids(orders().in('note', ['gift', 'a,b', 'say "hi" (x)']))).toEqual([1]);
  });

  it('sort, limit, offset and count(exact)', async () => {
    const page = ok(await a.from('orders').select(['id']).sort('total', 'desc').limit(2).offset(1).count('exact'));
    expect(page).toMatchObject({ data: [{ id: 1 }, { id: 3 }], count: 2, limit: 2, offset: 1, total: 3 });
    expect(page.next_cursor).toBeDefined();
  });

  it('cursor paging: pages() follows next_cursor to the last page, within the tenant', async () => {
    const seen: number[][] = [];
    for await (const page of a.from('orders').select(['id']).sort('total').limit(2).pages()) seen.push(ok(page).data.map((r) => r.id));
    expect(seen).toEqual([[3, 1], [2]]);
    const first = ok(await b.from('orders').select(['id']).limit(1));
    const second = ok(await b.from('orders').select(['id']).limit(1).cursor(first.next_cursor!));
    expect([first.data, second.data]).toEqual([[{ id: 4 }], [{ id: 5 }]]);
  });

  it('distinct returns the distinct values of one column', async () => {
    expect(ok(await a.from('orders').distinct('status')).data).toEqual([{ status: 'open' }, { status: 'paid' }]);
  });

  it('expand: a to-one relation as an object, nested: a to-many one as an array, RLS applied', async () => {
    const page = ok(await a.from('orders').select(['id']).expand(['customer', 'nested:order_lines']).in('id', [1, 2]));
    expect(page.data).toEqual([
      {
        id: 1,
        customer: { id: 1, tenant_id: TENANT_A, name: 'Ann' },
        order_lines: [
          { order_id: 1, line_no: 1, tenant_id: TENANT_A, product: 'widget', qty: 2 },
          { order_id: 1, line_no: 2, tenant_id: TENANT_A, product: 'gadget', qty: 1 },
        ],
      },
      { id: 2, customer: { id: 2, tenant_id: TENANT_A, name: 'Abe' }, order_lines: [] },
    ]);
  });
});

describe('get', () => {
  it('reads one row by key, with select and expand; a composite key', async () => {
    expect(ok(await a.from('orders').get(1, { select: ['id', 'status'], expand: ['customer'] }))).toEqual({
      data: { id: 1, status: 'paid', customer: { id: 1, tenant_id: TENANT_A, name: 'Ann' } },
      error: null,
      status: 200,
    });
    expect(ok(await a.from('order_lines').get([1, 2], { select: ['product'] })).data).toEqual({ product: 'gadget' });
    expect(ok(await a.from('orders').get(1)).data).toEqual({ id: 1, tenant_id: TENANT_A, customer_id: 1, status: 'paid', total: 10.0, note: 'gift', tags: ['vip'], meta: { channel: 'web' } });
  });

  it("another tenant's row is NOT_FOUND, as a typed error with the gateway's body", async () => {
    const res = await b.from('orders').get(1);
    expect(res.data).toBeNull();
    expect(res.status).toBe(404);
    expect(isTablegateClientError(res.error)).toBe(true);
    expect(res.error).toMatchObject({ name: 'TablegateClientError', code: 'NOT_FOUND', status: 404, message: 'No visible row of `orders` has that key.' });
    expect(res.error!.requestId).toMatch(/.+/);
  });
});

describe('writes', () => {
  it('insert one row (returning) and a batch; tenant_id defaults to the caller, B cannot see it', async () => {
    const one = ok(await a.from('orders').insert({ customer_id: 2, status: 'open', total: 5, note: 'client-one' }, { returning: ['id', 'tenant_id', 'note'] }));
    expect(one).toEqual({ data: { id: expect.any(Number), tenant_id: TENANT_A, note: 'client-one' }, error: null, status: 201 });
    const batch = ok(await a.from('order_lines').insert([{ order_id: 2, line_no: 1, product: 'p1', qty: 1 }, { order_id: 2, line_no: 2, product: 'p2', qty: 3 }], { returning: ['line_no', 'tenant_id'] }));
    expect(batch).toEqual({ data: [{ line_no: 1, tenant_id: TENANT_A }, { line_no: 2, tenant_id: TENANT_A }], count: 2, error: null, status: 201 });
    expect((await b.from('orders').get(one.data.id)).error?.code).toBe('NOT_FOUND');
    expect(await adminRows('SELECT tenant_id FROM client_test.orders WHERE id = $1', [one.data.id])).toEqual([{ tenant_id: TENANT_A }]);
  });

  it('upsert updates the conflicting row of the caller', async () => {
    const res = ok(await a.from('customers').upsert({ id: 2, name: 'Abe Updated' }, { onConflict: ['id'], returning: ['id', 'name'] }));
    expect(res.data).toEqual({ id: 2, name: 'Abe Updated' });
    // Tenant B's upsert on A's key cannot touch A's row.
    const denied = await b.from('customers').upsert({ id: 1, name: 'stolen' });
    expect(denied.error?.code).toBe('FORBIDDEN');
    expect(await adminRows('SELECT name FROM client_test.customers WHERE id = 1')).toEqual([{ name: 'Ann' }]);
  });

  it("update changes the caller's row; another tenant's row is NOT_FOUND and unchanged", async () => {
    expect(ok(await a.from('orders').update(2, { status: 'paid', note: 'now paid' }, { returning: ['id', 'status', 'note'] })).data).toEqual({ id: 2, status: 'paid', note: 'now paid' });
    const denied = await b.from('orders').update(1, { note: 'by B' });
    expect(denied).toMatchObject({ data: null, status: 404, error: { code: 'NOT_FOUND' } });
    expect(await adminRows('SELECT note FROM client_test.orders WHERE id = 1')).toEqual([{ note: 'gift' }]);
  });

  it("delete: 204 without returning, the row with it; another tenant's row stays", async () => {
    expect(await a.from('order_lines').delete([2, 2])).toEqual({ data: null, error: null, status: 204 });
    expect(ok(await a.from('order_lines').delete([2, 1], { returning: ['product'] })).data).toEqual({ product: 'p1' });
    expect((await b.from('order_lines').delete([1, 1])).error?.code).toBe('NOT_FOUND');
    expect(await adminRows('SELECT count(*)::int AS n FROM client_test.order_lines WHERE order_id = 1')).toEqual([{ n: 2 }]);
  });
});

describe('rpc', () => {
  it('calls a function with named arguments, as the caller', async () => {
    const placed = ok(await b.rpc('place_order', { customer_id: 3, note: 'via rpc' }));
    expect(placed.data).toMatchObject({ tenant_id: TENANT_B, customer_id: 3, status: 'open', note: 'via rpc', total: 0 });
    expect(ok(await a.rpc('order_total', { order_id: 1 })).data).toBe(10.0);
    // A's function call cannot read B's order: RLS inside the function.
    expect(ok(await a.rpc('order_total', { order_id: 4 })).data).toBeNull();
    expect(ok(await b.rpc('open_count')).data).toBe(2);
  });
});

describe('errors', () => {
  // The compiler rejects these calls; casts stand in for untyped JavaScript callers.
  const untyped = () => createClient(baseUrl, { token: tokenA });

  it('a wrong column is UNKNOWN_COLUMN with the hint', async () => {
    const res = await untyped().from('orders').eq('stauts', 'paid');
    expect(res.error?.toJSON()).toEqual({
      code: 'UNKNOWN_COLUMN',
      message: 'Table `orders` has no column `stauts` (in a filter).',
      details: { table: 'orders', column: 'stauts', in: 'a filter' },
      hint: 'Did you mean `status`?',
    });
    expect(res.status).toBe(400);
  });

  it('a check violation is VALIDATION_ERROR with details; a write to a read-only view is METHOD_NOT_ALLOWED', async () => {
    const res = await a.from('order_lines').insert({ order_id: 1, line_no: 9, product: 'x', qty: 0 });
    expect(res.error).toMatchObject({ code: 'VALIDATION_ERROR', status: 400, details: { sqlstate: '23514' } });
    const view = await untyped().from('order_counts').insert({ status: 'open', n: 1 });
    expect(view.error).toMatchObject({ code: 'METHOD_NOT_ALLOWED', status: 405 });
  });

  it('no token is UNAUTHORIZED; a closed port is NETWORK_ERROR; neither rejects', async () => {
    const anonymous = await createClient<Database>(baseUrl).from('orders');
    expect(anonymous.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    const closed = await createClient<Database>('http://127.0.0.1:1/api', { token: tokenA }).from('orders');
    expect(closed.error).toMatchObject({ code: 'NETWORK_ERROR', status: 0 });
  });
});

describe('batch and updateMany (docs/writing.md)', () => {
  it('client.batch runs the operations in one transaction, with references, and a failure writes nothing', async () => {
    const res = ok(
      await a.batch([
        { method: 'POST', path: '/orders', body: { total: 3, note: 'client-batch' } },
        { method: 'POST', path: '/order_lines', body: { order_id: { $ref: '0.id' }, line_no: 1, product: 'p', qty: 1 } },
      ]),
    );
    expect(res.data.map((d) => d.status)).toEqual([201, 201]);
    const failed = await a.batch([
      { method: 'POST', path: '/orders', body: { total: 3, note: 'client-batch-failed' } },
      { method: 'POST', path: '/order_lines', body: { order_id: { $ref: '0.id' }, line_no: 1, product: 'p', qty: 0 } },
    ]);
    expect(failed.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { operation: 1 } });
    expect(await adminRows('SELECT 1 FROM client_test.orders WHERE note = $1', ['client-batch-failed'])).toEqual([]);
  });

  it("updateMany gives each row its own values; another tenant's row is skipped with missing: 'ignore'", async () => {
    const [mine, theirs] = await Promise.all([
      adminRows('SELECT id FROM client_test.orders WHERE tenant_id = $1 ORDER BY id LIMIT 2', [TENANT_A]),
      adminRows('SELECT id, note FROM client_test.orders WHERE tenant_id = $1 ORDER BY id LIMIT 1', [TENANT_B]),
    ]);
    const res = ok(
      await a.from('orders').updateMany(
        [
          { id: mine[0]!.id as number, note: 'many-1' },
          { id: theirs[0]!.id as number, note: 'hijack' },
          { id: mine[1]!.id as number, note: 'many-2' },
        ],
        { returning: ['id', 'note'], missing: 'ignore' },
      ),
    );
    expect(res.data.map((r) => r.note)).toEqual(['many-1', 'many-2']);
    expect(res.missing).toEqual([1]);
    expect(await adminRows('SELECT note FROM client_test.orders WHERE id = $1', [theirs[0]!.id])).toEqual([{ note: theirs[0]!.note }]);
  });
});

describe('sort by a related column and nested inserts (issue 29)', () => {
  it("sort('customer.name') orders the rows by their customer's name, in one request", async () => {
    const page = ok(await a.from('orders').select(['id', 'customer_id']).sort('customer.name', 'desc').sort('id').limit(100));
    expect(page.data.length).toBeGreaterThan(1);
    const names = await adminRows('SELECT o.id, c.name FROM client_test.orders o LEFT JOIN client_test.customers c ON c.id = o.customer_id WHERE o.tenant_id = $1 ORDER BY c.name DESC NULLS FIRST, o.id', [TENANT_A]);
    expect(page.data.map((r) => r.id)).toEqual(names.map((r) => r.id));
    expect(a.from('orders').sort('customer.name', 'desc').toPath()).toBe('/orders?sort=-customer.name');
  });

  it('insert with related rows under a relation name is a nested insert: the order and its lines, the tree answered', async () => {
    const res = await a.from('orders').insert({ customer_id: 1, total: 4, note: 'client-nested', order_lines: [{ line_no: 1, product: 'n1', qty: 2 }, { line_no: 2, product: 'n2', qty: 1 }] } as never);
    expect(res.error).toBeNull();
    expect(res.data).toMatchObject({ total: 4, note: 'client-nested', order_lines: [{ line_no: 1, product: 'n1' }, { line_no: 2, product: 'n2' }] });
    const [order] = await adminRows('SELECT id FROM client_test.orders WHERE note = $1', ['client-nested']);
    expect(await adminRows('SELECT product FROM client_test.order_lines WHERE order_id = $1 ORDER BY line_no', [order!.id])).toEqual([{ product: 'n1' }, { product: 'n2' }]);
    await adminRows('DELETE FROM client_test.order_lines WHERE order_id = $1', [order!.id]);
    await adminRows('DELETE FROM client_test.orders WHERE id = $1', [order!.id]);
  });
});
