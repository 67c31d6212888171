/**
 * POST /{table}: single rows, batches, upserts, returning, exact numbers and database error
 * mapping, over HTTP against real PostgreSQL as the non-superuser app role with RLS forced. Every
 * outcome is checked in the database directly with the admin pool (which bypasses RLS), so a
 * write that leaked into another tenant or half-applied shows up.
 */
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { tokenA, tokenB, useGatewayApp } from '../support/gateway-app';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let gateway: Gateway;
let app: express.Express;

useGatewayApp({ maxBatchSize: 50 }, (started) => ({ db, gateway, app } = started));

const post = (path: string, body: unknown, token = tokenA) =>
  request(app).post(path).set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));

async function adminRows(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await db.admin.query(sql, params)).rows;
}
const itemCount = async () => Number((await adminRows('SELECT count(*) AS n FROM write_items'))[0]!.n);

describe('POST /{table}: one row', () => {
  it('inserts one object and answers 201 {"data":row} with every column, defaults and generated values filled in', async () => {
    const res = await post('/api/write_items', { sku: 'one-1', name: 'Widget', qty: 4 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ sku: 'one-1', name: 'Widget', qty: 4, qty_doubled: 8, tenant_id: TENANT_A, big: null, note: null });
    expect(Object.keys(res.body.data).sort()).toEqual(['amount', 'big', 'id', 'name', 'note', 'qty', 'qty_doubled', 'sku', 'tenant_id']);
    const rows = await adminRows('SELECT tenant_id, name FROM write_items WHERE sku = $1', ['one-1']);
    expect(rows).toEqual([{ tenant_id: TENANT_A, name: 'Widget' }]);
  });

  it('returns only the returning columns', async () => {
    const res = await post('/api/write_items?returning=sku,qty_doubled', { sku: 'one-2', name: 'Gadget', qty: 1 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ data: { sku: 'one-2', qty_doubled: 2 } });
  });

  it('gives columns missing from the object their default', async () => {
    const res = await post('/api/write_items?returning=qty', { sku: 'one-3', name: 'Default qty' });
    expect(res.body).toEqual({ data: { qty: 0 } });
  });

  it('inserts {} with every column at its default', async () => {
    const res = await post('/api/write_kv?returning=key', {});
    // key has no default: NOT NULL violation, mapped to 400 with the column named.
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { sqlstate: '23502', column: 'key' } });
  });

  it('keeps a bigint above 2^53 and a numeric(30,10) exact in both directions', async () => {
    const raw = '{"sku":"exact-1","name":"Exact","big":9223372036854775807,"amount":12345678901234567890.0123456789}';
    const res = await post('/api/write_items?returning=big,amount', raw);
    expect(res.status).toBe(201);
    // The response text, not a JS-parsed number: supertest's JSON.parse would round.
    expect(res.text).toBe('{"data":{"big":9223372036854775807,"amount":12345678901234567890.0123456789}}');
    const rows = await adminRows("SELECT big::text, amount::text FROM write_items WHERE sku = 'exact-1'");
    expect(rows).toEqual([{ big: '9223372036854775807', amount: '12345678901234567890.0123456789' }]);
  });
});

describe('POST /{table}: batches', () => {
  it('inserts an array in one statement and answers {"data":[rows],"count":n} in body order', async () => {
    const body = [3, 1, 2].map((i) => ({ sku: `batch-${i}`, name: `Batch ${i}`, qty: i }));
    const res = await post('/api/write_items?returning=sku,qty', body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ data: body.map(({ sku, qty }) => ({ sku, qty })), count: 3 });
    const rows = await adminRows("SELECT sku, tenant_id FROM write_items WHERE sku LIKE 'batch-%' ORDER BY sku");
    expect(rows).toEqual(['batch-1', 'batch-2', 'batch-3'].map((sku) => ({ sku, tenant_id: TENANT_A })));
  });

  it('stores a key missing from one row of a batch as NULL (not the column default)', async () => {
    const res = await post('/api/write_items?returning=sku,note', [
      { sku: 'miss-1', name: 'M1', note: 'has a note' },
      { sku: 'miss-2', name: 'M2' },
    ]);
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual([{ sku: 'miss-1', note: 'has a note' }, { sku: 'miss-2', note: null }]);
  });

  it('is atomic: one failing row inserts nothing', async () => {
    const before = await itemCount();
    const res = await post('/api/write_items', [
      { sku: 'atomic-1', name: 'ok', qty: 1 },
      { sku: 'atomic-2', name: 'bad', qty: -1 },
    ]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { sqlstate: '23514', constraint: 'write_items_qty_check', row: 1 } });
    expect(await itemCount()).toBe(before);
    expect(await adminRows("SELECT 1 FROM write_items WHERE sku LIKE 'atomic-%'")).toEqual([]);
  });

  it('names the failing row for an unknown key, before any SQL', async () => {
    const res = await post('/api/write_items', [{ sku: 'u-1', name: 'ok' }, { sku: 'u-2', name: 'ok' }, { sku: 'u-3', nmae: 'typo' }]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'UNKNOWN_COLUMN', details: { row: 2, column: 'nmae' }, hint: 'Did you mean `name`?' });
    expect(await adminRows("SELECT 1 FROM write_items WHERE sku LIKE 'u-%'")).toEqual([]);
  });

  it('refuses a batch over max_batch_size with 413 and writes nothing', async () => {
    const before = await itemCount();
    const res = await post('/api/write_items', Array.from({ length: 51 }, (_, i) => ({ sku: `big-${i}`, name: 'x' })));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { rows: 51, max_batch_size: 50 } });
    expect(await itemCount()).toBe(before);
  });

  it('answers an empty array with 201 and no rows', async () => {
    const res = await post('/api/write_items', []);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ data: [], count: 0 });
  });
});

describe('POST /{table}: a batch row that PostgreSQL rejects is named by its index', () => {
  const rows = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ sku: `${prefix}-${i}`, name: `row ${i}`, qty: i }));

  it.each([
    ['a check violation', 37, { qty: -5 }, 400, { code: 'VALIDATION_ERROR', details: { sqlstate: '23514', constraint: 'write_items_qty_check' } }],
    ['a not-null violation', 0, { name: null }, 400, { code: 'VALIDATION_ERROR', details: { sqlstate: '23502', column: 'name' } }],
    ['a bad literal', 49, { qty: 'many' }, 400, { code: 'VALIDATION_ERROR', details: { sqlstate: '22P02' } }],
    ['a unique violation against an existing row', 12, { sku: 'a-1' }, 409, { code: 'CONFLICT', details: { sqlstate: '23505', constraint: 'write_items_sku_key' } }],
    ['a unique violation inside the batch', 21, { sku: 'probe-dup-3' }, 409, { code: 'CONFLICT', details: { sqlstate: '23505' } }],
    ['a row for another tenant (RLS WITH CHECK)', 8, { tenant_id: TENANT_B }, 403, { code: 'FORBIDDEN', details: { sqlstate: '42501' } }],
  ] as const)('%s at row %i of 50: details.row names it, and nothing is written', async (_what, index, change, status, body) => {
    const before = await itemCount();
    // Every row names tenant_id when one does: a key missing from a batch row is NULL.
    const batch: Record<string, unknown>[] = rows(50, 'probe-dup').map((r) => ('tenant_id' in change ? { ...r, tenant_id: TENANT_A } : r));
    batch[index] = { ...batch[index], ...change };
    const res = await post('/api/write_items', batch);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ ...body, details: { ...body.details, row: index } });
    expect(res.body.message).toMatch(new RegExp(`^Row ${index} of the batch: `));
    expect(await itemCount()).toBe(before);
    expect(await adminRows("SELECT 1 FROM write_items WHERE sku LIKE 'probe-dup-%'")).toEqual([]);
  });

  it('names the second of two rows proposing one upsert key (21000)', async () => {
    const res = await post('/api/write_kv', [{ key: 'p-0' }, { key: 'p-1' }, { key: 'p-2' }, { key: 'p-1' }, { key: 'p-4' }]).set('X-Upsert', 'true');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'CONFLICT', details: { sqlstate: '21000', row: 3 } });
    expect(await adminRows("SELECT 1 FROM write_kv WHERE key LIKE 'p-%'")).toEqual([]);
  });

  it('leaves the tenant context and the pool clean after probing (the next request succeeds as its caller)', async () => {
    await post('/api/write_items', [{ sku: 'clean-0', name: 'x' }, { sku: 'clean-1', name: 'x', qty: -1 }]);
    const res = await post('/api/write_items?returning=sku,tenant_id', [{ sku: 'clean-b', name: 'x' }], tokenB);
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual([{ sku: 'clean-b', tenant_id: TENANT_B }]);
  });
});

describe('POST /{table}: database errors', () => {
  it('maps a unique violation to 409 CONFLICT naming the constraint, and writes nothing', async () => {
    const res = await post('/api/write_items', [{ sku: 'dup-ok', name: 'fine' }, { sku: 'a-1', name: 'dup' }]);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'CONFLICT', details: { sqlstate: '23505', constraint: 'write_items_sku_key' } });
    expect(await adminRows("SELECT 1 FROM write_items WHERE sku = 'dup-ok'")).toEqual([]);
  });

  it('maps a foreign-key violation to 409', async () => {
    const res = await post('/api/order_items', { order_id: 999999, product: 'ghost', qty: 1, price: 1 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'CONFLICT', details: { sqlstate: '23503' } });
  });

  it('maps a not-null violation to 400 naming the column', async () => {
    const res = await post('/api/write_items', { sku: 'nn-1', name: null });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { sqlstate: '23502', column: 'name' } });
  });

  it('maps a bad literal to 400 VALIDATION_ERROR (never 500)', async () => {
    for (const bad of ['"qty":"many"', '"qty":1.5', '"big":1e400', '"qty":{"nested":true}', '"big":"99999999999999999999"', '"amount":"NaN-ish"']) {
      const res = await post('/api/write_items', `{"sku":"lit-1","name":"x",${bad}}`);
      expect([bad, res.status, res.body.code]).toEqual([bad, 400, 'VALIDATION_ERROR']);
    }
    expect(await adminRows("SELECT 1 FROM write_items WHERE sku = 'lit-1'")).toEqual([]);
  });

  it('refuses generated and identity ALWAYS columns before SQL', async () => {
    for (const [column, value] of [['qty_doubled', 2], ['id', 5]] as const) {
      const res = await post('/api/write_items', [{ sku: 'gen-0', name: 'x' }, { sku: 'gen-1', name: 'x', [column]: value }]);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { column, row: 1 } });
    }
  });

  it('maps a statement timeout to 504 and writes nothing', async () => {
    const slow = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, statementTimeoutMs: 200 });
    try {
      await slow.ready;
      const slowApp = express().use('/api', slow);
      const res = await request(slowApp).post('/api/write_items').set('Authorization', `Bearer ${tokenA}`).send({ sku: 'slow-1', name: 'x', note: 'sleep' });
      expect(res.status).toBe(504);
      expect(res.body.code).toBe('TIMEOUT');
      expect(await adminRows("SELECT 1 FROM write_items WHERE sku = 'slow-1'")).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});

describe('POST /{table}: tenants and RLS', () => {
  it('refuses a row for another tenant with 403 and writes nothing', async () => {
    const res = await post('/api/write_items', [{ sku: 'mine', name: 'ok' }, { sku: 'theirs', name: 'x', tenant_id: TENANT_B }]);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(await adminRows("SELECT 1 FROM write_items WHERE sku IN ('mine', 'theirs')")).toEqual([]);
  });

  it('writes rows for the caller tenant only (tenant B sees its row, A does not)', async () => {
    const res = await post('/api/write_items?returning=tenant_id', { sku: 'b-new', name: 'B row' }, tokenB);
    expect(res.body).toEqual({ data: { tenant_id: TENANT_B } });
    const a = await request(app).get('/api/write_items?sku=b-new').set('Authorization', `Bearer ${tokenA}`);
    expect(a.body.data).toEqual([]);
  });
});

describe('POST /{table}: upsert', () => {
  it('X-Upsert + X-On-Conflict updates the provided non-conflict columns of the existing row', async () => {
    const res = await post('/api/write_items?returning=sku,name,qty', { sku: 'a-2', name: 'Bucket v2' }).set('X-Upsert', 'true').set('X-On-Conflict', 'sku');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ data: { sku: 'a-2', name: 'Bucket v2', qty: 5 } });
    expect(await adminRows("SELECT name, qty FROM write_items WHERE sku = 'a-2'")).toEqual([{ name: 'Bucket v2', qty: 5 }]);
  });

  it('defaults the conflict target to the primary key and inserts rows that do not exist', async () => {
    const res = await post('/api/write_kv?returning=key,value', [{ key: 'a-key', value: 'changed' }, { key: 'a-new', value: 'new' }]).set('X-Upsert', 'true');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ data: [{ key: 'a-key', value: 'changed' }, { key: 'a-new', value: 'new' }], count: 2 });
  });

  it('accepts Prefer: resolution=merge-duplicates and resolution=ignore-duplicates', async () => {
    const merged = await post('/api/write_kv?returning=value', { key: 'a-key', value: 'merged' }).set('Prefer', 'return=representation, resolution=merge-duplicates');
    expect(merged.body).toEqual({ data: { value: 'merged' } });
    const ignored = await post('/api/write_kv?returning=value', [{ key: 'a-key', value: 'ignored' }, { key: 'a-ign', value: 'new' }]).set('Prefer', 'resolution=ignore-duplicates');
    expect(ignored.status).toBe(201);
    expect(ignored.body).toEqual({ data: [{ value: 'new' }], count: 1 });
    expect(await adminRows("SELECT value FROM write_kv WHERE key = 'a-key'")).toEqual([{ value: 'merged' }]);
  });

  it('an upsert hitting another tenant row is 403 FORBIDDEN and leaves that row unchanged', async () => {
    const res = await post('/api/write_kv', { key: 'a-key', value: 'stolen by B' }, tokenB).set('X-Upsert', 'true');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(await adminRows("SELECT tenant_id, value FROM write_kv WHERE key = 'a-key'")).toEqual([{ tenant_id: TENANT_A, value: 'merged' }]);
  });

  it('ignore-duplicates skips another tenant row silently and leaves it unchanged', async () => {
    const res = await post('/api/write_kv?returning=key', { key: 'a-key', value: 'B tried' }, tokenB).set('Prefer', 'resolution=ignore-duplicates');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ data: null });
    expect(await adminRows("SELECT tenant_id, value FROM write_kv WHERE key = 'a-key'")).toEqual([{ tenant_id: TENANT_A, value: 'merged' }]);
  });

  it('refuses conflict columns that are not a unique constraint, naming those that exist', async () => {
    const res = await post('/api/write_items', { sku: 'x', name: 'x' }).set('X-Upsert', 'true').set('X-On-Conflict', 'name');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('PARSE_ERROR');
    expect(res.body.details.constraints.map((c: { name: string }) => c.name).sort()).toEqual(['write_items_pkey', 'write_items_sku_key']);
  });

  it('maps a batch upsert naming one key twice to 409, writing nothing', async () => {
    const res = await post('/api/write_kv', [{ key: 'twice', value: '1' }, { key: 'twice', value: '2' }]).set('X-Upsert', 'true');
    expect(res.status).toBe(409);
    expect(res.body.details.sqlstate).toBe('21000');
    expect(await adminRows("SELECT 1 FROM write_kv WHERE key = 'twice'")).toEqual([]);
  });
});
