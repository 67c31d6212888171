/**
 * Spread of to-many embeds (`...rel(cols)`, PostgREST 13's array form) through
 * @supabase/postgrest-js over HTTP, against PostgREST's SpreadQueriesSpec answers
 * (docs/postgrest-dialect.md "Embedding"). Tenant A sees only its rows (forced RLS); tenant B's
 * books never appear in A's arrays. Fixture: __tests__/fixtures/080-postgrest.sql.
 */
import { startPostgrestApp, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
let app: PostgrestApp;
let v12: PostgrestApp;
beforeAll(async () => {
  db = await createTestDatabase();
  app = await startPostgrestApp({}, db);
  v12 = await startPostgrestApp({ postgrestVersion: 12 }, db);
});
afterAll(async () => {
  await app?.close();
  await v12?.close();
  await db.drop();
});

describe('spread of a one-to-many embed (13)', () => {
  it('several columns, aliases, order inside the spread, tenant isolation', async () => {
    const { data, error } = await app
      .client()
      .from('authors')
      .select('who:name, ...books!author_id(titles:title, id)')
      .order('id')
      .order('id', { referencedTable: 'books', ascending: false });
    expect(error).toBeNull();
    expect(data).toEqual([
      { who: 'Ada', titles: ['Notes on the Engine'], id: [1] },
      { who: 'Brontë', titles: ['Poems of the Moors', 'Shirley', 'Jane Eyre'], id: [5, 3, 2] },
      { who: 'Curie', titles: ['Radioactive Substances'], id: [4] },
    ]);
  });

  it('empty arrays when no related row matches; !inner drops the parent', async () => {
    const outer = await app.client().from('authors').select('name, ...books!author_id(title)').eq('books.genre', 'poetry').order('id');
    expect(outer.error).toBeNull();
    expect(outer.data).toEqual([
      { name: 'Ada', title: [] },
      { name: 'Brontë', title: ['Poems of the Moors'] },
      { name: 'Curie', title: [] },
    ]);
    const inner = await app.client().from('authors').select('name, ...books!author_id!inner(title)').eq('books.genre', 'poetry');
    expect(inner.error).toBeNull();
    expect(inner.data).toEqual([{ name: 'Brontë', title: ['Poems of the Moors'] }]);
    const notNull = await app.client().from('authors').select('name, ...books!author_id(title)').eq('books.genre', 'poetry').not('books', 'is', null);
    expect(notNull.data).toEqual([{ name: 'Brontë', title: ['Poems of the Moors'] }]);
    const isNull = await app.client().from('authors').select('name, ...books!author_id(title)').eq('books.genre', 'poetry').is('books', null).order('id');
    expect(isNull.data).toEqual([
      { name: 'Ada', title: [] },
      { name: 'Curie', title: [] },
    ]);
  });

  it('limit inside the spread', async () => {
    const { data, error } = await app
      .client()
      .from('authors')
      .select('name, ...books!author_id(title)')
      .eq('id', 2)
      .order('id', { referencedTable: 'books' })
      .limit(2, { referencedTable: 'books' });
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Brontë', title: ['Jane Eyre', 'Shirley'] }]);
  });

  it('a nested to-one spread inside a to-many spread gives arrays of its values', async () => {
    const { data, error } = await app
      .client()
      .from('authors')
      .select('name, ...books!author_id(title, ...editor:authors!books_editor_fkey(editor:name))')
      .eq('id', 2)
      .order('id', { referencedTable: 'books' });
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Brontë', title: ['Jane Eyre', 'Shirley', 'Poems of the Moors'], editor: [null, 'Ada', 'Brontë'] }]);
  });

  it('a nested non-spread embed inside a to-many spread gives an array of objects', async () => {
    const { data, error } = await app
      .client()
      .from('authors')
      .select('name, ...books!author_id(title, shelves(label))')
      .eq('id', 1);
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Ada', title: ['Notes on the Engine'], shelves: [[{ label: 'Favourites' }]] }]);
  });

  it('a nested to-many spread gives arrays of arrays', async () => {
    const { data, error } = await app
      .client()
      .from('authors')
      .select('name, ...books!author_id(title, ...shelves(label))')
      .eq('id', 2)
      .order('id', { referencedTable: 'books' })
      .order('id', { referencedTable: 'books.shelves' });
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Brontë', title: ['Jane Eyre', 'Shirley', 'Poems of the Moors'], label: [['Favourites', 'To read'], [], []] }]);
  });

  it('`*` in the spread gives one array per column', async () => {
    const { data, error } = await app.client().from('shelves').select('label, ...book_shelves(*)').eq('id', 2);
    expect(error).toBeNull();
    expect(data).toEqual([
      { label: 'To read', book_id: [2, 4], shelf_id: [2, 2], tenant_id: ['11111111-1111-4111-8111-111111111111', '11111111-1111-4111-8111-111111111111'] },
    ]);
  });
});

describe('spread of a one-to-many embed: order and nulls (13)', () => {
  it('orders every array by a column the spread does not select, and by a related column', async () => {
    const byPages = await app.client().from('authors').select('name, ...books!author_id(title)').eq('id', 2).order('pages', { referencedTable: 'books' });
    expect(byPages.error).toBeNull();
    expect(byPages.data).toEqual([{ name: 'Brontë', title: ['Poems of the Moors', 'Shirley', 'Jane Eyre'] }]);
    const byEditor = await app
      .client()
      .from('authors')
      .select('name, ...books!author_id(title, ...editor:authors!books_editor_fkey(editor:name))')
      .eq('id', 2)
      .order('editor(name)', { referencedTable: 'books', ascending: false, nullsFirst: false });
    expect(byEditor.error).toBeNull();
    expect(byEditor.data).toEqual([{ name: 'Brontë', title: ['Poems of the Moors', 'Shirley', 'Jane Eyre'], editor: ['Brontë', 'Ada', null] }]);
  });

  it('orders by a spread to-one embed, at the top level too (12 and 13)', async () => {
    for (const a of [app, v12]) {
      const { data, error } = await a.client().from('books').select('title, ...editor:authors!books_editor_fkey(editor:name)').in('id', [1, 2, 3]).order('editor(name)', { nullsFirst: true });
      expect(error).toBeNull();
      expect(data).toEqual([
        { title: 'Jane Eyre', editor: null },
        { title: 'Shirley', editor: 'Ada' },
        { title: 'Notes on the Engine', editor: 'Brontë' },
      ]);
    }
  });

  it('a null value is a null element, not a missing one', async () => {
    const { data, error } = await app.client().from('authors').select('name, ...books!author_id(price)').eq('id', 2).order('id', { referencedTable: 'books' });
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Brontë', price: [20, null, 5] }]);
  });
});

describe('spread of a many-to-many embed through a junction (13)', () => {
  it('each key holds the array of values; the other tenant stays out', async () => {
    const { data, error } = await app
      .client()
      .from('shelves')
      .select('shelf:label, ...books(title)')
      .order('id')
      .order('id', { referencedTable: 'books' });
    expect(error).toBeNull();
    expect(data).toEqual([
      { shelf: 'Favourites', title: ['Notes on the Engine', 'Jane Eyre'] },
      { shelf: 'To read', title: ['Jane Eyre', 'Radioactive Substances'] },
    ]);
  });
});

describe('empty spreads (13)', () => {
  it('`...rel()` adds no key, to-many, to-one and nested; with !inner it still filters', async () => {
    const toMany = await app.client().from('authors').select('name, ...books!author_id()').order('id');
    expect(toMany.error).toBeNull();
    expect(toMany.data).toEqual([{ name: 'Ada' }, { name: 'Brontë' }, { name: 'Curie' }]);
    const nested = await app.client().from('shelves').select('label, ...books(title, ...authors!author_id())').eq('id', 1).order('id', { referencedTable: 'books' });
    expect(nested.error).toBeNull();
    expect(nested.data).toEqual([{ label: 'Favourites', title: ['Notes on the Engine', 'Jane Eyre'] }]);
    const inner = await app.client().from('authors').select('name, ...books!author_id!inner()').eq('books.genre', 'poetry');
    expect(inner.error).toBeNull();
    expect(inner.data).toEqual([{ name: 'Brontë' }]);
  });
});

describe('access policy on spreads (refused before SQL)', () => {
  it('a denied column in a to-many spread, in a spread nested in it, or ordered by through a spread is 403 42501', async () => {
    let executed: string[] = [];
    const guarded = await startPostgrestApp(
      {
        access: { policy: { default_decision: 'allow', tables: { authors: { operations: ['read'], read_columns: { except: ['secret'] } } } } },
        stages: { execute: (ctx, execute) => (executed.push(ctx.plan.query?.text ?? ''), execute(ctx)) },
      },
      db,
    );
    try {
      const c = () => guarded.client();
      for (const q of [
        c().from('books').select('id, ...authors!author_id(secret)'),
        c().from('shelves').select('id, ...books(title, ...authors!author_id(secret))'),
        c().from('books').select('title, ...editor:authors!books_editor_fkey(name)').order('editor(secret)'),
        c().from('authors').select('name, ...books!author_id(title, ...editor:authors!books_editor_fkey(editor:name))').order('editor(secret)', { referencedTable: 'books' }),
      ]) {
        executed = [];
        const { status, error } = await q;
        expect({ status, code: error?.code }).toEqual({ status: 403, code: '42501' });
        expect(executed).toEqual([]);
      }
      const allowed = await c().from('authors').select('name, ...books!author_id(title)').eq('id', 1);
      expect(allowed.data).toEqual([{ name: 'Ada', title: ['Notes on the Engine'] }]);
    } finally {
      await guarded.close();
    }
  });
});

describe('postgrest_version 12', () => {
  it('refuses a to-many spread with PGRST119, a nested one too', async () => {
    for (const select of ['name, ...books!author_id(title)', 'id, author_bios(bio, authors(name, ...books!author_id(title)))']) {
      const res = await v12.client().from('authors').select(select);
      expect(res.status).toBe(400);
      expect(res.error?.code).toBe('PGRST119');
    }
  });
});
