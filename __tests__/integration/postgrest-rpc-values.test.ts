/**
 * The PostgREST dialect's calls of functions that do not return a set of rows, as PostgREST 12 and
 * 13 serve them (docs/postgrest-dialect.md, "Functions"): read parameters (select, filters, order,
 * limit / offset, singular and CSV bodies) on a scalar and on a single row; a set of scalars read
 * as rows of `pgrst_scalar` (its elements counted in Content-Range, paged, filtered); bodies that
 * are not JSON (`application/octet-stream` to one unnamed bytea argument, `text/plain` to text,
 * `text/xml` to xml); and a function returning a media type's domain answering its value as it
 * is. Each runs as the caller (RLS forced, two tenants); the function allow-list and the access
 * policy refuse before any SQL. Functions are made here, over __tests__/fixtures/080-postgrest.sql.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pgrstTokenA, pgrstTokenB, recordingApps, startPostgrestApp, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
let db: TestDatabase;
let app: PostgrestApp;
let executed: string[] = [];
const apps: PostgrestApp[] = [];
const appWith = recordingApps(() => db, apps, (text) => executed.push(text));
const A = () => app.client(pgrstTokenA);
const B = () => app.client(pgrstTokenB);
const bearer = (token = pgrstTokenA): Record<string, string> => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query(`
    CREATE DOMAIN pgrst."application/octet-stream" AS bytea;
    CREATE DOMAIN pgrst."text/plain" AS text;
    CREATE DOMAIN pgrst."text/xml" AS xml;
    CREATE FUNCTION pgrst.v_count_books() RETURNS bigint LANGUAGE sql STABLE AS $$ SELECT count(*) FROM pgrst.books $$;
    CREATE FUNCTION pgrst.v_book(p_id integer) RETURNS pgrst.books LANGUAGE sql STABLE AS $$ SELECT * FROM pgrst.books WHERE id = p_id $$;
    CREATE FUNCTION pgrst.v_titles() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT title FROM pgrst.books ORDER BY id $$;
    CREATE FUNCTION pgrst.v_bytes(bytea) RETURNS pgrst."application/octet-stream" LANGUAGE sql STABLE
      AS $$ SELECT ($1 || decode(lpad(to_hex((SELECT count(*) FROM pgrst.books)::int), 2, '0'), 'hex'))::pgrst."application/octet-stream" $$;
    CREATE FUNCTION pgrst.v_text(text) RETURNS pgrst."text/plain" LANGUAGE sql STABLE
      AS $$ SELECT ($1 || ' / ' || (SELECT count(*) FROM pgrst.books))::pgrst."text/plain" $$;
    CREATE FUNCTION pgrst.v_xml(xml) RETURNS pgrst."text/xml" LANGUAGE sql STABLE
      AS $$ SELECT xmlconcat($1, xmlelement(name books, (SELECT count(*) FROM pgrst.books)))::pgrst."text/xml" $$;
    CREATE FUNCTION pgrst.v_plain() RETURNS pgrst."text/plain" LANGUAGE sql STABLE AS $$ SELECT 'plain'::pgrst."text/plain" $$;
    CREATE FUNCTION pgrst.v_no_bytes() RETURNS pgrst."application/octet-stream" LANGUAGE sql STABLE AS $$ SELECT NULL::pgrst."application/octet-stream" $$;
    GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgrst TO tablegate_app;
  `);
  app = await startPostgrestApp({}, db);
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await app?.close();
  await db?.drop();
});

describe('read parameters on a call returning one scalar', () => {
  it.each([
    [pgrstTokenA, 5],
    [pgrstTokenB, 2],
  ])('filters on pgrst_scalar keep or drop the value; each tenant counts its own rows', async (token, n) => {
    const c = () => app.client(token);
    const kept = await c().rpc('v_count_books').eq('pgrst_scalar', n);
    expect({ data: kept.data, error: kept.error, status: kept.status }).toEqual({ data: n, error: null, status: 200 });
    const dropped = await c().rpc('v_count_books', undefined, { get: true, count: 'exact' }).gt('pgrst_scalar', n);
    expect({ data: dropped.data, error: dropped.error, status: dropped.status, count: dropped.count }).toEqual({ data: null, error: null, status: 200, count: 0 });
  });

  it('Content-Range as PostgREST: one row whatever the filters, the total counted', async () => {
    const res = (q: string, prefer?: string) => fetch(`${app.url}/rpc/v_count_books?${q}`, { headers: { ...bearer(), ...(prefer ? { Prefer: prefer } : {}) } });
    const plain = await res('pgrst_scalar=gt.1');
    expect([plain.status, plain.headers.get('content-range'), await plain.text()]).toEqual([200, '0-0/*', '5']);
    const counted = await res('pgrst_scalar=gt.1', 'count=exact');
    expect([counted.status, counted.headers.get('content-range'), await counted.text()]).toEqual([200, '0-0/1', '5']);
    const none = await res('pgrst_scalar=lt.1', 'count=exact');
    expect([none.status, none.headers.get('content-range'), await none.text()]).toEqual([200, '*/0', 'null']);
    const paged = await res('offset=1', 'count=exact');
    expect([paged.status, paged.headers.get('content-range'), await paged.text()]).toEqual([200, '1-1/1', 'null']);
  });

  it('singular and CSV bodies; a select other than pgrst_scalar is 42703', async () => {
    const single = await A().rpc('v_count_books').select('pgrst_scalar').single();
    expect({ data: single.data, error: single.error }).toEqual({ data: 5, error: null });
    const csv = await A().rpc('v_count_books').csv();
    expect({ data: csv.data, status: csv.status }).toEqual({ data: 'pgrst_scalar\n5', status: 200 });
    const unknown = await A().rpc('v_count_books').select('nope');
    expect({ status: unknown.status, code: unknown.error?.code }).toEqual({ status: 400, code: '42703' });
    const renamed = await A().rpc('v_count_books').select('n:pgrst_scalar');
    expect({ status: renamed.status, code: renamed.error?.code }).toEqual({ status: 400, code: '42703' });
  });

  it('read parameters on a void function are still refused (PGRST127): there is nothing to read', async () => {
    const { status, error } = await A().rpc('touch').eq('x', 1);
    expect({ status, code: error?.code }).toEqual({ status: 400, code: 'PGRST127' });
  });
});

describe('read parameters on a call returning one row', () => {
  it('select with an embed and filters over the row, under RLS for each tenant', async () => {
    const { data, error } = await A().rpc('v_book', { p_id: 2 }).select('id,title,author:authors!author_id(name)');
    expect({ data, error }).toEqual({ data: { id: 2, title: 'Jane Eyre', author: { name: 'Brontë' } }, error: null });
    const filtered = await A().rpc('v_book', { p_id: 2 }, { get: true }).select('id').gt('pages', 1000);
    expect({ data: filtered.data, error: filtered.error, status: filtered.status }).toEqual({ data: null, error: null, status: 200 });
    // Tenant B's call cannot read A's book: the function's body runs under RLS as B.
    const b = await B().rpc('v_book', { p_id: 2 }).select('id,title');
    // No row: the function's NULL composite, read as PostgREST reads it (a row whose columns are null).
    expect({ data: b.data, error: b.error }).toEqual({ data: { id: null, title: null }, error: null });
    const own = await B().rpc('v_book', { p_id: 11 }).select('title');
    expect(own.data).toEqual({ title: 'Tenant B Secrets' });
  });

  it('a table the access policy denies, embedded in the row, is 403 before SQL', async () => {
    const guarded = await appWith({ access: { policy: { default_decision: 'allow', tables: { authors: { operations: [] } } } } });
    executed = [];
    const { status, error } = await guarded.client().rpc('v_book', { p_id: 2 }).select('id,authors!author_id(name)');
    expect({ status, code: error?.code }).toEqual({ status: 403, code: '42501' });
    expect(executed).toEqual([]);
  });
});

describe('a call returning a set of scalars is read as rows of pgrst_scalar', () => {
  it.each([
    [pgrstTokenA, ['Notes on the Engine', 'Jane Eyre', 'Shirley', 'Radioactive Substances', 'Poems of the Moors']],
    [pgrstTokenB, ['Tenant B Secrets', 'Tenant B Science']],
  ])('its elements are counted (count=exact, Content-Range), each tenant its own', async (token, titles) => {
    const { data, count, status, error } = await app.client(token).rpc('v_titles', undefined, { count: 'exact' });
    expect({ data, count, status, error }).toEqual({ data: titles, count: titles.length, status: 200, error: null });
    const raw = await fetch(`${app.url}/rpc/v_titles`, { headers: bearer(token) });
    expect(raw.headers.get('content-range')).toBe(`0-${titles.length - 1}/*`);
  });

  it('filters, order, limit and offset apply to the elements; a partial page is 206', async () => {
    const page = await A().rpc('v_titles', undefined, { get: true, count: 'exact' }).like('pgrst_scalar', '*e*').order('pgrst_scalar', { ascending: false }).range(1, 2);
    expect({ data: page.data, count: page.count, status: page.status }).toEqual({ data: ['Radioactive Substances', 'Poems of the Moors'], count: 5, status: 206 });
    const some = await A().rpc('v_titles').in('pgrst_scalar', ['Shirley', 'Jane Eyre']);
    expect(some.data).toEqual(['Jane Eyre', 'Shirley']);
    const head = await A().rpc('v_titles', undefined, { head: true, count: 'exact' }).neq('pgrst_scalar', 'Shirley');
    expect({ status: head.status, count: head.count, data: head.data }).toEqual({ status: 200, count: 4, data: null });
  });

  it('max-affected counts the elements left by the filters', async () => {
    const call = (q: string) => fetch(`${app.url}/rpc/v_titles?${q}`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/json', Prefer: 'handling=strict, max-affected=2' }, body: '{}' });
    const over = await call('select=pgrst_scalar');
    expect([over.status, ((await over.json()) as Any).code]).toEqual([400, 'PGRST124']);
    const under = await call('pgrst_scalar=like.*Eng*');
    expect([under.status, (await under.json()) as Any]).toEqual([200, ['Notes on the Engine']]);
  });
});

describe('bodies that are not JSON, and values sent as they are', () => {
  // Not valid UTF-8 (0xff, 0x80): a body read as text would be refused or altered.
  const bytes = Uint8Array.from([0xff, 0x00, 0x80, 0x41, 0x0a]);

  it.each([
    [pgrstTokenA, 5],
    [pgrstTokenB, 2],
  ])('application/octet-stream goes to the one unnamed bytea argument and comes back as bytes (RLS inside: %#)', async (token, n) => {
    const res = await fetch(`${app.url}/rpc/v_bytes`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/octet-stream', Accept: 'application/octet-stream' }, body: bytes });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect([...new Uint8Array(await res.arrayBuffer())]).toEqual([...bytes, n]);
    // Accept JSON (the default): the value's JSON, bytea's hex text.
    const json = await fetch(`${app.url}/rpc/v_bytes`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/octet-stream' }, body: bytes });
    expect([json.status, (await json.json()) as Any]).toEqual([200, `\\xff0080410a0${n}`]);
  });

  it('text/plain and text/xml bodies go to one unnamed text / xml argument; Accept of the domain answers the text', async () => {
    const text = await fetch(`${app.url}/rpc/v_text`, { method: 'POST', headers: { ...bearer(pgrstTokenB), 'Content-Type': 'text/plain', Accept: 'text/plain' }, body: 'héllo' });
    expect([text.status, text.headers.get('content-type'), await text.text()]).toEqual([200, 'text/plain; charset=utf-8', 'héllo / 2']);
    const xml = await fetch(`${app.url}/rpc/v_xml`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'text/xml', Accept: 'text/xml' }, body: '<a>1</a>' });
    expect([xml.status, xml.headers.get('content-type'), await xml.text()]).toEqual([200, 'text/xml; charset=utf-8', '<a>1</a><books>5</books>']);
    const got = await fetch(`${app.url}/rpc/v_plain`, { headers: { ...bearer(), Accept: 'text/plain, application/json' } });
    expect([got.status, got.headers.get('content-type'), await got.text()]).toEqual([200, 'text/plain; charset=utf-8', 'plain']);
    const json = await fetch(`${app.url}/rpc/v_plain`, { headers: { ...bearer(), Accept: 'application/json, text/plain' } });
    expect([json.status, await json.text()]).toEqual([200, '"plain"']);
    const empty = await fetch(`${app.url}/rpc/v_no_bytes`, { headers: { ...bearer(), Accept: 'application/octet-stream' } });
    expect([empty.status, empty.headers.get('content-type'), await empty.text()]).toEqual([200, 'application/octet-stream', '']);
  });

  it('a media type the function does not return is 406; no function of that argument is 404 PGRST202 with PostgREST details', async () => {
    const wrong = await fetch(`${app.url}/rpc/v_plain`, { headers: { ...bearer(), Accept: 'text/xml' } });
    expect([wrong.status, ((await wrong.json()) as Any).code]).toEqual([406, 'PGRST107']);
    const missing = await fetch(`${app.url}/rpc/add`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/octet-stream' }, body: bytes });
    expect([missing.status, (await missing.json()) as Any]).toEqual([
      404,
      { code: 'PGRST202', message: 'Could not find the function pgrst.add in the schema cache', details: 'Searched for the function pgrst.add with a single unnamed bytea parameter, but no matches were found in the schema cache.', hint: null },
    ]);
    const xml = await fetch(`${app.url}/rpc/add`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'text/xml' }, body: '<a/>' });
    expect([xml.status, ((await xml.json()) as Any).details]).toEqual([404, 'Searched for the function pgrst.add with a single unnamed xml parameter, but no matches were found in the schema cache.']);
  });

  it('max_request_body_bytes bounds an octet-stream body (413), the function allow-list refuses before SQL (403)', async () => {
    const small = await appWith({ maxRequestBodyBytes: 4 });
    const big = await fetch(`${small.url}/rpc/v_bytes`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/octet-stream' }, body: bytes });
    expect(big.status).toBe(413);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-rpc-values-'));
    const list = path.join(dir, 'functions.txt');
    fs.writeFileSync(list, 'pgrst.v_text\n');
    try {
      const guarded = await appWith({ rpcAllowlistPath: list });
      executed = [];
      const refused = await fetch(`${guarded.url}/rpc/v_bytes`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/octet-stream', Accept: 'application/octet-stream' }, body: bytes });
      expect(refused.status).toBe(403);
      const scalar = await guarded.client().rpc('v_count_books').eq('pgrst_scalar', 5);
      expect(scalar.status).toBe(403);
      expect(executed).toEqual([]);
      const allowed = await fetch(`${guarded.url}/rpc/v_text`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'text/plain', Accept: 'text/plain' }, body: 'ok' });
      expect([allowed.status, await allowed.text()]).toEqual([200, 'ok / 5']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('postgrest_version 12 serves the same', async () => {
    const v12 = await appWith({ postgrestVersion: 12 });
    const res = await fetch(`${v12.url}/rpc/v_bytes`, { method: 'POST', headers: { ...bearer(), 'Content-Type': 'application/octet-stream', Accept: 'application/octet-stream' }, body: bytes });
    expect([...new Uint8Array(await res.arrayBuffer())]).toEqual([...bytes, 5]);
    const { data, count } = await v12.client().rpc('v_titles', undefined, { count: 'exact' }).eq('pgrst_scalar', 'Shirley');
    expect({ data, count }).toEqual({ data: ['Shirley'], count: 1 });
    const scalar = await v12.client().rpc('v_count_books').eq('pgrst_scalar', 5);
    expect(scalar.data).toBe(5);
  });
});
