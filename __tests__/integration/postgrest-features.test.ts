/**
 * The PostgREST dialect beyond plain reads, through @supabase/postgrest-js and supabase-js over
 * HTTP (docs/postgrest-dialect.md): aggregates (and their switch), the plan media type (under the
 * explain route's access rule), PostgREST 12 vs 13, error bodies and statuses, the access policy
 * and the allow-list (refusals before SQL). Fixture: __tests__/fixtures/080-postgrest.sql.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@supabase/supabase-js';
import type { GatewayOptions } from '../../lib';
import { pgrstTokenA, recordingApps, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
const apps: PostgrestApp[] = [];
/** SQL the execute stage was asked to run, per app (a refusal before SQL leaves it empty). */
let executed: string[] = [];

const appWith = recordingApps(() => db, apps, (text) => executed.push(text));

let app: PostgrestApp;
beforeAll(async () => {
  db = await createTestDatabase();
  app = await appWith();
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await db.drop();
});
beforeEach(() => {
  executed = [];
});

const bearer = (token = pgrstTokenA): Record<string, string> => ({ Authorization: `Bearer ${token}` });

describe('aggregates', () => {
  it('count() alone, and grouped by the other selected columns', async () => {
    expect((await app.client().from('books').select('count()')).data).toEqual([{ count: 5 }]);
    const { data, error } = await app.client().from('books').select('genre, count()').order('genre');
    expect(error).toBeNull();
    expect(data).toEqual([
      { genre: 'fiction', count: 2 },
      { genre: 'science', count: 2 },
      { genre: 'poetry', count: 1 },
    ]);
  });

  it('sum avg min max, with aliases and casts of the result, under filters', async () => {
    const { data, error } = await app.client().from('books').select('pages.sum(), avg_price:price.avg()::int, pages.min(), pages.max(), id.count()').neq('genre', 'poetry');
    expect(error).toBeNull();
    expect(data).toEqual([{ sum: 1170, avg_price: 22, min: 120, max: 500, count: 4 }]);
  });

  it('inside an embedded resource', async () => {
    const { data, error } = await app.client().from('authors').select('name, books!author_id(count(), pages.sum())').order('id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { name: 'Ada', books: [{ count: 1, sum: 120 }] },
      { name: 'Brontë', books: [{ count: 3, sum: 980 }] },
      { name: 'Curie', books: [{ count: 1, sum: 150 }] },
    ]);
  });

  it('beside an embedded resource: grouped by the embedded value, spread too', async () => {
    const { data, error } = await app.client().from('books').select('count(), pages.sum(), author:authors!author_id(name)').order('author_id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { count: 1, sum: 120, author: { name: 'Ada' } },
      { count: 3, sum: 980, author: { name: 'Brontë' } },
      { count: 1, sum: 150, author: { name: 'Curie' } },
    ]);
    const spread = await app.client().from('books').select('genre, count(), ...authors!author_id(name)').eq('genre', 'fiction');
    expect(spread.data).toEqual([{ genre: 'fiction', count: 2, name: 'Brontë' }]);
  });

  it('postgrest_aggregates = false refuses them with PGRST123 before SQL', async () => {
    const off = await appWith({ postgrestAggregates: false });
    executed = [];
    const { error, status } = await off.client().from('books').select('count()');
    expect(status).toBe(400);
    expect(error?.code).toBe('PGRST123');
    expect(executed).toEqual([]);
  });
});

describe('the plan media type', () => {
  it('is refused like the explain route to callers explain_roles does not name (403 before SQL)', async () => {
    const { error, status } = await app.client().from('books').select('id').explain();
    expect(status).toBe(403);
    expect(error).toMatchObject({ code: '42501' });
    expect(executed).toEqual([]);
  });

  it('answers EXPLAIN of the read for a listed role, as text or JSON, with options', async () => {
    const open = await appWith({ explainRoles: ['member'] });
    const text = await open.client().from('books').select('id').eq('genre', 'fiction').explain();
    expect(text.error).toBeNull();
    expect(text.data).toMatch(/Scan/);
    const json = await open.client().from('books').select('id').explain({ format: 'json', analyze: true });
    expect(json.error).toBeNull();
    const plan = json.data as unknown as { Plan: { 'Actual Rows'?: number } }[];
    expect(Array.isArray(plan)).toBe(true);
    expect(plan[0]!.Plan).toHaveProperty('Actual Rows');
  });

  it('for= chooses the body whose statement is explained; the media type echoes for= and the options as listed', async () => {
    const open = await appWith({ explainRoles: ['member'] });
    const outputOf = async (accept: string): Promise<{ type: string | null; output: string }> => {
      const res = await fetch(`${open.url}/books?select=id,title&id=lt.3`, { headers: { ...bearer(), Accept: accept } });
      expect(res.status).toBe(200);
      const plan = (await res.json()) as { Plan: { Output: string[] } }[];
      return { type: res.headers.get('content-type'), output: plan[0]!.Plan.Output.join(' ') };
    };
    const json = await outputOf('application/vnd.pgrst.plan+json; options=verbose');
    expect(json.type).toBe('application/vnd.pgrst.plan+json; for="application/json"; options=verbose; charset=utf-8');
    expect(json.output).toContain('json_agg');
    const object = await outputOf('application/vnd.pgrst.plan+json; for="application/vnd.pgrst.object"; options=verbose');
    expect(object.type).toBe('application/vnd.pgrst.plan+json; for="application/vnd.pgrst.object+json"; options=verbose; charset=utf-8');
    expect(object.output).toContain('array_agg');
    expect(object.output).not.toContain('json_agg');
    const csv = await outputOf('application/vnd.pgrst.plan+json; for="text/csv"; options=verbose|analyze');
    expect(csv.type).toBe('application/vnd.pgrst.plan+json; for="text/csv"; options=verbose|analyze; charset=utf-8');
    expect(csv.output).toContain('string_agg');
    const text = await fetch(`${open.url}/books?select=id`, { headers: { ...bearer(), Accept: 'application/vnd.pgrst.plan' } });
    expect(text.headers.get('content-type')).toBe('application/vnd.pgrst.plan+text; for="application/json"; charset=utf-8');
    expect(await text.text()).toMatch(/^Aggregate/);
    const unknownFor = await fetch(`${open.url}/books`, { headers: { ...bearer(), Accept: 'application/vnd.pgrst.plan+json; for="application/xml"' } });
    expect(unknownFor.status).toBe(406);
  });

  it('explains writes and calls too, under the same rule; without analyze nothing is written', async () => {
    const open = await appWith({ explainRoles: ['member'] });
    const planHeaders = { ...bearer(), Accept: 'application/vnd.pgrst.plan+json', 'Content-Type': 'application/json' };
    const insert = await fetch(`${open.url}/shelves`, { method: 'POST', headers: planHeaders, body: JSON.stringify({ id: 50, label: 'Planned' }) });
    expect(insert.status).toBe(200);
    expect(insert.headers.get('content-type')).toBe('application/vnd.pgrst.plan+json; for="application/json"; charset=utf-8');
    const plan = (await insert.json()) as { Plan: { 'Node Type': string; Plans?: { 'Node Type': string; Operation?: string }[] } }[];
    expect(JSON.stringify(plan)).toContain('"Operation":"Insert"');
    expect((await open.client().from('shelves').select('id').eq('id', 50)).data).toEqual([]);
    const update = await fetch(`${open.url}/books?id=eq.1`, { method: 'PATCH', headers: { ...planHeaders, Prefer: 'return=representation' }, body: JSON.stringify({ pages: 1 }) });
    expect(update.status).toBe(200);
    expect(JSON.stringify(await update.json())).toContain('"Operation":"Update"');
    const del = await fetch(`${open.url}/books?id=eq.1`, { method: 'DELETE', headers: { ...bearer(), Accept: 'application/vnd.pgrst.plan+text' } });
    expect(del.headers.get('content-type')).toBe('application/vnd.pgrst.plan+text; for="application/json"; charset=utf-8');
    expect(await del.text()).toMatch(/Delete on/);
    expect((await open.client().from('books').select('pages').eq('id', 1)).data).toEqual([{ pages: 120 }]);
    // Calls: a set of rows (read as the plan's for= body) and a scalar.
    const rows = await open.client().rpc('books_by_genre', { g: 'science' }).explain({ format: 'json' });
    expect(rows.error).toBeNull();
    // A SQL function is inlined: its query's scan of books is in the plan.
    expect(JSON.stringify(rows.data)).toContain('"Relation Name":"books"');
    const scalar = await fetch(`${open.url}/rpc/add?a=1&b=2`, { headers: { ...bearer(), Accept: 'application/vnd.pgrst.plan+json; options=analyze' } });
    expect(scalar.status).toBe(200);
    expect(scalar.headers.get('content-type')).toBe('application/vnd.pgrst.plan+json; for="application/json"; options=analyze; charset=utf-8');
    expect((await scalar.json()) as unknown[]).toHaveLength(1);
    // The default app does not list the caller's role: 403 before any SQL, for writes and calls too.
    executed = [];
    const refusedWrite = await fetch(`${app.url}/shelves`, { method: 'POST', headers: planHeaders, body: JSON.stringify({ id: 51, label: 'x' }) });
    expect(refusedWrite.status).toBe(403);
    const refusedCall = await app.client().rpc('add', { a: 1, b: 2 }).explain();
    expect(refusedCall.status).toBe(403);
    expect(executed).toEqual([]);
  });

  it('is unavailable (406) with explain_enabled = false', async () => {
    const off = await appWith({ explainEnabled: false, explainRoles: ['member'] });
    const { status, error } = await off.client().from('books').select('id').explain();
    expect(status).toBe(406);
    expect(error?.code).toBe('PGRST107');
  });
});

describe('Prefer: timezone', () => {
  it('renders timestamps in the time zone asked for, for that request only; an unknown zone is ignored, or PGRST122 when strict', async () => {
    const during = async (prefer?: string): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${app.url}/events?select=during&id=eq.1`, { headers: { ...bearer(), ...(prefer ? { Prefer: prefer } : {}) } });
      return { status: res.status, body: await res.json() };
    };
    const utc = await during();
    expect(utc.body).toEqual([{ during: '["2024-01-01 10:00:00+00","2024-01-01 12:00:00+00")' }]);
    expect((await during('timezone=Asia/Tokyo')).body).toEqual([{ during: '["2024-01-01 19:00:00+09","2024-01-01 21:00:00+09")' }]);
    // Preference-Applied in PostgREST's order on a read: count, handling, timezone.
    const applied = await fetch(`${app.url}/events?select=id`, { headers: { ...bearer(), Prefer: 'timezone=Asia/Tokyo, handling=strict, count=exact' } });
    expect(applied.headers.get('preference-applied')).toBe('count=exact, handling=strict, timezone=Asia/Tokyo');
    const none = await fetch(`${app.url}/events?select=id`, { headers: { ...bearer(), Prefer: 'timezone=Not/AZone' } });
    expect(none.headers.get('preference-applied')).toBeNull();
    // The next request on the same connections is back in the session's zone.
    for (let i = 0; i < 12; i++) expect((await during()).body).toEqual(utc.body);
    expect(await during('timezone=Not/AZone')).toEqual(utc);
    const strict = await during('timezone=Not/AZone, handling=strict');
    expect(strict.status).toBe(400);
    expect((strict.body as { code: string }).code).toBe('PGRST122');
    // A write's representation too, with the preference confirmed.
    const res = await fetch(`${app.url}/events?id=eq.2`, {
      method: 'PATCH',
      headers: { ...bearer(), 'Content-Type': 'application/json', Prefer: 'return=representation, timezone=America/New_York, tx=rollback' },
      body: JSON.stringify({ name: 'Review' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('return=representation, tx=rollback, timezone=America/New_York');
    expect(((await res.json()) as { during: string }[])[0]!.during).toBe('["2024-02-01 05:00:00-05","2024-02-01 06:00:00-05")');
    // postgrest-js sends it like any preference.
    const { data } = await app.client().from('events').select('during').eq('id', 1).setHeader('Prefer', 'timezone=Asia/Tokyo');
    expect(data).toEqual([{ during: '["2024-01-01 19:00:00+09","2024-01-01 21:00:00+09")' }]);
  });
});

describe('postgrest_version 12 and 13', () => {
  it('13 spreads to-many relations as arrays; 12 refuses with PGRST119', async () => {
    const v12 = await appWith({ postgrestVersion: 12 });
    const refused = await v12.client().from('authors').select('name, ...books!author_id(title)');
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe('PGRST119');
    const ok = await v12.client().from('books').select('title, ...authors!author_id(name)').eq('id', 1);
    expect(ok.data).toEqual([{ title: 'Notes on the Engine', name: 'Ada' }]);
    expect((await app.client().from('authors').select('name, ...books!author_id(title)').eq('id', 1)).data).toEqual([{ name: 'Ada', title: ['Notes on the Engine'] }]);
  });

  it("object+json with several rows: PGRST116 in each version's words", async () => {
    const v12 = await appWith({ postgrestVersion: 12 });
    const details = 'The result contains 5 rows';
    expect(await app.client().from('books').select('id').single()).toMatchObject({ status: 406, error: { code: 'PGRST116', message: 'Cannot coerce the result to a single JSON object', details } });
    expect(await v12.client().from('books').select('id').single()).toMatchObject({ status: 406, error: { code: 'PGRST116', message: 'JSON object requested, multiple (or no) rows returned', details } });
    // A singular write too (rolled back): the same words.
    const write = await v12.client().from('books').update({ pages: 1 }).eq('genre', 'fiction').select('id').single();
    expect(write).toMatchObject({ status: 406, error: { code: 'PGRST116', message: 'JSON object requested, multiple (or no) rows returned' } });
    expect((await app.client().from('books').select('pages').eq('id', 2)).data).toEqual([{ pages: 500 }]);
  });

  it('a schema that is not exposed: PGRST106 in 13 words with a hint, in 12 words without', async () => {
    const v12 = await appWith({ postgrestVersion: 12 });
    expect(await app.client(undefined, 'secret').from('books').select('id')).toMatchObject({
      status: 406,
      error: { code: 'PGRST106', message: 'Invalid schema: secret', hint: 'Only the following schemas are exposed: pgrst, pgrst_alt' },
    });
    expect(await v12.client(undefined, 'secret').from('books').select('id')).toMatchObject({
      status: 406,
      error: { code: 'PGRST106', message: 'The schema must be one of the following: pgrst, pgrst_alt', hint: null },
    });
  });

  it('an expired token: 401 "JWT expired", PGRST303 in 13 and PGRST301 in 12, with error_description; other bad tokens stay generic', async () => {
    const v12 = await appWith({ postgrestVersion: 12 });
    const expired = signToken({ tenant_id: TENANT_A, exp: Math.floor(Date.now() / 1000) - 600 });
    for (const [server, code] of [[app, 'PGRST303'], [v12, 'PGRST301']] as const) {
      const res = await fetch(`${server.url}/books`, { headers: { Authorization: `Bearer ${expired}` } });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token", error_description="JWT expired"');
      expect(await res.json()).toEqual({ code, message: 'JWT expired', details: null, hint: null });
      expect(await server.client(expired).from('books').select('id')).toMatchObject({ status: 401, error: { code, message: 'JWT expired' } });
    }
    // A forged token (another key) with a past exp: the signature fails first; the generic answer.
    const forged = signToken({ tenant_id: TENANT_A, exp: Math.floor(Date.now() / 1000) - 600 }, 'another-secret-of-at-least-32-bytes!!');
    const res = await fetch(`${app.url}/books`, { headers: { Authorization: `Bearer ${forged}` } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await res.json()).toEqual({ code: 'PGRST301', message: 'The bearer token is invalid or expired.', details: null, hint: null });
  });

  it('a path that is not a route: PGRST125 in 13, an empty object in 12, both 404', async () => {
    const v12 = await appWith({ postgrestVersion: 12 });
    const r13 = await fetch(`${app.url}/books/1/2`, { headers: bearer() });
    expect(r13.status).toBe(404);
    expect(((await r13.json()) as { code: string }).code).toBe('PGRST125');
    const r12 = await fetch(`${v12.url}/books/1/2`, { headers: bearer() });
    expect(r12.status).toBe(404);
    expect(await r12.json()).toEqual({});
  });

  it('an unknown table: PGRST205 in 13, 42P01 in 12, both 404', async () => {
    const v12 = await appWith({ postgrestVersion: 12 });
    expect(await app.client().from('nope').select()).toMatchObject({ status: 404, error: { code: 'PGRST205' } });
    expect(await v12.client().from('nope').select()).toMatchObject({ status: 404, error: { code: '42P01' } });
  });
});

describe('errors as PostgREST sends them', () => {
  const raw = async (pathAndQuery: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> => {
    const res = await fetch(`${app.url}${pathAndQuery}`, { ...init, headers: { ...bearer(), ...(init.headers as Record<string, string> | undefined) } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  };

  it('every body is exactly {code, message, details, hint}', async () => {
    for (const p of ['/books?select=nope', '/nope', '/books?id=eq.abc', '/books?select=id(', '/books/1', '/books?id=xx.1']) {
      const { body } = await raw(p);
      expect(Object.keys(body).sort()).toEqual(['code', 'details', 'hint', 'message']);
      expect(typeof body.message).toBe('string');
    }
  });

  it('codes and statuses', async () => {
    expect(await raw('/books?select=nope')).toMatchObject({ status: 400, body: { code: '42703', message: 'column books.nope does not exist' } });
    expect(await raw('/nope')).toMatchObject({ status: 404, body: { code: 'PGRST205' } });
    expect(await raw('/books?id=eq.abc')).toMatchObject({ status: 400, body: { code: '22P02' } });
    expect(await raw('/books?select=id(')).toMatchObject({ status: 400, body: { code: 'PGRST100' } });
    expect(await raw('/books?id=xx.1')).toMatchObject({ status: 400, body: { code: 'PGRST100' } });
    expect(await raw('/books?select=id::regclass')).toMatchObject({ status: 400, body: { code: 'PGRST100' } });
    expect(await raw('/books?select=id.median()')).toMatchObject({ status: 400, body: { code: 'PGRST100' } });
    // A cast or aggregate the column's type lacks is the caller's: 400 with the SQLSTATE (the fuzz found a 500 here).
    expect(await raw('/events?select=id::jsonb.max()')).toMatchObject({ status: 400, body: { code: '42846' } });
    // PostgREST sends 42883 as 404 whatever the statement (it is its status for an unknown function).
    expect(await raw('/books?select=meta.sum()')).toMatchObject({ status: 404, body: { code: '42883' } });
    expect(await raw('/books/1')).toMatchObject({ status: 404, body: { code: 'PGRST125' } });
    // GET / is the OpenAPI document (postgrest-rpc.test.ts, "GET / (OpenAPI)").
    expect(await raw('/')).toMatchObject({ status: 200, body: { openapi: expect.stringMatching(/^3\.1/) } });
    expect(await raw('/books', { method: 'PURGE' })).toMatchObject({ status: 405, body: { code: 'PGRST117' } });
  });

  it('caps and refusals of the grammar: too many embeds or filters, to-many order, strict preferences', async () => {
    const embeds = Array.from({ length: 17 }, (_, i) => `e${i}:author_bios(bio)`).join(',');
    expect(await raw(`/authors?select=id,${embeds}`)).toMatchObject({ status: 400, body: { code: 'PGRST100' } });
    expect(await raw(`/books?${Array.from({ length: 101 }, (_, i) => `id=neq.${i}`).join('&')}`)).toMatchObject({ status: 400, body: { code: 'PGRST100' } });
    expect(await raw('/books?select=id,shelves(label)&order=shelves(label)')).toMatchObject({ status: 400, body: { code: 'PGRST118' } });
    expect(await raw('/books?select=id', { headers: { Prefer: 'handling=strict, count=bogus' } })).toMatchObject({ status: 400, body: { code: 'PGRST122' } });
    expect(executed).toEqual([]);
  });

  it('a read with nested embeds is one statement', async () => {
    const { error } = await app.client().from('shelves').select('label, books(title, authors!author_id(name, author_bios(bio)), editor:authors!books_editor_fkey(name))');
    expect(error).toBeNull();
    expect(executed).toHaveLength(1);
  });

  it('a write PostgreSQL refuses writes nothing; an unknown function is PGRST202 before SQL (writes and calls: postgrest-write / postgrest-rpc tests)', async () => {
    const insert = await app.client().from('books').insert({ id: 50, title: 'x', author_id: 1, genre: 'no-such-genre' });
    expect(insert).toMatchObject({ status: 400, error: { code: '22P02' } });
    executed = [];
    const rpc = await app.client().rpc('anything', { a: 1 });
    expect(rpc).toMatchObject({ status: 404, error: { code: 'PGRST202' } });
    expect(executed).toEqual([]);
    const { rows } = await db.admin.query('SELECT count(*)::int AS n FROM pgrst.books');
    expect(rows[0].n).toBe(7);
  });

  it('a bad token is 401 PGRST301 with WWW-Authenticate; none is 401 too (require_auth)', async () => {
    const bad = await fetch(`${app.url}/books`, { headers: { Authorization: `Bearer ${signToken({ tenant_id: TENANT_A }, 'another-secret-of-at-least-32-bytes!!')}` } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain('Bearer');
    expect(((await bad.json()) as { code: string }).code).toBe('PGRST301');
    const none = await fetch(`${app.url}/books`);
    expect(none.status).toBe(401);
  });
});

describe('access policy and allow-list (refused before SQL)', () => {
  const policy = {
    default_decision: 'allow',
    tables: {
      authors: { operations: ['read'], read_columns: { except: ['secret'] } },
      events: { operations: [] },
    },
  };

  it('a denied column in select, a filter, an or tree, order or an embed is 403 42501; * drops it', async () => {
    const guarded = await appWith({ access: { policy } });
    const c = () => guarded.client();
    for (const q of [
      c().from('authors').select('secret'),
      c().from('authors').select('id').eq('secret', 's1'),
      c().from('authors').select('id').or('id.eq.1,secret.eq.s1'),
      c().from('authors').select('id').order('secret'),
      c().from('books').select('id, authors!author_id(secret)'),
      c().from('books').select('id, authors!author_id(name)').eq('authors.secret', 's1'),
      c().from('books').select('id, ...authors!author_id(secret)'),
    ]) {
      executed = [];
      const { status, error } = await q;
      expect({ status, code: error?.code }).toEqual({ status: 403, code: '42501' });
      expect(executed).toEqual([]);
    }
    const star = await c().from('authors').select('*').eq('id', 1);
    expect(star.data).toEqual([{ id: 1, tenant_id: TENANT_A, name: 'Ada', born: '1815-12-10' }]);
    const embedStar = await c().from('books').select('id, authors!author_id(*)').eq('id', 1);
    expect(embedStar.data).toEqual([{ id: 1, authors: { id: 1, tenant_id: TENANT_A, name: 'Ada', born: '1815-12-10' } }]);
  });

  it('a denied table, also as an embed, is 403 before SQL', async () => {
    const guarded = await appWith({ access: { policy } });
    executed = [];
    expect((await guarded.client().from('events').select('id')).status).toBe(403);
    expect(executed).toEqual([]);
  });

  it("a legacy policy's row filter applies to every level, the junction table of a many-to-many embed too", async () => {
    const legacy = await appWith({
      policy: ['policies:', '  - name: one shelf', '    table: book_shelves', '    operations: [read]', '    filter: shelf_id = $user_id', '  - name: the rest', '    table: "*"', '    operations: [read]'].join('\n'),
    });
    const token = signToken({ tenant_id: TENANT_A, user_id: '1', role: 'member' });
    const { data, error } = await legacy.client(token).from('books').select('id, shelves(id)').eq('id', 2);
    expect(error).toBeNull();
    expect(data).toEqual([{ id: 2, shelves: [{ id: 1 }] }]);
    expect((await app.client().from('books').select('id, shelves(id)').eq('id', 2).order('id', { referencedTable: 'shelves' })).data).toEqual([{ id: 2, shelves: [{ id: 1 }, { id: 2 }] }]);
  });

  it('the allow-list takes one canonical pattern per query shape, whatever the values and parameter order', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-pgrst-allow-'));
    const file = path.join(dir, 'allow.txt');
    fs.writeFileSync(file, 'GET pgrst.books select=id,title,authors!author_id(name) genre=eq pages=gt order=id.asc limit\n');
    const listed = await appWith({ allowListPath: file });
    const a = await listed.client().from('books').select('id,title,authors!author_id(name)').eq('genre', 'fiction').gt('pages', 10).order('id').limit(3);
    expect(a.error).toBeNull();
    expect(a.data).toHaveLength(2);
    const reordered = await fetch(`${listed.url}/books?pages=gt.1&limit=1&order=id.asc&genre=eq.science&select=id,title,authors!author_id(name)`, { headers: bearer() });
    expect(reordered.status).toBe(200);
    executed = [];
    const other = await listed.client().from('books').select('id,title').eq('genre', 'fiction');
    expect(other.status).toBe(403);
    expect(other.error?.code).toBe('42501');
    expect(JSON.parse(other.error!.details)).toMatchObject({ pattern: 'GET pgrst.books select=id,title genre=eq' });
    expect(executed).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('dev mode shows the pattern in x-gw-query-pattern', async () => {
    const dev = await appWith({ devMode: true });
    const res = await fetch(`${dev.url}/books?select=id,shelves(label)&or=(id.eq.1,and(pages.gt.1,genre.eq.fiction))&shelves.order=label.desc`, { headers: bearer() });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gw-query-pattern')).toBe('GET pgrst.books select=id,shelves(label) or=(and(genre.eq,pages.gt),id.eq) shelves.order=label.desc');
  });
});

describe('supabase-js', () => {
  it('.from() reads through the dialect at /rest/v1', async () => {
    const base = app.url.replace(/\/rest\/v1$/, '');
    // Realtime is never connected here; Node 20 has no WebSocket, so supabase-js is given a placeholder.
    const supabase = createClient(base, pgrstTokenA, { db: { schema: 'pgrst' }, auth: { persistSession: false, autoRefreshToken: false }, realtime: { transport: class {} as never } });
    const { data, error } = await supabase.from('books').select('title, author:authors!author_id(name)').eq('genre', 'science').order('id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { title: 'Notes on the Engine', author: { name: 'Ada' } },
      { title: 'Radioactive Substances', author: { name: 'Curie' } },
    ]);
    void TEST_JWT_SECRET;
  });
});
