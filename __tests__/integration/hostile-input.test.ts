/**
 * The hostile inputs the fuzz (fuzz.test.ts) found, one deterministic test each, and the caps of
 * docs/querying.md "Limits" at and just over their value. Every over-cap request is a 400 with a
 * catalogue code and `details.limit` naming the cap; none may reach a 500.
 *
 * Served by a Node server whose maxHeaderSize is 4 MiB: Node's default (16 KiB) would answer a
 * 25,000-parameter URL with its own 431 before the gateway sees it, but a host may raise it.
 */
import http from 'node:http';
import type express from 'express';
import request from 'supertest';
import { errorCatalogue } from '../../lib';
import { gatewayFactory, tokenA, useGatewayApp } from '../support/gateway-app';
import { TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

let app: express.Express;
let db: TestDatabase;
// The explain route is open to role `member` (tokenA's), so its filter cap is what answers.
useGatewayApp({ explainRoles: ['member'] }, (started) => ({ app, db } = started));
const wideGateways = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['hostile_input'] }));
afterAll(() => wideGateways.closeAll());

const serve = (handler: express.Express): http.Server => http.createServer({ maxHeaderSize: 4 << 20 }, handler);
const auth = { Authorization: `Bearer ${tokenA}` };
const get = (path: string, handler = app) => request(serve(handler)).get(path).set(auth);
const post = (path: string, body: string, handler = app) => request(serve(handler)).post(path).set(auth).set('Content-Type', 'application/json').send(body);
const repeat = (item: string, n: number, separator = ','): string => Array.from({ length: n }, () => item).join(separator);

/** A 400 from a cap: catalogue code, and `details` naming the cap, its value and the count given. */
function expectCap(res: request.Response, limit: string, max: number, given?: number): void {
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('PARSE_ERROR');
  expect(res.body.details).toEqual(given === undefined ? { limit, max } : { limit, max, given });
  expect(res.body.message).toContain(String(max));
}

describe('fuzz finding: more than 100 sort keys', () => {
  it('is a 400 naming the sort-key cap (was a 500: json_build_array takes at most 100 arguments)', async () => {
    expectCap(await get(`/api/orders?sort=${repeat('id', 101)}`), 'sort_keys', 32, 101);
    expectCap(await get(`/api/orders?select=id&sort=${repeat('-total', 120)}`), 'sort_keys', 32, 120);
  });

  it('serves the most sort keys accepted (32), also with a composite-key tie-breaker and unselected keys', async () => {
    const keys = Array.from({ length: 32 }, (_, i) => (i % 2 ? '-tag' : 'order_id:asc')).join(',');
    for (const path of [`/api/order_tags?sort=${keys}&limit=3`, `/api/order_tags?select=tenant_id&sort=${keys}&limit=3`, `/api/orders?sort=${repeat('-total', 32)}&select=id&limit=2`]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toEqual(expect.any(String));
    }
  });
});

describe('fuzz finding: a 7-level nested JSON array for an array argument', () => {
  const seven = '[[[[[[[1]]]]]]]';

  it('is a 400 VALIDATION_ERROR naming the limit (was a 500: PostgreSQL 54000)', async () => {
    for (const body of [`{"ids":${seven}}`, `[${seven}]`]) {
      const res = await post('/api/rpc/echo_ids', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'Number of array dimensions (7) exceeds the maximum allowed (6).',
        details: { sqlstate: '54000' },
      });
    }
  });

  it('is a 400 for an array column of a write too, and nothing is written', async () => {
    const res = await post('/api/users', `{"email":"deep@acme.test","name":"Deep","tags":[[[[[[["x"]]]]]]]}`);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ sqlstate: '54000' });
    expect((await db.admin.query(`SELECT count(*)::int AS n FROM users WHERE email = 'deep@acme.test'`)).rows[0].n).toBe(0);
  });

  it('still passes a 6-level array', async () => {
    const res = await post('/api/rpc/echo_ids', '{"ids":[[[[[[7]]]]]]}');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [[[[[[7]]]]]] });
  });
});

describe('fuzz finding: a long phrase search', () => {
  it('is a 400 naming the search-length cap (was a 500: stack depth limit exceeded)', async () => {
    const phrase = encodeURIComponent(`"${repeat('word', 20000, ' ')}"`);
    expectCap(await get(`/api/orders?search=${phrase}`), 'search_characters', 1000, 20000 * 5 + 1);
    expectCap(await get(`/api/orders/aggregate?fn=count&search=${phrase}`), 'search_characters', 1000, 20000 * 5 + 1);
  });

  it('caps the words of a search at 100', async () => {
    expectCap(await get(`/api/orders?search=${repeat('a', 101, '+')}`), 'search_terms', 100, 101);
    expect((await get(`/api/orders?search=${repeat('a', 100, '+')}`)).status).toBe(200);
  });

  it('serves a 100-word phrase of 1,000 characters, and refuses 1,001', async () => {
    const phrase = `"${repeat('abcdefghi', 99, ' ')} abcdefgh"`;
    expect(phrase).toHaveLength(1000);
    expect((await get(`/api/orders?search=${encodeURIComponent(phrase)}`)).status).toBe(200);
    expectCap(await get(`/api/orders?search=${encodeURIComponent(`${phrase}x`)}`), 'search_characters', 1000, 1001);
  });

  it('answers a phrase that reaches max_stack_depth through a function argument with 400 (SQLSTATE 54001)', async () => {
    const wide = await wideGateways.appWith();
    const res = await post('/api/rpc/phrase_query', JSON.stringify({ q: `"${repeat('w', 10000, ' ')}"` }), wide);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'PARSE_ERROR',
      message: 'The request is too complex for the database (stack depth limit exceeded).',
      // Raised inside the function's body, so the error says which function.
      details: { sqlstate: '54001', source: 'function', function: 'phrase_query' },
      hint: 'Use fewer filters or a shorter search.',
    });
  });
});

describe('fuzz finding: ~25,000 filters in one URL', () => {
  it('is a 400 before any parsing (was a 500: RangeError in the SQL builder)', async () => {
    expectCap(await get(`/api/orders?${repeat('status=paid', 25000, '&')}`), 'query_parameters', 1000);
  });

  it('caps filters at 100 on every route that takes them', async () => {
    const filters = repeat('total=gte.1', 101, '&');
    for (const path of [`/api/orders?${filters}`, `/api/orders/_explain?${filters}`, `/api/orders/aggregate?fn=count&${filters}`, `/api/users/1/orders?${filters}`]) {
      expectCap(await get(path), 'filters', 100, 101);
    }
    const res = await get(`/api/orders?${repeat('total=gte.1', 100, '&')}&select=id&limit=1`);
    expect(res.status).toBe(200);
  });
});

describe('query keys that qs would nest or that name Object.prototype members', () => {
  it('stay literal names: unknown columns and tables, not objects, arrays or prototype lookups', async () => {
    for (const key of ['status[a][b]', 'status[]', '__proto__', 'constructor', 'toString']) {
      const res = await get(`/api/orders?${encodeURIComponent(key)}=1`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('UNKNOWN_COLUMN');
    }
    for (const name of ['__proto__', 'constructor', 'hasOwnProperty']) expect((await get(`/api/${name}`)).body.code).toBe('NOT_FOUND');
    const body = await post('/api/orders', '{"__proto__":{"status":"paid"},"constructor":1}');
    expect(body.status).toBe(400);
    expect(body.body.code).toBe('UNKNOWN_COLUMN');
  });
});

describe('the other caps', () => {
  it('caps an in list at 1,000 items', async () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => i + 1).join(',');
    expectCap(await get(`/api/orders?id=in.(${items(1001)})`), 'in_items', 1000, 1001);
    expectCap(await get(`/api/orders?id.in=${items(1001)}`), 'in_items', 1000, 1001);
    const res = await get(`/api/orders?id=in.(${items(1000)})&select=id&limit=1000`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(120);
  });

  it('caps the names of select, search_columns and returning at 1,600', async () => {
    expectCap(await get(`/api/orders?select=${repeat('id', 1601)}`), 'column_names', 1600, 1601);
    expectCap(await get(`/api/orders?search=x&search_columns=${repeat('notes', 1601)}`), 'column_names', 1600, 1601);
    expectCap(await request(serve(app)).delete(`/api/orders/1?returning=${repeat('id', 1601)}`).set(auth), 'column_names', 1600, 1601);
    // Under the name cap, one column named 1,600 times is over the repeats cap (docs/querying.md, "Limits").
    expectCap(await get(`/api/orders?select=${repeat('id', 1600)}&limit=1`), 'column_repeats', 4, 5);
    const res = await get(`/api/orders?select=${repeat('id', 4)}&limit=1`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ id: 1 }]);
  });

  it('answers every cap with a catalogue code', async () => {
    for (const path of [`/api/orders?sort=${repeat('id', 33)}`, `/api/orders?${repeat('a=1', 1001, '&')}`]) {
      const res = await get(path);
      expect(errorCatalogue[res.body.code as keyof typeof errorCatalogue].status).toBe(res.status);
    }
  });
});

describe('a search over more text columns than a function takes arguments', () => {
  it('searches all 120 text columns of a table (was a 500: concat_ws takes at most 100 arguments)', async () => {
    const wide = await wideGateways.appWith();
    const alpha = await get('/api/wide?search=alpha&select=id', wide);
    expect(alpha.status).toBe(200);
    expect(alpha.body.data).toEqual([{ id: 1 }, { id: 2 }]);
    const omega = await get('/api/wide?search=omega&select=id', wide);
    expect(omega.body.data).toEqual([{ id: 1 }]);
    const both = await get('/api/wide?search=%22alpha+one%22+omega&select=id', wide);
    expect(both.body.data).toEqual([{ id: 1 }]);
  });
});
