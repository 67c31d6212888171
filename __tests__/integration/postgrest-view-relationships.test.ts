/**
 * Relationships through views, as PostgREST infers them (docs/postgrest-dialect.md, "Embedding
 * through views"), through the real client, @supabase/postgrest-js, over HTTP against real
 * PostgreSQL with forced RLS and two tenants: a view column that is a plain reference to a table
 * column inherits its foreign keys (and primary key), so views embed tables, tables views and
 * views views, both ways, one-to-one, through a junction view, through views over views and over
 * tables of a schema that is not exposed; an expression inherits nothing; a constraint name never
 * reaches a view; PGRST201 lists candidates in PostgREST's order; the access policy applies to
 * every view of an embed before any SQL. Expected answers follow PostgREST v13's
 * test/spec/Feature/Query/EmbedDisambiguationSpec.hs and its fixtures. Every view is
 * `security_invoker`, so its base tables' row-level security applies to the caller.
 * Fixture: __tests__/fixtures/080-postgrest.sql plus the views and tables created here.
 */
import { pgrstTokenA, pgrstTokenB, recordingApps, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, TENANT_A, TENANT_B, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
const apps: PostgrestApp[] = [];
const executed: string[] = [];
const appWith = recordingApps(() => db, apps, (text) => executed.push(text));
const byVersion = new Map<12 | 13, PostgrestApp>();

const rls = (table: string) => `
  ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
  ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
  CREATE POLICY tenant_isolation ON ${table} USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
  GRANT SELECT ON ${table} TO tablegate_app;`;
const tenant = "uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid";

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query(`
    -- views over the fixture's tables, in the exposed schema
    CREATE VIEW pgrst.authors_v WITH (security_invoker = true) AS SELECT id, name FROM pgrst.authors;
    CREATE VIEW pgrst.books_v WITH (security_invoker = true) AS
      SELECT id, title, author_id AS writer_id, editor_id, author_id + 0 AS author_calc FROM pgrst.books;
    CREATE VIEW pgrst.bios_v WITH (security_invoker = true) AS SELECT author_id, bio FROM pgrst.author_bios;
    CREATE VIEW pgrst.book_shelves_v WITH (security_invoker = true) AS SELECT book_id, shelf_id FROM pgrst.book_shelves;
    -- every column an expression: it inherits nothing
    CREATE VIEW pgrst.calc_v WITH (security_invoker = true) AS SELECT id + 0 AS id, author_id + 0 AS author_id FROM pgrst.books;

    -- tables of a schema the gateway does not expose, each behind a view of the exposed one
    CREATE SCHEMA pgrst_private;
    GRANT USAGE ON SCHEMA pgrst_private TO tablegate_app;
    CREATE TABLE pgrst_private.teams (id integer PRIMARY KEY, tenant_id ${tenant}, name text NOT NULL);
    CREATE TABLE pgrst_private.players (id integer PRIMARY KEY, tenant_id ${tenant}, name text NOT NULL,
      team_id integer REFERENCES pgrst_private.teams (id));
    ${rls('pgrst_private.teams')}
    ${rls('pgrst_private.players')}
    CREATE VIEW pgrst.teams WITH (security_invoker = true) AS SELECT id, name FROM pgrst_private.teams;
    CREATE VIEW pgrst.players WITH (security_invoker = true) AS SELECT id, name, team_id FROM pgrst_private.players;
    -- a view over a view
    CREATE VIEW pgrst.captains WITH (security_invoker = true) AS SELECT id, name, team_id AS side_id FROM pgrst.players WHERE id IN (1, 11);
    GRANT SELECT ON pgrst.authors_v, pgrst.books_v, pgrst.bios_v, pgrst.book_shelves_v, pgrst.calc_v, pgrst.teams, pgrst.players, pgrst.captains TO tablegate_app;
    INSERT INTO pgrst_private.teams (id, tenant_id, name) VALUES (1, '${TENANT_A}', 'Reds'), (2, '${TENANT_A}', 'Blues'), (11, '${TENANT_B}', 'Greens');
    INSERT INTO pgrst_private.players (id, tenant_id, name, team_id) VALUES
      (1, '${TENANT_A}', 'Ann', 1), (2, '${TENANT_A}', 'Al', 1), (3, '${TENANT_A}', 'Amy', 2),
      (11, '${TENANT_B}', 'Bea', 11),
      -- tenant B's player in tenant A's team: RLS hides the team from B and the player from A
      (12, '${TENANT_B}', 'Ben', 1);

    -- a self-reference behind a view (PostgREST's test.job over private.internal_job)
    CREATE TABLE pgrst_private.internal_job (id integer PRIMARY KEY, tenant_id ${tenant}, parent_id integer,
      CONSTRAINT parent_fk FOREIGN KEY (parent_id) REFERENCES pgrst_private.internal_job (id));
    ${rls('pgrst_private.internal_job')}
    CREATE VIEW pgrst.job WITH (security_invoker = true) AS SELECT j.id, j.parent_id FROM pgrst_private.internal_job j;
    GRANT SELECT ON pgrst.job TO tablegate_app;
    INSERT INTO pgrst_private.internal_job (id, tenant_id, parent_id) VALUES (1, '${TENANT_A}', NULL), (2, '${TENANT_A}', 1), (11, '${TENANT_B}', 1);

    -- a composite key referenced twice by a view (EmbedDisambiguationSpec's i2459_composite)
    CREATE TABLE pgrst_private.composite_t1 (a integer, b integer, tenant_id ${tenant}, PRIMARY KEY (a, b));
    CREATE TABLE pgrst_private.composite_t2 (t1_a integer, t1_b integer, tenant_id ${tenant},
      CONSTRAINT composite_t2_t1_a_t1_b_fkey FOREIGN KEY (t1_a, t1_b) REFERENCES pgrst_private.composite_t1);
    ${rls('pgrst_private.composite_t1')}
    ${rls('pgrst_private.composite_t2')}
    CREATE VIEW pgrst.composite_v1 WITH (security_invoker = true) AS SELECT a, b FROM pgrst_private.composite_t1;
    CREATE VIEW pgrst.composite_v2 WITH (security_invoker = true) AS
      SELECT t1_a AS t1_a1, t1_b AS t1_b1, t1_a AS t1_a2, t1_b AS t1_b2 FROM pgrst_private.composite_t2;
    GRANT SELECT ON pgrst.composite_v1, pgrst.composite_v2 TO tablegate_app;

    -- two relationships between two tables, one each way (EmbedDisambiguationSpec's agents / departments)
    CREATE TABLE pgrst.departments (id integer PRIMARY KEY, tenant_id ${tenant}, name text NOT NULL, head_id integer);
    CREATE TABLE pgrst.agents (id integer PRIMARY KEY, tenant_id ${tenant}, name text NOT NULL,
      department_id integer REFERENCES pgrst.departments (id));
    ALTER TABLE pgrst.departments ADD CONSTRAINT departments_head_id_fkey FOREIGN KEY (head_id) REFERENCES pgrst.agents (id);
    ${rls('pgrst.departments')}
    ${rls('pgrst.agents')}
  `);
  byVersion.set(12, await appWith({ postgrestVersion: 12 }));
  byVersion.set(13, await appWith({ postgrestVersion: 13 }));
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await db?.drop();
});

describe.each([12, 13] as const)('postgrest_version %d', (version) => {
  const client = (token = pgrstTokenA) => byVersion.get(version)!.client(token);

  it('a view over a table of a hidden schema embeds another such view, both ways, for each tenant', async () => {
    const teams = await client().from('teams').select('name, players(name)').order('id').order('id', { referencedTable: 'players' });
    expect(teams.error).toBeNull();
    expect(teams.data).toEqual([
      { name: 'Reds', players: [{ name: 'Ann' }, { name: 'Al' }] },
      { name: 'Blues', players: [{ name: 'Amy' }] },
    ]);
    const players = await client(pgrstTokenB).from('players').select('name, teams(name)').order('id');
    expect(players.error).toBeNull();
    // Ben's team is tenant A's: hidden from B by the base table's RLS, so null.
    expect(players.data).toEqual([{ name: 'Bea', teams: { name: 'Greens' } }, { name: 'Ben', teams: null }]);
    const teamsB = await client(pgrstTokenB).from('teams').select('name, players(name)');
    expect(teamsB.data).toEqual([{ name: 'Greens', players: [{ name: 'Bea' }] }]);
  });

  it('a view over a view inherits the keys of the table underneath (a renamed column included)', async () => {
    const { data, error } = await client().from('captains').select('name, teams(name)');
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Ann', teams: { name: 'Reds' } }]);
    const back = await client().from('teams').select('name, captains(name)').eq('id', 1);
    expect(back.data).toEqual([{ name: 'Reds', captains: [{ name: 'Ann' }] }]);
  });

  it('view -> table, table -> view and view -> view over the same foreign key', async () => {
    const viewToTable = await client().from('books_v').select('title, authors!writer_id(name)').eq('id', 1);
    expect(viewToTable.error).toBeNull();
    expect(viewToTable.data).toEqual([{ title: 'Notes on the Engine', authors: { name: 'Ada' } }]);
    const tableToView = await client().from('authors').select('name, books_v!books_author_id_fkey(title)').eq('id', 3);
    expect(tableToView.error).toBeNull();
    expect(tableToView.data).toEqual([{ name: 'Curie', books_v: [{ title: 'Radioactive Substances' }] }]);
    const viewToView = await client().from('authors_v').select('name, books_v!writer_id(title)').eq('id', 3);
    expect(viewToView.error).toBeNull();
    expect(viewToView.data).toEqual([{ name: 'Curie', books_v: [{ title: 'Radioactive Substances' }] }]);
    const tenantB = await client(pgrstTokenB).from('authors_v').select('name, books_v!writer_id(title)').order('id');
    expect(tenantB.data).toEqual([{ name: 'Bob Author', books_v: [{ title: 'Tenant B Secrets' }] }, { name: 'Bea Author', books_v: [{ title: 'Tenant B Science' }] }]);
  });

  it('!inner through views filters the parents, and counts them (EmbedInnerJoinSpec "works with views")', async () => {
    const rows = await client().from('books_v').select('title, authors!writer_id!inner(name)', { count: 'exact' }).eq('authors.name', 'Curie');
    expect(rows.error).toBeNull();
    expect(rows.data).toEqual([{ title: 'Radioactive Substances', authors: { name: 'Curie' } }]);
    expect(rows.count).toBe(1);
    const head = await client().from('authors_v').select('*, books_v!writer_id!inner(*)', { count: 'exact', head: true }).eq('books_v.title', 'Jane Eyre');
    expect(head.status).toBe(200);
    expect(head.count).toBe(1);
  });

  it('one-to-one through views: an object, as the base foreign key columns are the primary key', async () => {
    const { data, error } = await client().from('authors_v').select('name, bios_v(bio)').order('id');
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Ada', bios_v: { bio: 'First programmer' } }, { name: 'Brontë', bios_v: { bio: 'Novelist' } }, { name: 'Curie', bios_v: null }]);
  });

  it("a self-reference through a view: the FK column's name is the parent, view!fk_column the children (EmbedDisambiguationSpec)", async () => {
    const { data, error } = await client().from('job').select('id, parent_id(*), children:job!parent_id(id, parent_id)').order('id');
    expect(error).toBeNull();
    expect(data).toEqual([
      { id: 1, parent_id: null, children: [{ id: 2, parent_id: 1 }] },
      { id: 2, parent_id: { id: 1, parent_id: null }, children: [] },
    ]);
    // Tenant B's job points at tenant A's: the parent is hidden from B.
    const b = await client(pgrstTokenB).from('job').select('id, parent_id(*), job(id)');
    expect(b.data).toEqual([{ id: 11, parent_id: null, job: [] }]);
  });

  it('many-to-many through a junction view (its primary key inherited) and through the junction table', async () => {
    const viaView = await client().from('books_v').select('title, shelves!book_shelves_v(label)').eq('id', 2).order('id', { referencedTable: 'shelves' });
    expect(viaView.error).toBeNull();
    expect(viaView.data).toEqual([{ title: 'Jane Eyre', shelves: [{ label: 'Favourites' }, { label: 'To read' }] }]);
    const viaTable = await client(pgrstTokenB).from('books_v').select('title, shelves!book_shelves(label)');
    expect(viaTable.data).toEqual([{ title: 'Tenant B Secrets', shelves: [{ label: 'B shelf' }] }, { title: 'Tenant B Science', shelves: [] }]);
  });
});

describe('errors and limits, as PostgREST answers them', () => {
  const client = () => byVersion.get(13)!.client();

  it('two foreign keys through a view: PGRST201 listing the view columns, in constraint order', async () => {
    const res = await fetch(`${byVersion.get(13)!.url}/books_v?select=title,authors(name)`, { headers: { Authorization: `Bearer ${pgrstTokenA}` } });
    expect(res.status).toBe(300);
    expect(await res.json()).toEqual({
      code: 'PGRST201',
      message: "Could not embed because more than one relationship was found for 'books_v' and 'authors'",
      details: [
        { cardinality: 'many-to-one', embedding: 'books_v with authors', relationship: 'books_author_id_fkey using books_v(writer_id) and authors(id)' },
        { cardinality: 'many-to-one', embedding: 'books_v with authors', relationship: 'books_editor_fkey using books_v(editor_id) and authors(id)' },
      ],
      hint: "Try changing 'authors' to one of the following: 'authors!books_author_id_fkey', 'authors!books_editor_fkey'. Find the desired relationship in the 'details' key.",
    });
  });

  it('a view referencing a composite key twice: one candidate per choice of its columns, in PostgREST order', async () => {
    const { error, status } = await client().from('composite_v2').select('*, composite_v1(*)');
    expect(status).toBe(300);
    const rel = (a: string, b: string) => ({ cardinality: 'many-to-one', embedding: 'composite_v2 with composite_v1', relationship: `composite_t2_t1_a_t1_b_fkey using composite_v2(${a}, ${b}) and composite_v1(a, b)` });
    expect(error?.details).toEqual([rel('t1_a1', 't1_b1'), rel('t1_a1', 't1_b2'), rel('t1_a2', 't1_b1'), rel('t1_a2', 't1_b2')]);
    expect(error?.hint).toBe(`Try changing 'composite_v1' to one of the following: ${Array(4).fill("'composite_v1!composite_t2_t1_a_t1_b_fkey'").join(', ')}. Find the desired relationship in the 'details' key.`);
  });

  it('a junction table and a junction view between the same two: PGRST201 with both many-to-many', async () => {
    const { error, status } = await client().from('books').select('title, shelves(label)');
    expect(status).toBe(300);
    expect(error?.details).toEqual([
      { cardinality: 'many-to-many', embedding: 'books with shelves', relationship: 'book_shelves using book_shelves_book_id_fkey(book_id) and book_shelves_shelf_id_fkey(shelf_id)' },
      { cardinality: 'many-to-many', embedding: 'books with shelves', relationship: 'book_shelves_v using book_shelves_book_id_fkey(book_id) and book_shelves_shelf_id_fkey(shelf_id)' },
    ]);
  });

  it('a view column that is an expression inherits nothing: PGRST200', async () => {
    const { error, status } = await client().from('calc_v').select('id, authors(name)');
    expect(status).toBe(400);
    expect(error?.code).toBe('PGRST200');
    const books = await client().from('books_v').select('id, author_calc(name)');
    expect(books.error?.code).toBe('PGRST200');
  });

  it('a constraint name as target reaches the table only, never a view exposing the same key', async () => {
    const { data, error } = await client().from('authors').select('name, books_author_id_fkey(title)').eq('id', 3);
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Curie', books_author_id_fkey: [{ title: 'Radioactive Substances' }] }]);
  });

  it("PGRST201 lists one-to-many before many-to-one, as PostgREST's schema cache sorts them", async () => {
    const { error, status } = await client().from('agents').select('*, departments(*)');
    expect(status).toBe(300);
    expect(error).toEqual({
      code: 'PGRST201',
      message: "Could not embed because more than one relationship was found for 'agents' and 'departments'",
      details: [
        { cardinality: 'one-to-many', relationship: 'departments_head_id_fkey using agents(id) and departments(head_id)', embedding: 'agents with departments' },
        { cardinality: 'many-to-one', relationship: 'agents_department_id_fkey using agents(department_id) and departments(id)', embedding: 'agents with departments' },
      ],
      hint: "Try changing 'departments' to one of the following: 'departments!departments_head_id_fkey', 'departments!agents_department_id_fkey'. Find the desired relationship in the 'details' key.",
    });
  });
});

describe('the access policy covers every view of an embed, before any SQL', () => {
  it('an embedded view, or a junction view, the policy does not let the caller read: 403, no statement', async () => {
    const app = await appWith({ access: { policy: { default_decision: 'allow', tables: { books_v: { operations: [] }, book_shelves_v: { operations: [] } } } } });
    executed.length = 0;
    for (const query of [
      app.client().from('authors').select('name, books_v!books_author_id_fkey(title)'),
      app.client().from('authors_v').select('name, books_v!writer_id(title)'),
      app.client().from('books').select('title, shelves!book_shelves_v(label)'),
    ]) {
      const { status, data } = await query;
      expect(status).toBe(403);
      expect(data).toBeNull();
    }
    expect(executed.filter((t) => t !== '')).toEqual([]);
    const allowed = await app.client().from('books').select('title, shelves!book_shelves(label)').eq('id', 1);
    expect(allowed.data).toEqual([{ title: 'Notes on the Engine', shelves: [{ label: 'Favourites' }] }]);
  });
});

describe('schema reload', () => {
  it('a view created after start relates once the schema is reloaded', async () => {
    const app = await appWith({});
    await db.admin.query(`CREATE VIEW pgrst.late_shelves WITH (security_invoker = true) AS SELECT id, label FROM pgrst.shelves;
      GRANT SELECT ON pgrst.late_shelves TO tablegate_app;`);
    await app.gateway.reloadSchema();
    const { data, error } = await app.client().from('late_shelves').select('label, books!book_shelves(title)').eq('id', 2).order('id', { referencedTable: 'books' });
    expect(error).toBeNull();
    expect(data).toEqual([{ label: 'To read', books: [{ title: 'Jane Eyre' }, { title: 'Radioactive Substances' }] }]);
  });
});
