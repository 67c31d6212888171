/**
 * The PostgREST dialect's function calls, settings and raised errors through @supabase/postgrest-js
 * and supabase-js's .rpc() over HTTP (docs/postgrest-dialect.md, "Functions", "Settings",
 * "Errors raised by functions"): named arguments, one unnamed json / text argument,
 * params=single-object, GET for STABLE / IMMUTABLE functions, filters / select / order / limit /
 * embeds on set-returning functions, request.* settings, RAISE SQLSTATE 'PGRST', tx=rollback,
 * tenant isolation of calls, GET / (OpenAPI).
 * Fixtures: __tests__/fixtures/080-postgrest.sql, 081-postgrest-functions.sql.
 */
import { createClient } from '@supabase/supabase-js';
import { pgrstTokenA, pgrstTokenB, startPostgrestApp, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, TENANT_A, TENANT_B, type TestDatabase } from '../support/test-database';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
let db: TestDatabase;
let app: PostgrestApp;
const A = () => app.client(pgrstTokenA);
const B = () => app.client(pgrstTokenB);
const bearer = (token = pgrstTokenA): Record<string, string> => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  db = await createTestDatabase();
  app = await startPostgrestApp({}, db);
});
afterAll(async () => {
  await app.close();
  await db.drop();
});

describe('postgrest calls: arguments', () => {
  it('POST with named arguments returns the scalar', async () => {
    const { data, error, status } = await A().rpc('add', { a: 2, b: 40 });
    expect({ data, error, status }).toEqual({ data: 42, error: null, status: 200 });
  });

  it('GET for an IMMUTABLE / STABLE function, arguments in the query string', async () => {
    const { data, error } = await A().rpc('add', { a: 1, b: 2 }, { get: true });
    expect({ data, error }).toEqual({ data: 3, error: null });
    const head = await A().rpc('books_by_genre', { g: 'science' }, { head: true, count: 'exact' });
    expect({ status: head.status, count: head.count, data: head.data }).toEqual({ status: 200, count: 2, data: null });
  });

  it('GET of a VOLATILE function runs read-only and fails as PostgREST does (25006, 405)', async () => {
    const { status, error } = await A().rpc('rename_author', { p_id: 1, p_name: 'x' }, { get: true });
    expect({ status, code: error?.code }).toEqual({ status: 405, code: '25006' });
    const { rows } = await db.admin.query('SELECT name FROM pgrst.authors WHERE id = 1');
    expect(rows).toEqual([{ name: 'Ada' }]);
  });

  it('a single unnamed jsonb argument takes the whole body; text/plain a single unnamed text one', async () => {
    const { data } = await A().rpc('echo_json', { any: [1, 2, { x: 12345678901234567890 }] });
    expect(data).toEqual({ any: [1, 2, { x: 12345678901234567000 }] });
    const raw = await fetch(`${app.url}/rpc/echo_json`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json' }, body: '{"n":12345678901234567890}' });
    expect(await raw.text()).toBe('{"n": 12345678901234567890}');
    const text = await fetch(`${app.url}/rpc/echo_text`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'text/plain' }, body: 'hello' });
    expect((await text.json()) as Any).toBe('HELLO');
  });

  it('Prefer: params=single-object passes the body as the one json argument with postgrest_version 12; 13 removed it', async () => {
    const v12 = await startPostgrestApp({ postgrestVersion: 12 }, db);
    try {
      const call = (server: PostgrestApp, prefer: string) =>
        fetch(`${server.url}/rpc/single_obj`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json', Prefer: prefer }, body: '{"a":1,"b":[2]}' });
      const res = await call(v12, 'params=single-object');
      expect(res.status).toBe(200);
      expect(res.headers.get('preference-applied')).toBe('params=single-object');
      expect((await res.json()) as Any).toEqual({ got: { a: 1, b: [2] } });
      // 13: an unknown preference, so the keys are the arguments (none is named `a`): PGRST202.
      const ignored = await call(app, 'params=single-object');
      expect({ status: ignored.status, code: ((await ignored.json()) as Any).code }).toEqual({ status: 404, code: 'PGRST202' });
      const strict = await call(app, 'params=single-object, handling=strict');
      expect({ status: strict.status, code: ((await strict.json()) as Any).code }).toEqual({ status: 400, code: 'PGRST122' });
    } finally {
      await v12.close();
    }
  });

  it('an unknown function or argument is PGRST202 (404); a function of another schema is not reached', async () => {
    const unknown = await A().rpc('nope', {});
    expect({ status: unknown.status, code: unknown.error?.code }).toEqual({ status: 404, code: 'PGRST202' });
    const badArg = await A().rpc('add', { a: 1, zz: 2 });
    expect({ status: badArg.status, code: badArg.error?.code }).toEqual({ status: 404, code: 'PGRST202' });
    const otherSchema = await app.client(pgrstTokenA, 'pgrst_alt').rpc('add', { a: 1, b: 2 });
    expect(otherSchema.error?.code).toBe('PGRST202');
  });
});

describe('postgrest calls: set-returning functions read like tables', () => {
  it('select, filters, order, limit and offset on the rows of a SETOF table function, with embeds', async () => {
    const { data, error } = await A().rpc('books_by_genre', { g: 'fiction' }).select('id, title, author:authors!author_id(name)').gte('pages', 100).order('id', { ascending: false }).limit(5);
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 3, title: 'Shirley', author: { name: 'Brontë' } },
      { id: 2, title: 'Jane Eyre', author: { name: 'Brontë' } },
    ]);
  });

  it('a RETURNS TABLE function: columns, filters, range and count', async () => {
    const { data, count, error } = await A().rpc('book_pages', { min_pages: 100 }, { count: 'exact' }).select('title').lt('pages', 450).order('pages').range(0, 1);
    expect(error).toBeNull();
    expect(data).toEqual([{ title: 'Notes on the Engine' }, { title: 'Radioactive Substances' }]);
    expect(count).toBe(3);
    const unknown = await A().rpc('book_pages', {}).select('nope');
    expect(unknown.error?.code).toBe('42703');
  });

  it('a scalar result is read as one column pgrst_scalar: a filter on another name is 42703; on void, PGRST127', async () => {
    const { status, error } = await A().rpc('add', { a: 1, b: 2 }).eq('x', 1);
    expect({ status, code: error?.code }).toEqual({ status: 400, code: '42703' });
    const kept = await A().rpc('add', { a: 1, b: 2 }).eq('pgrst_scalar', 3);
    expect({ data: kept.data, error: kept.error }).toEqual({ data: 3, error: null });
    const touch = await A().rpc('touch').eq('x', 1);
    expect({ status: touch.status, code: touch.error?.code }).toEqual({ status: 400, code: 'PGRST127' });
  });
});

describe('postgrest calls: tenant isolation', () => {
  it("a function runs under the caller's tenant: B never sees or changes A's rows through it", async () => {
    const b = await B().rpc('books_by_genre', { g: 'science' }).select('id');
    expect(b.data).toEqual([{ id: 12 }]);
    const renamed = await B().rpc('rename_author', { p_id: 1, p_name: 'hijack' });
    expect(renamed.data).toBe(0);
    const { rows } = await db.admin.query('SELECT name FROM pgrst.authors WHERE id = 1');
    expect(rows).toEqual([{ name: 'Ada' }]);
    const shelf = await B().rpc('add_shelf', { label: 'B new' });
    expect(shelf.error).toBeNull();
    const tenant = await db.admin.query('SELECT tenant_id::text FROM pgrst.shelves WHERE label = $1', ['B new']);
    expect(tenant.rows).toEqual([{ tenant_id: TENANT_B }]);
  });

  it('Prefer: tx=rollback undoes a volatile call', async () => {
    const res = await fetch(`${app.url}/rpc/rename_author`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json', Prefer: 'tx=rollback' }, body: '{"p_id":2,"p_name":"rolled back"}' });
    expect(res.status).toBe(200);
    expect((await res.json()) as Any).toBe(1);
    const { rows } = await db.admin.query('SELECT name FROM pgrst.authors WHERE id = 2');
    expect(rows).toEqual([{ name: 'Brontë' }]);
  });

  it('supabase-js .rpc() calls through the dialect', async () => {
    const base = app.url.replace(/\/rest\/v1$/, '');
    const supabase = createClient(base, pgrstTokenA, { db: { schema: 'pgrst' }, auth: { persistSession: false, autoRefreshToken: false }, realtime: { transport: class {} as never } });
    const { data, error } = await supabase.rpc('add', { a: 20, b: 22 });
    expect({ data, error }).toEqual({ data: 42, error: null });
    const rows = await supabase.rpc('book_pages', { min_pages: 450 }).select('title');
    expect(rows.data).toEqual([{ title: 'Jane Eyre' }]);
  });
});

describe('postgrest calls: Prefer: max-affected', () => {
  const notes = async (): Promise<unknown[]> => (await db.admin.query('SELECT id, body FROM pgrst.notes ORDER BY id')).rows;
  const call = (body: unknown, prefer: string, query = '', token = pgrstTokenA) =>
    fetch(`${app.url}/rpc/rewrite_bodies${query}`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json', Prefer: prefer }, body: JSON.stringify(body) });

  it('a call returning more rows than max-affected (handling=strict) is PGRST124, 400, and what it wrote is rolled back', async () => {
    const before = await notes();
    // postgrest-js types maxAffected() for PostgREST 13 clients only; the call is the same.
    const call13: Any = A().rpc('rewrite_bodies', { p_body: 'too many' });
    const { data, error, status } = await call13.maxAffected(1);
    expect({ data, status, code: error?.code, message: error?.message, details: error?.details }).toEqual({
      data: null, status: 400, code: 'PGRST124', message: 'Query result exceeds max-affected preference constraint', details: 'The query affects 2 rows',
    });
    expect(await notes()).toEqual(before);
  });

  it("within the limit the call commits; the count is of the caller's tenant's rows only (B has one)", async () => {
    const res = await call({ p_body: 'B within' }, 'handling=strict, max-affected=1', '', pgrstTokenB);
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('handling=strict, max-affected=1');
    expect(((await res.json()) as Any).map((r: Any) => r.body)).toEqual(['B within']);
    const { rows } = await db.admin.query('SELECT body FROM pgrst.notes WHERE id = 2001');
    expect(rows).toEqual([{ body: 'B within' }]);
  });

  it('the count is of the rows answered (after filters and limit), as PostgREST counts them', async () => {
    const res = await call({ p_body: 'limited' }, 'handling=strict, max-affected=1, tx=rollback', '?select=id&limit=1');
    expect(res.status).toBe(200);
    expect((await res.json()) as Any).toHaveLength(1);
  });

  it('a function returning one value counts 1: max-affected=0 refuses it and rolls back its write', async () => {
    const res = await fetch(`${app.url}/rpc/rename_author`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json', Prefer: 'handling=strict, max-affected=0' }, body: '{"p_id":3,"p_name":"over"}' });
    expect(res.status).toBe(400);
    expect((await res.json()) as Any).toMatchObject({ code: 'PGRST124', details: 'The query affects 1 rows' });
    const { rows } = await db.admin.query('SELECT name <> $1 AS kept FROM pgrst.authors WHERE id = 3', ['over']);
    expect(rows).toEqual([{ kept: true }]);
  });

  it('without handling=strict max-affected is ignored, as in PostgREST', async () => {
    const res = await call({ p_body: 'lenient' }, 'max-affected=1, tx=rollback');
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('tx=rollback');
    expect((await res.json()) as Any).toHaveLength(2);
  });
});

describe('postgrest calls: settings and errors', () => {
  it('request.jwt.claims, request.method, request.path and request.headers are set transaction-locally, beside app.*', async () => {
    const res = await fetch(`${app.url}/rpc/request_info`, { headers: { ...bearer(), 'X-Custom': 'abc', Cookie: 'sid=secret' } });
    const info = (await res.json()) as Any;
    expect(info.method).toBe('GET');
    expect(info.path).toBe('/rpc/request_info');
    expect(info.tenant).toBe(TENANT_A);
    expect(info.claims).toMatchObject({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
    expect(info.headers['x-custom']).toBe('abc');
    // The token and cookies are not copied into a setting any function can read.
    expect(info.headers.authorization).toBeUndefined();
    expect(info.headers.cookie).toBeUndefined();
    // The next request on the same pool does not see them.
    const anon = await fetch(`${app.url}/rpc/request_info`, { method: 'POST', headers: { ...bearer(pgrstTokenB), 'Content-Type': 'application/json' }, body: '{}' });
    const b = (await anon.json()) as Any;
    expect(b.claims.tenant_id).toBe(TENANT_B);
    expect(b.headers['x-custom']).toBeUndefined();
    expect(b.method).toBe('POST');
  });

  it("RAISE SQLSTATE 'PGRST' sets the status, headers and error body", async () => {
    const res = await fetch(`${app.url}/rpc/payment_required`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(402);
    expect(res.headers.get('x-powered-by')).toBe('Nerd Rage');
    expect((await res.json()) as Any).toEqual({ code: '123', message: 'Payment Required', details: 'Quota exceeded', hint: 'Upgrade your plan' });
    const { error, status } = await A().rpc('payment_required');
    expect({ status, code: error?.code, message: error?.message }).toEqual({ status: 402, code: '123', message: 'Payment Required' });
    const bad = await A().rpc('raise_bad');
    expect({ status: bad.status, code: bad.error?.code }).toEqual({ status: 500, code: 'PGRST121' });
  });

  it('a plain RAISE is P0001, 400, with its message, detail and hint', async () => {
    const { status, error } = await A().rpc('fail_plain');
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'P0001', message: 'plain failure', details: 'some detail', hint: 'some hint' });
  });

  it('hostile calls are 4xx, never 500', async () => {
    const h = { ...bearer(), 'Content-Type': 'application/json' };
    const calls: [string, RequestInit][] = [
      ['/rpc/add?a=zz&b=1', { headers: bearer() }],
      ['/rpc/add', { method: 'POST', headers: h, body: '[1,2]' }],
      ['/rpc/add', { method: 'POST', headers: h, body: '{"a":' }],
      ['/rpc/add', { method: 'POST', headers: h, body: '{"a":{"x":1},"b":1}' }],
      ['/rpc/add', { method: 'POST', headers: { ...bearer(), 'Content-Type': 'text/plain' }, body: 'x' }],
      ['/rpc/add', { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/octet-stream' }, body: 'x' }],
      ['/rpc/add', { method: 'PATCH', headers: h, body: '{}' }],
      ['/rpc/books_by_genre?g=fiction&select=nope(', { headers: bearer() }],
      ['/rpc/books_by_genre?g=fiction&id=zz.1', { headers: bearer() }],
      ['/rpc/books_by_genre?g=nope', { headers: bearer() }],
      ['/rpc/add?a=1&b=2', { headers: { ...bearer(), Prefer: 'handling=strict, params=multiple-objects' } }],
    ];
    for (const [p, init] of calls) {
      const r = await fetch(`${app.url}${p}`, init);
      expect({ p, ok: r.status >= 400 && r.status < 500 }).toEqual({ p, ok: true });
    }
  });

  it('a void function answers 204', async () => {
    const { status, data, error } = await A().rpc('touch');
    expect({ status, data, error }).toEqual({ status: 204, data: null, error: null });
  });
});

describe('GET / (OpenAPI)', () => {
  it('serves the OpenAPI 3.1 document of what the caller may read', async () => {
    const res = await fetch(`${app.url}/`, { headers: bearer() });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Any;
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(Object.keys(doc.paths).some((p) => p.includes('notes'))).toBe(true);
  });

  it('describes only the tables the access policy lets the caller read (fail closed)', async () => {
    const guarded = await startPostgrestApp({ access: { policy: { default_decision: 'deny', tables: { books: { operations: ['read'] } } } } }, db);
    try {
      const doc = (await (await fetch(`${guarded.url}/`, { headers: bearer() })).json()) as Any;
      const paths = Object.keys(doc.paths).join(' ');
      expect(paths).toContain('books');
      expect(paths).not.toContain('notes');
      expect(paths).not.toContain('authors');
    } finally {
      await guarded.close();
    }
  });
});
