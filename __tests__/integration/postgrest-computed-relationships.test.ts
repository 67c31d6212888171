/**
 * Computed relationships (docs/postgrest-dialect.md, "Computed relationships"), as PostgREST 12
 * and 13 serve them, through @supabase/postgrest-js against PostgreSQL with forced row-level
 * security and two tenants: a function of the exposed schema taking one argument of a table's row
 * type and returning `SETOF other` (to-many) or `other` / `SETOF other ROWS 1` (to-one) is
 * embeddable by its name, with filters, order and limit inside the embed, `!inner`, spreads, over
 * a write's and a call's rows, and overrides the foreign keys to a table of the same name. It runs
 * as the caller (RLS applies inside it), the access policy must name it in the parent's
 * `read_columns` (403 before SQL otherwise) and the function allow-list governs it (403 before SQL).
 * Fixture: __tests__/fixtures/080-postgrest.sql, plus the functions below.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
  await db.admin.query(`
    -- to-one: SETOF ... ROWS 1, and a plain composite result
    CREATE FUNCTION pgrst.book_author(pgrst.books) RETURNS SETOF pgrst.authors LANGUAGE sql STABLE ROWS 1 AS $$ SELECT * FROM pgrst.authors WHERE id = $1.author_id $$;
    CREATE FUNCTION pgrst.book_editor(pgrst.books) RETURNS pgrst.authors LANGUAGE sql STABLE AS $$ SELECT * FROM pgrst.authors WHERE id = $1.editor_id $$;
    -- to-many
    CREATE FUNCTION pgrst.author_books(pgrst.authors) RETURNS SETOF pgrst.books LANGUAGE sql STABLE AS $$ SELECT * FROM pgrst.books WHERE author_id = $1.id $$;
    -- ignores its argument: only row-level security keeps the other tenant's rows out
    CREATE FUNCTION pgrst.every_book(pgrst.authors) RETURNS SETOF pgrst.books LANGUAGE sql STABLE AS $$ SELECT * FROM pgrst.books $$;
    -- named like a table: overrides books' two foreign keys to authors (ambiguous otherwise)
    CREATE FUNCTION pgrst.authors(pgrst.books) RETURNS SETOF pgrst.authors LANGUAGE sql STABLE ROWS 1 AS $$ SELECT * FROM pgrst.authors WHERE id = $1.editor_id $$;
    -- a self-relationship: the other authors (of the caller's tenant, by RLS)
    CREATE FUNCTION pgrst.coauthors(pgrst.authors) RETURNS SETOF pgrst.authors LANGUAGE sql STABLE AS $$ SELECT * FROM pgrst.authors WHERE id <> $1.id ORDER BY id $$;
    -- the only relationship events have
    CREATE FUNCTION pgrst.event_books(pgrst.events) RETURNS SETOF pgrst.books LANGUAGE sql STABLE AS $$ SELECT * FROM pgrst.books WHERE false $$;
    -- a call whose rows embed a computed relationship
    CREATE FUNCTION pgrst.long_books(min_pages integer) RETURNS SETOF pgrst.books LANGUAGE sql STABLE AS $$ SELECT * FROM pgrst.books WHERE pages >= min_pages $$;
    GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgrst TO PUBLIC;
  `);
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

describe.each([12, 13] as const)('postgrest_version %d', (version) => {
  const app = (): PostgrestApp => byVersion.get(version)!;

  it.each([
    [pgrstTokenA, [{ title: 'Jane Eyre', writer: { name: 'Brontë' }, editor: { name: null } }, { title: 'Notes on the Engine', writer: { name: 'Ada' }, editor: { name: 'Brontë' } }]],
    [pgrstTokenB, [{ title: 'Tenant B Science', writer: { name: 'Bea Author' }, editor: { name: null } }, { title: 'Tenant B Secrets', writer: { name: 'Bob Author' }, editor: { name: 'Bea Author' } }]],
  ])('to-one (SETOF ROWS 1, and a plain row type: no row is a row of NULLs, as the function returns), each tenant its own rows', async (token, expected) => {
    const { data, error, status } = await app().client(token).from('books').select('title,writer:book_author(name),editor:book_editor(name)').in('id', [1, 2, 11, 12]).order('title');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual(expected);
  });

  it('to-many, with filters, order and limit inside the embed', async () => {
    const { data, error } = await app().client().from('authors').select('name,author_books(title)').eq('id', 2).order('title', { referencedTable: 'author_books', ascending: false }).limit(2, { referencedTable: 'author_books' });
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Brontë', author_books: [{ title: 'Shirley' }, { title: 'Poems of the Moors' }] }]);
    const filtered = await app().client().from('authors').select('name,author_books(title)').eq('id', 2).gt('author_books.pages', 100).order('title', { referencedTable: 'author_books' });
    expect(filtered.data).toEqual([{ name: 'Brontë', author_books: [{ title: 'Jane Eyre' }, { title: 'Shirley' }] }]);
  });

  it.each([
    [pgrstTokenA, 5],
    [pgrstTokenB, 2],
  ])('the function runs as the caller: row-level security applies inside it', async (token, count) => {
    const { data, error } = await app().client(token).from('authors').select('id,every_book(id)').limit(1);
    expect(error).toBeNull();
    expect(data?.[0]?.every_book).toHaveLength(count);
  });

  it('!inner with count=exact counts the parents that have a matching related row', async () => {
    const res = await app().client().from('authors').select('name,author_books!inner(title)', { count: 'exact' }).eq('author_books.title', 'Jane Eyre');
    expect(res.error).toBeNull();
    expect(res.data).toEqual([{ name: 'Brontë', author_books: [{ title: 'Jane Eyre' }] }]);
    expect(res.count).toBe(1);
    const toOne = await app().client().from('books').select('title,writer:book_author!inner(name)', { count: 'exact' }).like('writer.name', 'Br*').order('title');
    expect(toOne.data).toEqual([{ title: 'Jane Eyre', writer: { name: 'Brontë' } }, { title: 'Poems of the Moors', writer: { name: 'Brontë' } }, { title: 'Shirley', writer: { name: 'Brontë' } }]);
    expect(toOne.count).toBe(3);
  });

  it('a to-one spread merges its fields into the row', async () => {
    const { data, error } = await app().client().from('books').select('title,...book_author(author:name)').eq('id', 1);
    expect(error).toBeNull();
    expect(data).toEqual([{ title: 'Notes on the Engine', author: 'Ada' }]);
  });

  it('a to-many spread: arrays in 13, PGRST119 in 12', async () => {
    const res = await fetch(`${app().url}/authors?select=name,...author_books(title)&id=eq.3`, { headers: { Authorization: `Bearer ${pgrstTokenA}` } });
    const body = (await res.json()) as { code?: string };
    if (version === 13) {
      expect(res.status).toBe(200);
      expect(body).toEqual([{ name: 'Curie', title: ['Radioactive Substances'] }]);
    } else {
      expect(res.status).toBe(400);
      expect(body.code).toBe('PGRST119');
    }
  });

  it('a self-relationship, nested embeds (also under an embed by foreign key) and ordering by a to-one computed relationship', async () => {
    const self = await app().client(pgrstTokenB).from('authors').select('name,coauthors(name,author_books(title))').order('id');
    expect(self.error).toBeNull();
    expect(self.data).toEqual([
      { name: 'Bob Author', coauthors: [{ name: 'Bea Author', author_books: [{ title: 'Tenant B Science' }] }] },
      { name: 'Bea Author', coauthors: [{ name: 'Bob Author', author_books: [{ title: 'Tenant B Secrets' }] }] },
    ]);
    // Inside an embed by foreign key (PostgREST's aliasing case).
    const underFk = await app().client().from('author_bios').select('bio,authors(name,author_books(id))').eq('author_id', 1);
    expect(underFk.error).toBeNull();
    expect(underFk.data).toEqual([{ bio: 'First programmer', authors: { name: 'Ada', author_books: [{ id: 1 }] } }]);
    const ordered = await app().client().from('books').select('id,book_author(name)').in('id', [1, 2, 4]).order('book_author(name)', { ascending: false });
    expect(ordered.error).toBeNull();
    expect(ordered.data!.map((r) => r.id)).toEqual([4, 2, 1]);
  });

  it('PGRST200 suggests a computed relationship\'s table, as PostgREST does', async () => {
    const res = await fetch(`${app().url}/events?select=id,bookz(id)`, { headers: { Authorization: `Bearer ${pgrstTokenA}` } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'PGRST200', hint: "Perhaps you meant 'books' instead of 'bookz'." });
    const embedded = await app().client().from('events').select('id,event_books(id)').eq('id', 1);
    expect(embedded.data).toEqual([{ id: 1, event_books: [] }]);
  });

  it('a function named like a related table overrides its foreign keys (ambiguous otherwise)', async () => {
    const { data, error, status } = await app().client().from('books').select('id,authors(name)').eq('id', 1);
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([{ id: 1, authors: { name: 'Brontë' } }]);
  });

  it('embeds in the rows a write answers with and in a call\'s rows', async () => {
    const written = await app().client().from('books').update({ pages: 120 }).eq('id', 1).select('id,book_author(name),editor:book_editor(name)');
    expect(written.error).toBeNull();
    expect(written.data).toEqual([{ id: 1, book_author: { name: 'Ada' }, editor: { name: 'Brontë' } }]);
    const called = await app().client(pgrstTokenB).rpc('long_books', { min_pages: 50 }).select('id,book_author(name)');
    expect(called.error).toBeNull();
    expect(called.data).toEqual([{ id: 11, book_author: { name: 'Bob Author' } }]);
  });

  it('the policy must name the function in the parent\'s read_columns and allow the target table: 403 before SQL otherwise', async () => {
    const unnamed = await appWith({ postgrestVersion: version, access: { policy: { default_decision: 'allow', tables: { books: { operations: ['read'], read_columns: { only: ['id', 'title'] } } } } } });
    const named = await appWith({ postgrestVersion: version, access: { policy: { default_decision: 'allow', tables: { books: { operations: ['read'], read_columns: { only: ['id', 'title', 'book_author'] } } } } } });
    const targetDenied = await appWith({ postgrestVersion: version, access: { policy: { default_decision: 'allow', tables: { books: { operations: ['read'], read_columns: { only: ['id', 'book_author'] } }, authors: { operations: [] } } } } });
    for (const query of [
      () => unnamed.client().from('books').select('id,book_author(name)').eq('id', 1),
      () => unnamed.client().from('books').select('id,book_author!inner()').eq('id', 1),
      () => targetDenied.client().from('books').select('id,book_author(name)').eq('id', 1),
    ]) {
      executed = [];
      const refused = await query();
      expect(refused.status).toBe(403);
      expect(refused.data).toBeNull();
      expect(executed).toEqual([]);
    }
    const ok = await named.client().from('books').select('id,book_author(name)').eq('id', 1);
    expect(ok.error).toBeNull();
    expect(ok.data).toEqual([{ id: 1, book_author: { name: 'Ada' } }]);
  });

  it('the function allow-list governs computed relationships as it governs calls: 403 RPC_NOT_ALLOWED before SQL', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-computed-rel-'));
    const list = path.join(dir, 'functions.txt');
    fs.writeFileSync(list, 'pgrst.book_author\npgrst.long_books\n');
    try {
      const guarded = await appWith({ postgrestVersion: version, rpcAllowlistPath: list });
      const allowed = await guarded.client().from('books').select('id,book_author(name)').eq('id', 1);
      expect(allowed.data).toEqual([{ id: 1, book_author: { name: 'Ada' } }]);
      for (const query of [
        () => guarded.client().from('books').select('id,book_editor(name)').eq('id', 1),
        () => guarded.client().from('books').select('id,book_author(name,author_books(id))').eq('id', 1),
        () => guarded.client().from('books').select('id,book_editor()').not('book_editor', 'is', null),
        () => guarded.client().rpc('long_books', { min_pages: 50 }).select('id,book_editor(name)'),
      ]) {
        executed = [];
        const refused = await query();
        expect(refused.status).toBe(403);
        expect(executed).toEqual([]);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
