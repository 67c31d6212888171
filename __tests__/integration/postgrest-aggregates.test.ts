/**
 * Aggregates of the PostgREST dialect as PostgREST 12 and 13 answer them (docs/postgrest-dialect.md,
 * "Aggregates"), through @supabase/postgrest-js against PostgreSQL with forced row-level security
 * and two tenants: count() at the top level and inside embeds (with and without other columns),
 * `sum()` without a column, aggregates of a to-one spread hoisted to the level above (as
 * PostgREST's Plan.hs hoists them), a to-many spread's refused (PostgREST 13: PGRST127),
 * `select=...,count()` with filters on `!inner` embeds, and the access policy and allow-list
 * before SQL. Fixture: __tests__/fixtures/080-postgrest.sql.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GatewayOptions } from '../../lib';
import { pgrstTokenA, pgrstTokenB, recordingApps, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
const apps: PostgrestApp[] = [];
/** SQL the execute stage was asked to run (a refusal before SQL leaves it empty). */
let executed: string[] = [];

const appWith = recordingApps(() => db, apps, (text) => executed.push(text));

const byVersion = new Map<12 | 13, PostgrestApp>();
beforeAll(async () => {
  db = await createTestDatabase();
  byVersion.set(12, await appWith({ postgrestVersion: 12 }));
  byVersion.set(13, await appWith({ postgrestVersion: 13 }));
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await db.drop();
});
beforeEach(() => {
  executed = [];
});

/** Rows in a stable order, for groups PostgreSQL returns in any order. */
const sorted = <T>(rows: T[] | null): T[] => [...(rows ?? [])].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

async function raw(app: PostgrestApp, pathAndQuery: string, token = pgrstTokenA): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${app.url}${pathAndQuery}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

describe.each([12, 13] as const)('postgrest_version %d', (version) => {
  const app = (): PostgrestApp => byVersion.get(version)!;

  describe('count() at the top level', () => {
    it('alone, aliased, cast, and grouped by the other columns, per tenant', async () => {
      expect((await app().client().from('books').select('count()')).data).toEqual([{ count: 5 }]);
      expect((await app().client(pgrstTokenB).from('books').select('count()')).data).toEqual([{ count: 2 }]);
      expect((await app().client().from('books').select('cnt:count()')).data).toEqual([{ cnt: 5 }]);
      expect((await app().client().from('books').select('count()::text')).data).toEqual([{ count: '5' }]);
      const grouped = await app().client().from('books').select('c:count(), genre').order('genre', { ascending: false });
      expect(grouped.error).toBeNull();
      expect(grouped.data).toEqual([
        { c: 1, genre: 'poetry' },
        { c: 2, genre: 'science' },
        { c: 2, genre: 'fiction' },
      ]);
    });

    it('under filters, and with no rows: one row counting 0', async () => {
      expect((await app().client().from('books').select('count()').gt('pages', 130)).data).toEqual([{ count: 3 }]);
      expect((await app().client().from('books').select('count(), pages.sum()').eq('title', 'none')).data).toEqual([{ count: 0, sum: null }]);
    });
  });

  describe('count() inside an embedded resource', () => {
    it('alone: one object per parent, 0 where no rows are related', async () => {
      const { data, error } = await app().client().from('authors').select('name, books!editor_id(count())').order('id');
      expect(error).toBeNull();
      expect(data).toEqual([
        { name: 'Ada', books: [{ count: 2 }] },
        { name: 'Brontë', books: [{ count: 2 }] },
        { name: 'Curie', books: [{ count: 0 }] },
      ]);
      const b = await app().client(pgrstTokenB).from('authors').select('name, books!editor_id(count())').order('id');
      expect(b.data).toEqual([
        { name: 'Bob Author', books: [{ count: 0 }] },
        { name: 'Bea Author', books: [{ count: 1 }] },
      ]);
    });

    it('with other columns: grouped by them, an empty array where no rows are related', async () => {
      const { data, error } = await app().client().from('authors').select('name, books!editor_id(genre, count())').order('id');
      expect(error).toBeNull();
      expect(data!.map((a) => ({ ...a, books: sorted(a.books) }))).toEqual([
        { name: 'Ada', books: sorted([{ genre: 'fiction', count: 1 }, { genre: 'science', count: 1 }]) },
        { name: 'Brontë', books: sorted([{ genre: 'science', count: 1 }, { genre: 'poetry', count: 1 }]) },
        { name: 'Curie', books: [] },
      ]);
    });

    it('aliased and cast, beside other aggregates', async () => {
      const { data, error } = await app().client().from('authors').select('name, books!editor_id(n:count()::text, pages.sum(), pages.max())').order('id');
      expect(error).toBeNull();
      expect(data).toEqual([
        { name: 'Ada', books: [{ n: '2', sum: 550, max: 400 }] },
        { name: 'Brontë', books: [{ n: '2', sum: 200, max: 120 }] },
        { name: 'Curie', books: [{ n: '0', sum: null, max: null }] },
      ]);
    });
  });

  describe('sum() without a column', () => {
    it('is an embedded resource named sum, as PostgREST parses it: 400 PGRST200', async () => {
      for (const select of ['sum()', 'name,sum()']) {
        executed = [];
        const { status, body } = await raw(app(), `/authors?select=${select}`);
        expect(status).toBe(400);
        expect(body).toMatchObject({
          code: 'PGRST200',
          message: "Could not find a relationship between 'authors' and 'sum' in the schema cache",
          details: "Searched for a foreign key relationship between 'authors' and 'sum' in the schema 'pgrst', but no matches were found.",
        });
        expect(executed).toEqual([]);
      }
    });

    it('the legacy `count` column (PostgreSQL\'s attribute notation) is not served: 42703', async () => {
      expect(await raw(app(), '/books?select=count')).toMatchObject({ status: 400, body: { code: '42703' } });
    });
  });

  describe('aggregates of a to-one spread, hoisted to the level above', () => {
    it('count() alone: the rows of the level above', async () => {
      expect((await app().client().from('books').select('...authors!author_id(count())')).data).toEqual([{ count: 5 }]);
      expect((await app().client(pgrstTokenB).from('books').select('...authors!author_id(count())')).data).toEqual([{ count: 2 }]);
    });

    it('only aggregates in the spread add no group: no rows aggregate to one row, as count() alone does', async () => {
      expect((await app().client().from('books').select('...authors!author_id(count(), born.max())').eq('id', 999)).data).toEqual([{ count: 0, max: null }]);
      expect((await app().client().from('books').select('genre, ...authors!author_id(count())').eq('id', 999)).data).toEqual([]);
      const perParent = await app().client().from('shelves').select('label, book_shelves(...books(count()))').eq('book_shelves.book_id', 4).order('id');
      expect(perParent.data).toEqual([
        { label: 'Favourites', book_shelves: [{ count: 0 }] },
        { label: 'To read', book_shelves: [{ count: 1 }] },
      ]);
    });

    it('count() beside the spread\'s columns and the parent\'s: grouped by all of them', async () => {
      const { data, error } = await app().client().from('books').select('genre, ...authors!author_id(name, count())');
      expect(error).toBeNull();
      expect(sorted(data)).toEqual(
        sorted([
          { genre: 'fiction', name: 'Brontë', count: 2 },
          { genre: 'science', name: 'Ada', count: 1 },
          { genre: 'science', name: 'Curie', count: 1 },
          { genre: 'poetry', name: 'Brontë', count: 1 },
        ]),
      );
    });

    it('count() counts only rows with a related row (a NULL foreign key counts 0)', async () => {
      const { data, error } = await app().client().from('books').select('editor_id, ...authors!editor_id(count())').order('editor_id');
      expect(error).toBeNull();
      expect(data).toEqual([
        { editor_id: 1, count: 2 },
        { editor_id: 2, count: 2 },
        { editor_id: null, count: 0 },
      ]);
    });

    it('aggregates of columns with alias and casts, and beside the parent\'s own', async () => {
      const { data, error } = await app().client().from('books').select('total:pages.sum(), ...authors!author_id(n:count()::text, born.max(), ids:id.sum())');
      expect(error).toBeNull();
      expect(data).toEqual([{ total: 1250, n: '5', max: '1816-04-21', ids: 10 }]);
    });

    it('through nested to-one spreads, grouped by the columns on the way', async () => {
      const nested = await app().client().from('book_shelves').select('shelf_id, ...books(...authors!author_id(c:count()))').order('shelf_id');
      expect(nested.error).toBeNull();
      expect(nested.data).toEqual([
        { shelf_id: 1, c: 2 },
        { shelf_id: 2, c: 2 },
      ]);
      const middle = await app().client().from('book_shelves').select('...books(genre, ...authors!author_id(count()))');
      expect(sorted(middle.data)).toEqual(sorted([{ genre: 'fiction', count: 2 }, { genre: 'science', count: 2 }]));
    });

    it('ordered by a column of the spread (order=rel(col)), at the top and inside an embed', async () => {
      const top = await app().client().from('book_shelves').select('...books(g:genre, n:count(), pages.sum())').order('books(genre)');
      expect(top.error).toBeNull();
      expect(top.data).toEqual([
        { g: 'fiction', n: 2, sum: 1000 },
        { g: 'science', n: 2, sum: 270 },
      ]);
      const desc = await raw(app(), '/book_shelves?select=...books(genre,count())&order=books(genre).desc');
      expect(desc).toEqual({ status: 200, body: [{ genre: 'science', count: 2 }, { genre: 'fiction', count: 2 }] });
      const inside = await raw(app(), '/shelves?select=label,book_shelves(...books(genre,count()))&book_shelves.order=books(genre).desc&order=id');
      expect(inside.body).toEqual([
        { label: 'Favourites', book_shelves: [{ genre: 'science', count: 1 }, { genre: 'fiction', count: 1 }] },
        { label: 'To read', book_shelves: [{ genre: 'science', count: 1 }, { genre: 'fiction', count: 1 }] },
      ]);
    });

    it('inside an embedded resource: aggregated per parent', async () => {
      const { data, error } = await app().client().from('shelves').select('label, book_shelves(...books(pages.sum(), count()))').order('id');
      expect(error).toBeNull();
      expect(data).toEqual([
        { label: 'Favourites', book_shelves: [{ sum: 620, count: 2 }] },
        { label: 'To read', book_shelves: [{ sum: 650, count: 2 }] },
      ]);
      const grouped = await app().client().from('shelves').select('label, book_shelves(...books(genre, pages.sum()))').eq('id', 1);
      expect(grouped.data!.map((s) => ({ ...s, book_shelves: sorted(s.book_shelves) }))).toEqual([{ label: 'Favourites', book_shelves: sorted([{ genre: 'fiction', sum: 500 }, { genre: 'science', sum: 120 }]) }]);
    });
  });

  it('aggregates in a to-many spread: PostgREST 12 spreads no to-many embed (PGRST119), 13 refuses aggregates in one (PGRST127)', async () => {
    for (const select of ['...books!author_id(count())', 'name,...books!author_id(genre,pages.sum())', 'name,...books!author_id(genre,...authors!editor_id(count()))']) {
      executed = [];
      const { status, body } = await raw(app(), `/authors?select=${select}`);
      expect(status).toBe(400);
      expect(body).toEqual(
        version === 12
          ? expect.objectContaining({ code: 'PGRST119' })
          : { code: 'PGRST127', message: 'Feature not implemented', details: 'Aggregates are not implemented for one-to-many or many-to-many spreads.', hint: null },
      );
      expect(executed).toEqual([]);
    }
  });

  describe('select=...,count() with filters on !inner embeds', () => {
    it('a to-one !inner embed filters the rows counted, grouped by its value', async () => {
      const { data, error } = await app().client().from('books').select('count(), authors!author_id!inner(name)').eq('authors.name', 'Brontë');
      expect(error).toBeNull();
      expect(data).toEqual([{ count: 3, authors: { name: 'Brontë' } }]);
      const left = await app().client().from('books').select('count(), authors!author_id(name)').eq('authors.name', 'Ada');
      expect(sorted(left.data)).toEqual(sorted([{ count: 1, authors: { name: 'Ada' } }, { count: 4, authors: null }]));
    });

    it('an empty !inner embed only filters: grouped by the parent\'s columns', async () => {
      const { data, error } = await app().client().from('books').select('genre, count(), authors!author_id!inner()').eq('authors.name', 'Brontë').order('genre');
      expect(error).toBeNull();
      expect(data).toEqual([
        { genre: 'fiction', count: 2 },
        { genre: 'poetry', count: 1 },
      ]);
    });

    it('a to-many !inner embed with columns drops parents without matching rows', async () => {
      const { data, error } = await app().client().from('authors').select('name, count(), books!author_id!inner(genre)').eq('books.genre', 'fiction');
      expect(error).toBeNull();
      expect(data).toEqual([{ name: 'Brontë', count: 1, books: [{ genre: 'fiction' }, { genre: 'fiction' }] }]);
    });

    it('a to-many !inner embed of count() alone keeps every parent (its one row counts 0), as PostgREST\'s json_agg IS NOT NULL does', async () => {
      const only = await app().client().from('authors').select('name, books!author_id!inner(count())').eq('books.genre', 'fiction').order('id');
      expect(only.error).toBeNull();
      expect(only.data).toEqual([
        { name: 'Ada', books: [{ count: 0 }] },
        { name: 'Brontë', books: [{ count: 2 }] },
        { name: 'Curie', books: [{ count: 0 }] },
      ]);
      const grouped = await app().client().from('authors').select('name, books!author_id!inner(genre, count())').eq('books.genre', 'fiction').order('id');
      expect(grouped.data).toEqual([{ name: 'Brontë', books: [{ genre: 'fiction', count: 2 }] }]);
    });

    it('a hoisted spread count() filtered on the spread itself: !inner drops the rows, a left spread keeps them as a NULL group counting 0', async () => {
      const inner = await raw(app(), '/book_shelves?select=...books!inner(genre,count())&books.genre=eq.fiction');
      expect(inner).toEqual({ status: 200, body: [{ genre: 'fiction', count: 2 }] });
      const left = await app().client().from('book_shelves').select('...books(genre, count())').eq('books.genre', 'fiction');
      expect(sorted(left.data)).toEqual(sorted([{ genre: 'fiction', count: 2 }, { genre: null, count: 0 }]));
    });

    it('a spread grouped by an embedded resource inside it', async () => {
      const { data, error } = await app().client().from('book_shelves').select('...books(author:authors!author_id(name), count())');
      expect(error).toBeNull();
      expect(sorted(data)).toEqual(sorted([{ author: { name: 'Ada' }, count: 1 }, { author: { name: 'Brontë' }, count: 2 }, { author: { name: 'Curie' }, count: 1 }]));
    });

    it('a hoisted spread count() under an !inner filter of another embed', async () => {
      const { data, error } = await app().client().from('book_shelves').select('...books(...authors!author_id(count())), shelves!inner()').eq('shelves.label', 'To read');
      expect(error).toBeNull();
      expect(data).toEqual([{ count: 2 }]);
    });
  });
});

describe('access policy and allow-list apply to aggregates in embeds and spreads (refused before SQL)', () => {
  it('a denied column aggregated in a spread or an embed, a denied table counted in one: 403 42501', async () => {
    const guarded = await appWith({
      access: { policy: { default_decision: 'allow', tables: { authors: { operations: ['read'], read_columns: { except: ['secret'] } }, shelves: { operations: [] } } } },
    });
    const c = () => guarded.client();
    for (const q of [
      c().from('books').select('...authors!author_id(secret.max())'),
      c().from('books').select('genre, ...authors!author_id(name, secret.count())'),
      c().from('books').select('authors!author_id(secret.min())'),
      c().from('book_shelves').select('...shelves(count())'),
      c().from('books').select('count(), shelves!inner()'),
      c().from('books').select('genre, ...authors!author_id(name, count())').order('authors(secret)'),
    ]) {
      executed = [];
      const { status, error } = await q;
      expect({ status, code: error?.code }).toEqual({ status: 403, code: '42501' });
      expect(executed).toEqual([]);
    }
    expect((await c().from('books').select('...authors!author_id(count())')).data).toEqual([{ count: 5 }]);
  });

  it('postgrest_aggregates = false refuses count() in an embed and in a spread with PGRST123 before SQL', async () => {
    const off = await appWith({ postgrestAggregates: false });
    for (const select of ['name, books!editor_id(count())', 'name, ...author_bios(count())']) {
      executed = [];
      const { status, error } = await off.client().from('authors').select(select);
      expect({ status, code: error?.code }).toEqual({ status: 400, code: 'PGRST123' });
      expect(executed).toEqual([]);
    }
  });

  it('the allow-list names the spread aggregate in its pattern', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-pgrst-agg-allow-'));
    const file = path.join(dir, 'allow.txt');
    fs.writeFileSync(file, 'GET pgrst.books select=genre,...authors!author_id(name,count())\n');
    const listed = await appWith({ allowListPath: file });
    const ok = await listed.client().from('books').select('genre,...authors!author_id(name,count())');
    expect(ok.error).toBeNull();
    expect(ok.data).toHaveLength(4);
    executed = [];
    const other = await listed.client().from('books').select('genre,...authors!author_id(name,id.sum())');
    expect({ status: other.status, code: other.error?.code }).toEqual({ status: 403, code: '42501' });
    expect(executed).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
