/**
 * Relationships as PostgREST infers them (docs/postgrest-dialect.md, "Embedding"), through the real
 * client, @supabase/postgrest-js, over HTTP against real PostgreSQL with forced RLS and two
 * tenants: a self-reference both ways (the table's name is the children, the FK column the
 * parent, `!fk_column` names the children), the same target twice by column hints, to-one embeds
 * over a NOT NULL and a nullable FK (object vs null), and PGRST200 / PGRST201 bodies exactly as
 * PostgREST's src/library/PostgREST/Error.hs writes them. Fixture: __tests__/fixtures/080-postgrest.sql
 * plus pgrst.staff created here (a manager_id FK to itself), before the gateway reads the schema.
 */
import { startPostgrestApp, pgrstTokenA, pgrstTokenB, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, TENANT_A, TENANT_B } from '../support/test-database';

let app: PostgrestApp;
beforeAll(async () => {
  const db = await createTestDatabase();
  await db.admin.query(`
    CREATE TABLE pgrst.staff (
      id integer PRIMARY KEY,
      tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
      name text NOT NULL,
      manager_id integer REFERENCES pgrst.staff (id)
    );
    ALTER TABLE pgrst.staff ENABLE ROW LEVEL SECURITY;
    ALTER TABLE pgrst.staff FORCE ROW LEVEL SECURITY;
    CREATE POLICY tenant_isolation ON pgrst.staff
      USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
    GRANT SELECT ON pgrst.staff TO tablegate_app;
    INSERT INTO pgrst.staff (id, tenant_id, name, manager_id) VALUES
      (1, '${TENANT_A}', 'Boss', NULL), (2, '${TENANT_A}', 'Ann', 1), (3, '${TENANT_A}', 'Al', 1),
      (11, '${TENANT_B}', 'Bea', NULL), (12, '${TENANT_B}', 'Ben', 11),
      -- tenant B's row under tenant A's boss: RLS hides it from both sides' embeds for tenant A
      (13, '${TENANT_B}', 'Sneak', 1);
  `);
  app = await startPostgrestApp({}, db);
});
afterAll(async () => {
  const db = app?.db;
  await app?.close();
  await db?.drop();
});
const db = () => app.client();

describe('a self-reference, both directions', () => {
  it("the table's own name embeds the children (one-to-many), only the caller tenant's", async () => {
    const { data, error } = await db().from('staff').select('name, staff(name)').eq('id', 1);
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Boss', staff: [{ name: 'Ann' }, { name: 'Al' }] }]);
  });

  it('the FK column embeds the parent (many-to-one): an object, or null when the column is null', async () => {
    const { data, error } = await db().from('staff').select('name, boss:manager_id(name)').order('id');
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Boss', boss: null }, { name: 'Ann', boss: { name: 'Boss' } }, { name: 'Al', boss: { name: 'Boss' } }]);
  });

  it('!fk_column on the table name is the children, as PostgREST reads the hint', async () => {
    const { data, error } = await db().from('staff').select('name, reports:staff!manager_id(name)').eq('id', 1);
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Boss', reports: [{ name: 'Ann' }, { name: 'Al' }] }]);
  });

  it("tenant B sees its own tree and not tenant A's boss", async () => {
    const { data, error } = await app.client(pgrstTokenB).from('staff').select('name, boss:manager_id(name), staff(name)').order('id');
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Bea', boss: null, staff: [{ name: 'Ben' }] }, { name: 'Ben', boss: { name: 'Bea' }, staff: [] }, { name: 'Sneak', boss: null, staff: [] }]);
  });
});

describe('the same target twice, and to-one over NOT NULL vs nullable FK columns', () => {
  it('books with author (NOT NULL author_id) and editor (nullable editor_id) by column hints: object vs null', async () => {
    const { data, error } = await db().from('books').select('id, author:authors!author_id(name), editor:authors!editor_id(name)').in('id', [1, 2]).order('id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 1, author: { name: 'Ada' }, editor: { name: 'Brontë' } },
      { id: 2, author: { name: 'Brontë' }, editor: null },
    ]);
  });
});

describe('PGRST200 and PGRST201 bodies as PostgREST writes them', () => {
  it('an ambiguous embed: 300, details a JSON array of the candidates, the hint with the target table', async () => {
    const res = await fetch(`${app.url}/authors?select=name,books(title)`, { headers: { Authorization: `Bearer ${pgrstTokenA}` } });
    expect(res.status).toBe(300);
    expect(await res.json()).toEqual({
      code: 'PGRST201',
      message: "Could not embed because more than one relationship was found for 'authors' and 'books'",
      details: [
        { cardinality: 'one-to-many', embedding: 'authors with books', relationship: 'books_author_id_fkey using authors(id) and books(author_id)' },
        { cardinality: 'one-to-many', embedding: 'authors with books', relationship: 'books_editor_fkey using authors(id) and books(editor_id)' },
      ],
      hint: "Try changing 'books' to one of the following: 'books!books_author_id_fkey', 'books!books_editor_fkey'. Find the desired relationship in the 'details' key.",
    });
  });

  it('a misspelt target: PGRST200 with "Perhaps you meant" the related table', async () => {
    const { error, status } = await db().from('authors').select('name, book(title)');
    expect(status).toBe(400);
    expect(error).toEqual({
      code: 'PGRST200',
      message: "Could not find a relationship between 'authors' and 'book' in the schema cache",
      details: "Searched for a foreign key relationship between 'authors' and 'book' in the schema 'pgrst', but no matches were found.",
      hint: "Perhaps you meant 'books' instead of 'book'.",
    });
  });

  it('"Perhaps you meant" never names a table the access policy hides from the caller', async () => {
    const hidden = await startPostgrestApp({ access: { policy: { default_decision: 'allow', tables: { books: { operations: [] } } } } }, app.db);
    try {
      const { error, status } = await hidden.client().from('authors').select('name, book(title)');
      expect(status).toBe(400);
      expect(error?.code).toBe('PGRST200');
      expect(error?.hint).toBeNull();
      expect(JSON.stringify(error)).not.toContain("'books'");
    } finally {
      await hidden.close();
    }
  });

  it('a hint that matches nothing: PGRST200 naming the hint, hint null; an unrelated table: hint null', async () => {
    const hinted = await db().from('books').select('id, authors!nope(name)');
    expect(hinted.error).toEqual({
      code: 'PGRST200',
      message: "Could not find a relationship between 'books' and 'authors' in the schema cache",
      details: "Searched for a foreign key relationship between 'books' and 'authors' using the hint 'nope' in the schema 'pgrst', but no matches were found.",
      hint: null,
    });
    const unrelated = await db().from('authors').select('name, events(name)');
    expect(unrelated.error?.code).toBe('PGRST200');
    expect(unrelated.error?.hint).toBeNull();
  });

  it("hints as PostgREST's findRel reads them: a one-column key by either side's column, a junction by its table only", async () => {
    const plain = await db().from('books').select('title, book_shelves(shelf_id)').order('id');
    expect(plain.error).toBeNull();
    expect(plain.data!.some((b) => b.book_shelves.length > 0)).toBe(true);
    // The parent's column of a one-to-many (`books.id`, referenced by book_shelves.book_id), and the child's.
    for (const hint of ['id', 'book_id', 'book_shelves_book_id_fkey']) {
      const hinted = await db().from('books').select(`title, book_shelves!${hint}(shelf_id)`).order('id');
      expect({ hint, error: hinted.error, data: hinted.data }).toEqual({ hint, error: null, data: plain.data });
    }
    // Many-to-many: the junction table's name is the hint; its constraints' names are not (PGRST200).
    const viaJunction = await db().from('shelves').select('label, books!book_shelves(title)').order('id');
    expect(viaJunction.error).toBeNull();
    const byConstraint = await db().from('shelves').select('label, books!book_shelves_book_id_fkey(title)');
    expect(byConstraint.status).toBe(400);
    expect(byConstraint.error?.code).toBe('PGRST200');
    // Tenant B's client: the same hint, its own rows only.
    const b = await app.client(pgrstTokenB).from('books').select('title, book_shelves!id(shelf_id)').order('id');
    expect(b.error).toBeNull();
    const titlesB = (b.data ?? []).map((r) => r.title);
    expect(titlesB.some((t) => (plain.data ?? []).map((r) => r.title).includes(t))).toBe(false);
  });
});
