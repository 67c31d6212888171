/**
 * GET /{table} and GET /{table}/:id over HTTP against real PostgreSQL, as the non-superuser app
 * role with RLS forced. Expected rows are computed by direct SQL as the admin, restricted to the
 * caller's tenant, so a leak or a wrong filter shows up as a difference.
 */
import http from 'node:http';
import express from 'express';
import request from 'supertest';
import type { Gateway } from '../../lib';
import { createTestDatabase, TENANT_A } from '../support/test-database';
import { tokenA, tokenB, useGatewayApp } from '../support/gateway-app';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let gateway: Gateway;
let app: express.Express;

useGatewayApp({ maxLimit: 500 }, (started) => ({ db, gateway, app } = started));

const get = (path: string, token = tokenA) => request(app).get(path).set('Authorization', `Bearer ${token}`);

/** Ids of tenant A's orders matching a SQL condition, in the given order, computed as the admin. */
async function expectedIds(condition: string, order = 'id', params: unknown[] = []): Promise<number[]> {
  const { rows } = await db.admin.query(`SELECT id FROM orders WHERE tenant_id = $1 AND (${condition}) ORDER BY ${order}`, [TENANT_A, ...params]);
  return rows.map((r: { id: string | number }) => Number(r.id));
}

const ids = (body: { data: { id: number }[] }) => body.data.map((r) => Number(r.id));

describe('GET /{table}: filters', () => {
  const cases: [string, string, string][] = [
    // [key-style query, value-style query, SQL condition]
    ["status.eq=paid", 'status=eq.paid', "status = 'paid'"],
    ['status.ne=paid', 'status=ne.paid', "status <> 'paid'"],
    ['total.gt=100', 'total=gt.100', 'total > 100'],
    ['total.gte=100', 'total=gte.100', 'total >= 100'],
    ['total.lt=50', 'total=lt.50', 'total < 50'],
    ['total.lte=50', 'total=lte.50', 'total <= 50'],
    ['status.in=paid,shipped', 'status=in.(paid,shipped)', "status IN ('paid', 'shipped')"],
    ['status.like=p*', 'status=like.p*', "status LIKE 'p%'"],
    ['status.ilike=P*D', 'status=ilike.P*D', "status ILIKE 'p%d'"],
    ['notes.is_null=true', 'notes=is_null', 'notes IS NULL'],
    ['notes.is_null=false', 'notes=is_null.false', 'notes IS NOT NULL'],
  ];
  it.each(cases)('%s and %s return the same rows as SQL', async (keyStyle, valueStyle, condition) => {
    const expected = await expectedIds(condition);
    expect(expected.length).toBeGreaterThan(0);
    const a = await get(`/api/orders?${keyStyle}&limit=500`);
    const b = await get(`/api/orders?${valueStyle}&limit=500`);
    expect(a.status).toBe(200);
    expect(ids(a.body)).toEqual(expected);
    expect(ids(b.body)).toEqual(expected);
  });

  it('defaults to eq without an operator', async () => {
    const res = await get('/api/orders?status=paid&limit=500');
    expect(ids(res.body)).toEqual(await expectedIds("status = 'paid'"));
  });

  it('combines a range on one column and filters on several columns with AND', async () => {
    const res = await get('/api/orders?total.gte=20&total=lte.200&status=ne.cancelled&limit=500');
    expect(ids(res.body)).toEqual(await expectedIds("total BETWEEN 20 AND 200 AND status <> 'cancelled'"));
  });

  it('filters array columns with contains', async () => {
    const { rows } = await db.admin.query("SELECT id FROM users WHERE tenant_id = $1 AND tags @> ARRAY['vip'] ORDER BY id", [TENANT_A]);
    const res = await get('/api/users?tags=contains.vip&select=id,tags');
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(rows.map((r: { id: number }) => r.id));
    for (const row of res.body.data) expect(row.tags).toContain('vip');
  });

  it('treats hostile filter values as data, never SQL', async () => {
    // Node's default 16 kB header limit would refuse a 100 kB URL before the gateway sees it.
    const server = http.createServer({ maxHeaderSize: 1024 * 1024 }, app);
    for (const hostile of ["'; DROP TABLE orders; --", 'paid" OR 1=1 --', '\\', '%', 'ü'.repeat(1000), 'x'.repeat(100_000)]) {
      const res = await request(server).get(`/api/orders?status=${encodeURIComponent(hostile)}`).set('Authorization', `Bearer ${tokenA}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
    }
    const { rows } = await db.admin.query('SELECT count(*)::int AS n FROM orders');
    expect(rows[0].n).toBeGreaterThan(0);
  });

  it('answers bad literals and NUL bytes with 400, not 500', async () => {
    expect((await get('/api/orders?total=abc')).body.code).toBe('VALIDATION_ERROR');
    expect((await get('/api/orders?id=gt.99999999999999999999999')).body.code).toBe('VALIDATION_ERROR');
    const nul = await get('/api/orders?status=a%00b');
    expect(nul.status).toBe(400);
    expect(nul.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('GET /{table}: search, sort, select, distinct', () => {
  it('full-text searches all text columns with web-style syntax (+ is a space)', async () => {
    const { rows } = await db.admin.query(
      "SELECT id FROM documents WHERE tenant_id = $1 AND to_tsvector(concat_ws(' ', title, body)) @@ websearch_to_tsquery($2) ORDER BY id",
      [TENANT_A, 'database -oracle'],
    );
    expect(rows.length).toBeGreaterThan(0);
    const res = await get('/api/documents?search=database+-oracle&select=id');
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(rows.map((r: { id: number }) => r.id));
  });

  it('restricts the search to search_columns', async () => {
    const { rows } = await db.admin.query(
      "SELECT id FROM documents WHERE tenant_id = $1 AND to_tsvector(concat_ws(' ', title)) @@ websearch_to_tsquery($2) ORDER BY id",
      [TENANT_A, 'database'],
    );
    const res = await get('/api/documents?search=database&search_columns=title&select=id');
    expect(ids(res.body)).toEqual(rows.map((r: { id: number }) => r.id));
  });

  it('sorts in all four forms and on several columns, primary key last', async () => {
    const expected = await expectedIds('true', 'status ASC, total DESC NULLS FIRST, id');
    for (const sort of ['status,-total', 'status:asc,total:desc', 'status,total:desc']) {
      const res = await get(`/api/orders?sort=${sort}&limit=500`);
      expect(ids(res.body)).toEqual(expected);
    }
  });

  it('returns only the selected columns, in order', async () => {
    const res = await get('/api/orders?select=total,id&limit=2');
    expect(Object.keys(res.body.data[0])).toEqual(['total', 'id']);
  });

  it('renders values with PostgreSQL JSON types (numeric as number, timestamptz as text, arrays)', async () => {
    const { rows } = await db.admin.query('SELECT id, total::text AS total FROM orders WHERE tenant_id = $1 AND total IS NOT NULL ORDER BY id LIMIT 1', [TENANT_A]);
    const res = await get(`/api/orders/${rows[0].id}?select=id,total,placed_at`);
    expect(res.body.data.total).toBe(Number(rows[0].total));
    expect(typeof res.body.data.placed_at).toBe('string');
  });

  it('lists distinct values ordered by the column', async () => {
    const { rows } = await db.admin.query('SELECT DISTINCT status FROM orders WHERE tenant_id = $1 ORDER BY status NULLS LAST', [TENANT_A]);
    const res = await get('/api/orders?distinct=status&count=exact');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(rows);
    expect(res.body.total).toBe(rows.length);
  });
});

describe('GET /{table}: paging', () => {
  it('applies default_limit, clamps to max_limit and echoes the applied value', async () => {
    const all = await expectedIds('true');
    const res = await get('/api/orders?limit=100000');
    expect(res.body.limit).toBe(500);
    expect(res.body.count).toBe(Math.min(all.length, 500));
    const small = await get('/api/orders?limit=3&offset=2');
    expect(small.body).toMatchObject({ count: 3, limit: 3, offset: 2 });
    expect(ids(small.body)).toEqual(all.slice(2, 5));
  });

  it('reports the filtered total with count=exact', async () => {
    const expected = await expectedIds("status = 'paid'");
    const res = await get('/api/orders?status=paid&limit=1&count=exact');
    expect(res.body.total).toBe(expected.length);
  });

  it.each(['-total', 'notes,-id', 'placed_at:desc', 'status,total'])('walks every row exactly once with next_cursor (sort=%s)', async (sort) => {
    const order = sort
      .split(',')
      .map((e) => (e.startsWith('-') ? `${e.slice(1)} DESC NULLS FIRST` : e.endsWith(':desc') ? `${e.slice(0, -5)} DESC NULLS FIRST` : `${e} ASC NULLS LAST`))
      .join(', ');
    const expected = await expectedIds('true', `${order}, id`);
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await get(`/api/orders?sort=${sort}&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res.body));
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(expected);
  });

  it('pages with a cursor when the sort keys are not selected, keeping them out of the rows', async () => {
    const expected = await expectedIds('true', 'total DESC NULLS FIRST, id');
    const { rows } = await db.admin.query('SELECT status FROM orders WHERE tenant_id = $1 ORDER BY total DESC NULLS FIRST, id', [TENANT_A]);
    const seen: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await get(`/api/orders?sort=-total&select=status&limit=9${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      for (const row of res.body.data) expect(Object.keys(row)).toEqual(['status']);
      seen.push(...res.body.data);
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toHaveLength(expected.length);
    expect(seen).toEqual(rows);
  });

  it('rejects a tampered cursor, a cursor for another sort, and cursor with offset', async () => {
    const first = await get('/api/orders?sort=-total&limit=2');
    const cursor: string = first.body.next_cursor;
    const tampered = `${Buffer.from(JSON.stringify(['0', '1'])).toString('base64url')}.${cursor.split('.')[1]}`;
    for (const path of [`/api/orders?sort=-total&cursor=${tampered}`, `/api/orders?sort=total&cursor=${cursor}`, `/api/orders?sort=-total&cursor=${cursor}&offset=2`, `/api/orders_items?cursor=${cursor}`]) {
      const res = await get(path);
      expect([400, 404]).toContain(res.status);
      expect(['PARSE_ERROR', 'NOT_FOUND']).toContain(res.body.code);
    }
  });

  it('gives no next_cursor on a short page', async () => {
    const res = await get('/api/orders?limit=500');
    expect(res.body.next_cursor).toBeUndefined();
  });
});

describe('GET /{table}/:id', () => {
  it('returns one visible row, with select', async () => {
    const [id] = await expectedIds('true');
    const res = await get(`/api/orders/${id}?select=id,tenant_id`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { id, tenant_id: TENANT_A } });
  });

  it("answers 404 for another tenant's row, which exists", async () => {
    const [id] = await expectedIds('true');
    const res = await get(`/api/orders/${id}`, tokenB);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });

  it('reads a composite-key row with comma-separated key values', async () => {
    const { rows } = await db.admin.query('SELECT order_id, tag FROM order_tags WHERE tenant_id = $1 ORDER BY 1, 2 LIMIT 1', [TENANT_A]);
    const { order_id, tag } = rows[0];
    const res = await get(`/api/order_tags/${order_id},${encodeURIComponent(tag)}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ order_id: Number(order_id), tag });
    expect((await get(`/api/order_tags/${order_id}`)).body.code).toBe('PARSE_ERROR');
  });

  it('has no /:id route on a table without a primary key', async () => {
    const res = await get('/api/audit_log/1');
    expect(res.status).toBe(404);
    const list = await get('/api/audit_log?limit=2');
    expect(list.status).toBe(200);
    expect(list.body.next_cursor).toBeUndefined();
  });
});

describe('hostile identifiers from the schema', () => {
  it('serves a table whose name and columns need quoting', async () => {
    const { rows } = await db.admin.query(`SELECT count(*)::int AS n FROM "we""ird table" WHERE tenant_id = $1`, [TENANT_A]);
    const res = await get(`/api/${encodeURIComponent('we"ird table')}?select=${encodeURIComponent('id,"a""b","col with space",naïve_ünïcode,select')}&limit=500`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(rows[0].n);
    expect(Object.keys(res.body.data[0])).toEqual(['id', 'a"b', 'col with space', 'naïve_ünïcode', 'select']);
    const filtered = await get(`/api/${encodeURIComponent('we"ird table')}?select.ne=zzz&${encodeURIComponent('col with space')}=is_null.false&sort=${encodeURIComponent('-"a""b"')}`);
    expect(filtered.status).toBe(200);
  });
});

describe('names are resolved before SQL', () => {
  it('answers an unknown table with 404 and a hint', async () => {
    const res = await get('/api/ordres');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', hint: 'Did you mean `orders`?' });
  });

  it.each(['select=id,nope', 'nope=1', 'nope.eq=1', 'sort=-nope', 'distinct=nope', 'search=x&search_columns=nope'])('answers an unknown column in %s with UNKNOWN_COLUMN', async (query) => {
    const res = await get(`/api/orders?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('UNKNOWN_COLUMN');
  });

  it.each(['limit=-1', 'limit=abc', 'offset=x', 'sort=', 'select=', 'status=in.oops', 'total.between=1', 'cursor=%%%', 'count=maybe', 'limit=1&limit=2'])('answers malformed %s with PARSE_ERROR', async (query) => {
    const res = await get(`/api/orders?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('PARSE_ERROR');
    expect(JSON.stringify(res.body)).not.toMatch(/SELECT|at .*\.ts|\.js:\d+/);
  });
});
