/**
 * POST (single, batch, upsert), PATCH and DELETE over the `kinds` schema
 * (__tests__/fixtures/050-kinds.sql): every type of the fixture written through JSON, on the table,
 * the partitioned table, one of its partitions and the auto-updatable view, as the RLS-bound app
 * role. Every answer is compared with what a superuser reads back from the database, and every
 * bad value must be a 400 that wrote nothing.
 */
import express from 'express';
import request from 'supertest';
import { createTestDatabase, TENANT_A, TENANT_B } from '../support/test-database';
import { tokenA, tokenB, useGatewayApp } from '../support/gateway-app';
import { describeFrom } from '../support/server-version';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let app: express.Express;

const send = (method: 'post' | 'patch' | 'delete', path: string, body?: unknown, token = tokenA) => {
  const req = request(app)[method](path).set('Authorization', `Bearer ${token}`);
  return body === undefined ? req : req.set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
};
const enc = encodeURIComponent;

/** A superuser's to_json of the named columns of rows matching `where`, as text (exact digits). */
async function adminJson(table: string, columns: string, where: string, params: unknown[] = []): Promise<string | null> {
  const { rows } = await db.admin.query(`SELECT to_json(r)::text AS j FROM (SELECT ${columns} FROM kinds.${table} WHERE ${where}) AS r`, params);
  return rows.length === 0 ? null : rows[0].j;
}
const adminCount = async (table: string, where: string, params: unknown[] = []) =>
  Number((await db.admin.query(`SELECT count(*) AS n FROM kinds.${table} WHERE ${where}`, params)).rows[0].n);

// Every writable column of kinds.gadgets in its natural JSON form: arrays as arrays (2-D too),
// composites as objects, ranges, money, interval, tsvector and bytea as PostgreSQL input text,
// NaN and infinities as strings. AMOUNT is spliced in as a raw 39-digit JSON number.
const AMOUNT = '12345678901234567890123456789.0123456789';
const fullRow = {
  id: 100,
  name: 'new',
  mood: 'say "hi"',
  moods: ['ok', 'so, so'],
  tags: ['x,y', '{z}', 'NULL', ''],
  nums: [1, 2],
  grid: [[1, 2], [3, 4]],
  oids: [7, 4294967295],
  docs: [{ k: [1, 2] }, 's'],
  pair: { x: 5, label: 'a,(b)"c\\' },
  pairs: [{ x: 1, label: 'p' }, null],
  spot: { x: 'NaN', y: '-Infinity' },
  qty: 9,
  code: 'q',
  bits: '0101',
  short: 'abc',
  scores: [1, 2, 3, 4],
  span: '[3,9)',
  spans: '{[1,2),[4,5)}',
  period: '[2024-01-01T00:00:00Z,2024-02-01T00:00:00Z)',
  periods: '{[2024-01-01T00:00:00Z,2024-02-01T00:00:00Z)}',
  wait: 'P1DT2H',
  price: '12.34',
  words: 'a:1 b:2',
  blob: '\\x00ff',
  amount: 0,
  level: '-Infinity',
  ratio: 'NaN',
};
const fullBody = JSON.stringify(fullRow).replace('"amount":0', `"amount":${AMOUNT}`);

describeFrom(150000, 'the kinds fixture (multiranges, security_invoker views)')('kinds: write routes', () => {
  beforeAll(() => {
    // `ready` warns about the materialized view (asserted in kinds-read.test.ts).
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());
  useGatewayApp({ schemas: ['kinds'] }, (started) => ({ db, app } = started));

  describe('POST /gadgets', () => {
    it('inserts every type from JSON and returns exactly the row a superuser reads back', async () => {
      const res = await send('post', '/api/gadgets', fullBody);
      expect(res.status).toBe(201);
      expect(res.text).toBe(`{"data":${await adminJson('gadgets', '*', 'id = 100')}}`);
      // What was stored is what was sent, checked with SQL literals.
      const checks = await db.admin.query(
        `SELECT tenant_id = $1 AND mood = 'say "hi"' AND moods = ARRAY['ok', 'so, so']::kinds.mood[]
            AND tags = ARRAY['x,y', '{z}', 'NULL', ''] AND grid = ARRAY[[1, 2], [3, 4]] AND oids = '{7,4294967295}'::oid[]
            AND docs = ARRAY['{"k": [1, 2]}', '"s"']::jsonb[]
            AND pair = ROW(5, 'a,(b)"c\\')::kinds.pair AND pairs IS NOT DISTINCT FROM ARRAY[ROW(1, 'p')::kinds.pair, NULL]
            AND spot::text = '(NaN,-Infinity)' AND code = 'q  ' AND bits = B'0101' AND scores = ARRAY[1, 2, 3, 4]
            AND span = int4range(3, 9) AND spans = int4multirange(int4range(1, 2), int4range(4, 5))
            AND period = tstzrange('2024-01-01 00:00+00', '2024-02-01 00:00+00') AND wait = interval '1 day 2 hours'
            AND price = 12.34::money AND words = 'a:1 b:2'::tsvector AND blob = '\\x00ff'::bytea
            AND amount = ${AMOUNT} AND level = '-Infinity' AND ratio = 'NaN'::float8
            AND amount_doubled = 2 * ${AMOUNT} AND name_upper = 'NEW' AS ok
         FROM kinds.gadgets WHERE id = 100`,
        [TENANT_A],
      );
      expect(checks.rows).toEqual([{ ok: true }]);
      expect(res.text).toContain(`"amount":${AMOUNT}`);
    });

    it('accepts composites and arrays as PostgreSQL literal strings too', async () => {
      const res = await send('post', '/api/gadgets?returning=id,pair,pairs,moods,grid', { id: 101, name: 'strings', pair: '(7,"seven, 7")', pairs: '{"(1,one)"}', moods: '{sad,"so, so"}', grid: '{{9,8},{7,6}}' });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({ id: 101, pair: { x: 7, label: 'seven, 7' }, pairs: [{ x: 1, label: 'one' }], moods: ['sad', 'so, so'], grid: [[9, 8], [7, 6]] });
      expect(res.text).toBe(`{"data":${await adminJson('gadgets', 'id, pair, pairs, moods, grid', 'id = 101')}}`);
    });

    it('ignores keys of a composite object that name no field (PostgreSQL jsonb_populate_record; documented)', async () => {
      const res = await send('post', '/api/gadgets?returning=pair', { id: 102, name: 'extra', pair: { x: 1, nope: 2 } });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({ pair: { x: 1, label: null } });
    });

    it('inserts a batch atomically, in body order, returning composite and array columns', async () => {
      const res = await send('post', '/api/gadgets?returning=id,pair,moods,spans', [
        { id: 110, name: 'b1', pair: { x: 2, label: 'b' }, moods: ['ok'], spans: '{[1,2)}' },
        { id: 111, name: 'b2', pair: { x: 1, label: 'a' }, moods: [], spans: '{}' },
      ]);
      expect(res.status).toBe(201);
      expect(res.body.count).toBe(2);
      expect(res.body.data).toEqual([
        { id: 110, pair: { x: 2, label: 'b' }, moods: ['ok'], spans: '{[1,2)}' },
        { id: 111, pair: { x: 1, label: 'a' }, moods: [], spans: '{}' },
      ]);
      const failing = await send('post', '/api/gadgets', [{ id: 112, name: 'ok' }, { id: 113, name: 'x', mood: 'angry' }]);
      expect(failing.status).toBe(400);
      expect(failing.body.code).toBe('VALIDATION_ERROR');
      expect(await adminCount('gadgets', 'id IN (112, 113)')).toBe(0);
    });

    it('upserts on the key, updating composite, enum-array and range columns; another tenant\u2019s row is 403 and untouched', async () => {
      const res = await send('post', '/api/gadgets?returning=id,name,pair,moods,span', { id: 1, name: 'alpha2', pair: { x: 9, label: 'z' }, moods: ['sad'], span: 'empty' }).set('X-Upsert', 'true');
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({ id: 1, name: 'alpha2', pair: { x: 9, label: 'z' }, moods: ['sad'], span: 'empty' });
      expect(res.text).toBe(`{"data":${await adminJson('gadgets', 'id, name, pair, moods, span', 'id = 1')}}`);
      // Untouched columns keep their values.
      expect(await adminJson('gadgets', 'amount, tags', 'id = 1')).toBe('{"amount":123456789012345678901234567890.0123456789,"tags":["red","with space","a,b"]}');
      const before = await adminJson('gadgets', '*', 'id = 6');
      const foreign = await send('post', '/api/gadgets', { id: 6, name: 'stolen', pair: { x: 0, label: 'x' } }).set('X-Upsert', 'true');
      expect(foreign.status).toBe(403);
      expect(await adminJson('gadgets', '*', 'id = 6')).toBe(before);
    });

    it.each([
      ['name', 'x'.repeat(13), 'domain over text with a CHECK (23514)'],
      ['qty', 0, 'domain over integer with a CHECK (23514)'],
      ['scores', [1, 2, 3, 4, 5], 'domain over integer[] with a CHECK (23514)'],
      ['mood', 'angry', 'enum label (22P02)'],
      ['moods', ['ok', 'bad'], 'enum array element (22P02)'],
      ['pair', 'not a composite', 'composite literal (22P02)'],
      ['pair', { x: 'notint', label: 'a' }, 'composite field (22P02)'],
      ['pairs', [{ x: 'y' }], 'composite array element (22P02)'],
      ['grid', [[1, 2], [3]], 'ragged 2-D array (22P02)'],
      ['span', '[5,1)', 'range bounds (22000)'],
      ['spans', '{[1,2)', 'multirange literal (22P02)'],
      ['period', '[x,y)', 'timestamp in a range (22007)'],
      ['amount', 'Infinity', 'numeric(40,10) cannot hold Infinity (22003)'],
      ['amount', 1e31, 'numeric(40,10) overflow (22003)'],
      ['bits', '10', 'bit(4) length (22026)'],
      ['short', 'abcdef', 'varchar(5) too long (22001)'],
      ['code', 'abcd', 'character(3) too long (22001)'],
      ['price', 'lots', 'money (22P02)'],
      ['words', "'unclosed", 'tsvector syntax error (42601)'],
      ['blob', '\\xZZ', 'bytea hex (22P02)'],
      ['wait', 'forever', 'interval (22007)'],
      ['ratio', 'much', 'double precision (22P02)'],
    ] as [string, unknown, string][])('refuses %s = %j with 400 VALIDATION_ERROR and writes nothing: %s', async (column, value) => {
      const res = await send('post', '/api/gadgets', { id: 150, name: 'bad', [column]: value });
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
      expect(await adminCount('gadgets', 'id = 150')).toBe(0);
    });

    it.each([['amount_doubled'], ['name_upper']])('refuses the generated column %s with a clear 400', async (column) => {
      const res = await send('post', '/api/gadgets', { id: 151, name: 'gen', [column]: 1 });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { table: 'gadgets', column } });
      expect(res.body.message).toContain('generated column');
      expect(await adminCount('gadgets', 'id = 151')).toBe(0);
    });
  });

  describe('PATCH and DELETE /gadgets/:id', () => {
    it('updates composite, array, range, money, interval, tsvector, bytea and numeric columns to exactly what was sent', async () => {
      const body = `{"pair":{"x":3,"label":null},"pairs":[],"moods":["happy","say \\"hi\\""],"grid":[[0]],"spans":"{[10,11)}","wait":"PT-1S","price":-0.01,"words":"z:9","blob":"\\\\xdead","amount":-${AMOUNT},"ratio":"Infinity","level":1e-40}`;
      const cols = 'pair,pairs,moods,grid,spans,wait,price,words,blob,amount,ratio,level,amount_doubled';
      const res = await send('patch', `/api/gadgets/2?returning=${cols}`, body);
      expect({ status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({ status: 200, body: undefined });
      expect(res.text).toBe(`{"data":${await adminJson('gadgets', cols, 'id = 2')}}`);
      expect(res.body.data).toMatchObject({ pair: { x: 3, label: null }, pairs: [], moods: ['happy', 'say "hi"'], grid: [[0]], spans: '{[10,11)}', wait: '-00:00:01', words: "'z':9", blob: '\\xdead', ratio: 'Infinity' });
      expect(res.text).toContain(`"amount":-${AMOUNT}`);
    });

    it('refuses a generated column and a domain violation with 400, leaving the row as it was', async () => {
      const before = await adminJson('gadgets', '*', 'id = 3');
      for (const body of [{ name_upper: 'X' }, { qty: -1 }, { name: '' }, { pair: '(1' }]) {
        const res = await send('patch', '/api/gadgets/3', body);
        expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'VALIDATION_ERROR' });
      }
      expect(await adminJson('gadgets', '*', 'id = 3')).toBe(before);
    });

    it('deletes by key, returning composite and array values; another tenant\u2019s key is 404', async () => {
      const before = await adminJson('gadgets', 'pair, pairs, moods, amount', 'id = 5');
      const res = await send('delete', '/api/gadgets/5?returning=pair,pairs,moods,amount');
      expect(res.status).toBe(200);
      expect(res.text).toBe(`{"data":${before}}`);
      expect(await adminCount('gadgets', 'id = 5')).toBe(0);
      expect((await send('delete', '/api/gadgets/6')).status).toBe(404);
      expect(await adminCount('gadgets', 'id = 6')).toBe(1);
      const bad = await send('delete', '/api/gadgets/abc');
      expect({ status: bad.status, code: bad.body.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    });
  });

  describe('the partitioned table and its partitions', () => {
    const partitionOf = async (sensor: string) => (await db.admin.query('SELECT tableoid::regclass::text AS p FROM kinds.readings WHERE sensor = $1', [sensor])).rows.map((r: { p: string }) => r.p);

    it('POST routes the row to its partition; GET, PATCH (moving it to the next partition) and DELETE find it by (text with a comma, timestamptz)', async () => {
      const created = await send('post', '/api/readings?returning=sensor,taken_at,value', { sensor: 'a,b', taken_at: '2024-07-01T12:00:00.5+02:00', gadget_id: 1, value: 'Infinity' });
      expect(created.status).toBe(201);
      expect(created.body.data).toEqual({ sensor: 'a,b', taken_at: '2024-07-01T10:00:00.5+00:00', value: 'Infinity' });
      expect(await partitionOf('a,b')).toEqual(['kinds.readings_2024']);

      const key = `${enc('a,b')},${enc('2024-07-01T10:00:00.5Z')}`;
      expect((await request(app).get(`/api/readings/${key}?select=value`).set('Authorization', `Bearer ${tokenA}`)).body).toEqual({ data: { value: 'Infinity' } });
      expect((await send('patch', `/api/readings/${key}`, { value: 1 }, tokenB)).status).toBe(404);

      const moved = await send('patch', `/api/readings/${key}?returning=sensor,taken_at`, { taken_at: '2025-07-01T00:00:00Z', value: 'NaN' });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toEqual({ sensor: 'a,b', taken_at: '2025-07-01T00:00:00+00:00' });
      expect(await partitionOf('a,b')).toEqual(['kinds.readings_2025']);

      const newKey = `${enc('a,b')},${enc('2025-07-01 02:00:00+02')}`;
      expect((await send('delete', `/api/readings/${newKey}?returning=value`, undefined, tokenB)).status).toBe(404);
      const deleted = await send('delete', `/api/readings/${newKey}?returning=value`);
      expect(deleted.status).toBe(200);
      expect(deleted.body.data).toEqual({ value: 'NaN' });
      expect(await partitionOf('a,b')).toEqual([]);
    });

    it('upserts on the composite key and refuses a row no partition takes with 400', async () => {
      const res = await send('post', '/api/readings?returning=sensor,taken_at,value', { sensor: 'roof', taken_at: '2024-06-01T10:30:00Z', value: -1 }).set('X-Upsert', 'true');
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({ sensor: 'roof', taken_at: '2024-06-01T10:30:00+00:00', value: -1 });
      expect(await adminCount('readings', "sensor = 'roof'")).toBe(1);
      const nowhere = await send('post', '/api/readings', { sensor: 'z', taken_at: '2030-01-01T00:00:00Z' });
      expect({ status: nowhere.status, code: nowhere.body.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    });

    it('writes through a partition directly, under its own RLS; a row outside its range is a 400', async () => {
      const created = await send('post', '/api/readings_2024?returning=sensor,taken_at,tenant_id', { sensor: 'p', taken_at: '2024-03-01T00:00:00Z', gadget_id: 1 });
      expect(created.status).toBe(201);
      expect(created.body.data).toEqual({ sensor: 'p', taken_at: '2024-03-01T00:00:00+00:00', tenant_id: TENANT_A });
      const outside = await send('post', '/api/readings_2024', { sensor: 'p2', taken_at: '2025-03-01T00:00:00Z' });
      expect({ status: outside.status, code: outside.body.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
      const key = `p,${enc('2024-03-01T00:00:00Z')}`;
      const moved = await send('patch', `/api/readings_2024/${key}`, { taken_at: '2025-03-01T00:00:00Z' });
      expect({ status: moved.status, code: moved.body.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
      expect((await send('patch', `/api/readings_2024/${key}?returning=value`, { value: 2 })).body).toEqual({ data: { value: 2 } });
      expect((await send('delete', `/api/readings_2024/${key}`, undefined, tokenB)).status).toBe(404);
      expect((await send('delete', `/api/readings_2024/${key}`)).status).toBe(204);
      expect(await adminCount('readings', "sensor LIKE 'p%'")).toBe(0);
    });
  });

  describe('views and the materialized view', () => {
    it('inserts through the auto-updatable view with the base table\u2019s defaults and RLS (security_invoker)', async () => {
      const res = await send('post', '/api/gadget_cards?returning=id,name,pair,moods,tenant_id', { id: 140, name: 'via view', pair: { x: 3, label: 'v' }, moods: ['ok'] });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({ id: 140, name: 'via view', pair: { x: 3, label: 'v' }, moods: ['ok'], tenant_id: TENANT_A });
      expect(await adminJson('gadgets', 'tenant_id, name_upper', 'id = 140')).toBe(`{"tenant_id":"${TENANT_A}","name_upper":"VIA VIEW"}`);
      const batch = await send('post', '/api/gadget_cards?returning=id', [{ id: 141, name: 'v1' }, { id: 142, name: 'v2', span: '[1,2)' }]);
      expect(batch.status).toBe(201);
      expect(batch.body.data).toEqual([{ id: 141 }, { id: 142 }]);
      const foreign = await send('post', '/api/gadget_cards', { id: 143, name: 'other', tenant_id: TENANT_B });
      expect(foreign.status).toBe(403);
      expect(await adminCount('gadgets', 'id = 143')).toBe(0);
    });

    it('has no /:id routes on the views (no primary key), so PATCH and DELETE there are 404 (documented)', async () => {
      for (const res of [await send('patch', '/api/gadget_cards/1', { name: 'x' }), await send('delete', '/api/gadget_cards/1'), await send('patch', '/api/gadget_totals/1', { n: 0 })]) {
        expect(res.status).toBe(404);
        expect(res.body.message).toContain('no primary key');
      }
      expect(await adminJson('gadgets', 'name', 'id = 1')).not.toBe('{"name":"x"}');
    });

    it('refuses writes to the aggregating view and the materialized view with 405', async () => {
      for (const path of ['/api/gadget_moods', '/api/gadget_totals']) {
        const res = await send('post', path, { n: 1 });
        expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 405, code: 'METHOD_NOT_ALLOWED' });
      }
    });
  });
});
