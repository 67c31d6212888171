/**
 * The PostgREST dialect's related order (docs/postgrest-dialect.md, "Order"; PostgREST #1414):
 * `order=rel(col)` orders the parent rows by a column of a to-one embedded resource, through the
 * real client, @supabase/postgrest-js, over HTTP against real PostgreSQL with forced RLS and two
 * tenants. postgrest-js's `.order(col, { referencedTable })` is a different thing, as in PostgREST:
 * it orders the EMBEDDED rows (`rel.order=col`), never the parents. Fixture:
 * __tests__/fixtures/080-postgrest.sql (books 1-5 of tenant A; editor_id -> authors: 1 Brontë,
 * 2 none, 3 Ada, 4 Ada, 5 Brontë).
 */
import { type PostgrestApp, usePostgrestApp } from '../support/postgrest-app';

let app: PostgrestApp;
usePostgrestApp({}, (a) => (app = a));
const db = () => app.client();
const ids = (data: unknown) => (data as { id: number }[]).map((r) => r.id);

describe('order=rel(col): the parents by a column of a to-one embed', () => {
  it('orders books by their editor’s name (postgrest-js .order("editor(name)")), nulls placed as asked', async () => {
    const desc = await db().from('books').select('id, editor:authors!editor_id(name)').order('editor(name)', { ascending: false, nullsFirst: false }).order('id');
    expect(desc.error).toBeNull();
    expect(ids(desc.data)).toEqual([1, 5, 3, 4, 2]);
    expect(desc.data![0]).toEqual({ id: 1, editor: { name: 'Brontë' } });
    const asc = await db().from('books').select('id, editor:authors!editor_id(name)').order('editor(name)', { nullsFirst: true }).order('id');
    expect(ids(asc.data)).toEqual([2, 3, 4, 1, 5]);
  });

  it('orders by the embed as filtered: a row its filter leaves out orders as NULL, as PostgREST orders by the embedded value', async () => {
    const res = await db().from('books').select('id, editor:authors!editor_id(name)').eq('editor.name', 'Ada').order('editor(name)', { nullsFirst: false }).order('id');
    expect(res.error).toBeNull();
    expect(ids(res.data)).toEqual([3, 4, 1, 2, 5]);
  });

  it("orders a related row RLS hides (another tenant's author) as NULL, and shows it as null", async () => {
    await app.db.admin.query("INSERT INTO pgrst.books (id, tenant_id, title, author_id, editor_id, genre) VALUES (6, '11111111-1111-4111-8111-111111111111', 'Edited elsewhere', 1, 11, 'fiction')");
    try {
      const res = await db().from('books').select('id, editor:authors!editor_id(name)').order('editor(name)', { ascending: true, nullsFirst: true }).order('id');
      expect(res.error).toBeNull();
      expect(ids(res.data)).toEqual([2, 6, 3, 4, 1, 5]);
      expect((res.data as { id: number; editor: unknown }[]).find((r) => r.id === 6)!.editor).toBeNull();
    } finally {
      await app.db.admin.query('DELETE FROM pgrst.books WHERE id = 6');
    }
  });

  it('refuses a resource not in select (PGRST108) and a to-many one (PGRST118), as PostgREST does', async () => {
    const notEmbedded = await db().from('books').select('id').order('authors(name)');
    expect(notEmbedded.error?.code).toBe('PGRST108');
    const toMany = await db().from('authors').select('id, books!author_id(title)').order('books(title)');
    expect(toMany.error?.code).toBe('PGRST118');
  });
});

describe(".order(col, { referencedTable }): the embedded rows, not the parents", () => {
  it('sends rel.order=col: a to-many embed is ordered inside each parent, the parents keep their own order', async () => {
    const res = await db().from('authors').select('id, books!author_id(id, title)').in('id', [2, 3]).order('id', { ascending: false }).order('title', { referencedTable: 'books' });
    expect(res.error).toBeNull();
    expect(res.data).toEqual([
      { id: 3, books: [{ id: 4, title: 'Radioactive Substances' }] },
      { id: 2, books: [{ id: 2, title: 'Jane Eyre' }, { id: 5, title: 'Poems of the Moors' }, { id: 3, title: 'Shirley' }] },
    ]);
  });

  it('on a to-one embed it changes nothing about the parents’ order (postgrest-js .order("name", { referencedTable: "authors" }))', async () => {
    const res = await db().from('books').select('id, authors!editor_id(name)').order('name', { referencedTable: 'authors' }).order('id', { ascending: false });
    expect(res.error).toBeNull();
    expect(ids(res.data)).toEqual([5, 4, 3, 2, 1]);
  });
});
