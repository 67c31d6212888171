/**
 * Computed fields (docs/postgrest-dialect.md, "Computed fields"): a function of the exposed schema
 * taking one argument of a table's row type and returning a scalar is selectable, filterable and
 * orderable by its name, is not part of `*`, runs as the caller (RLS applies inside it) and must
 * be named by the access policy's `read_columns` list (a 403 before any SQL otherwise).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PostgrestApp } from '../support/postgrest-app';
import { pgrstTokenA, pgrstTokenB, startPostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
let app: PostgrestApp;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query(`
    CREATE FUNCTION pgrst.title_shout(pgrst.books) RETURNS text LANGUAGE sql STABLE AS $$ SELECT upper($1.title) $$;
    CREATE FUNCTION pgrst.visible_books(pgrst.authors) RETURNS bigint LANGUAGE sql STABLE AS $$ SELECT count(*) FROM pgrst.books $$;
    CREATE FUNCTION pgrst_alt.pen_name(pgrst.authors) RETURNS text LANGUAGE sql STABLE AS $$ SELECT upper($1.name) $$;
    GRANT EXECUTE ON FUNCTION pgrst.title_shout(pgrst.books), pgrst.visible_books(pgrst.authors), pgrst_alt.pen_name(pgrst.authors) TO PUBLIC;
  `);
  app = await startPostgrestApp({}, db);
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

it.each([
  [pgrstTokenA, [{ id: 2, title_shout: 'JANE EYRE' }, { id: 1, title_shout: 'NOTES ON THE ENGINE' }]],
  [pgrstTokenB, [{ id: 12, title_shout: 'TENANT B SCIENCE' }, { id: 11, title_shout: 'TENANT B SECRETS' }]],
])('postgrest-js selects, filters and orders by a computed field, each tenant its own rows', async (token, expected) => {
  const { data, error, status } = await app.client(token).from('books').select('id,title_shout').in('id', [1, 2, 11, 12]).order('title_shout');
  expect(error).toBeNull();
  expect(status).toBe(200);
  expect(data).toEqual(expected);
  const one = await app.client(token).from('books').select('id').eq('title_shout', expected[0]!.title_shout);
  expect(one.data).toEqual([{ id: expected[0]!.id }]);
});

it('a computed field is not part of *', async () => {
  const { data } = await app.client(pgrstTokenA).from('books').select('*').eq('id', 1);
  expect(data).toHaveLength(1);
  expect(Object.keys(data![0])).not.toContain('title_shout');
  expect(Object.keys(data![0])).toContain('title');
});

it.each([
  [pgrstTokenA, 5],
  [pgrstTokenB, 2],
])('the function runs as the caller: row-level security applies inside it', async (token, count) => {
  const { data, error } = await app.client(token).from('authors').select('visible_books').limit(1);
  expect(error).toBeNull();
  expect(data).toEqual([{ visible_books: count }]);
});

it('the policy must name a computed field in read_columns: otherwise 403 before SQL', async () => {
  const all = await startPostgrestApp({ access: { policy: { default_decision: 'allow', tables: { books: { operations: ['read'] } } } } }, db);
  const listed = await startPostgrestApp({ access: { policy: { default_decision: 'allow', tables: { books: { operations: ['read'], read_columns: { only: ['id', 'title_shout'] } } } } } }, db);
  try {
    const denied = await all.client(pgrstTokenA).from('books').select('id,title_shout').eq('id', 1);
    expect(denied.status).toBe(403);
    expect(denied.data).toBeNull();
    const filtered = await all.client(pgrstTokenA).from('books').select('id').eq('title_shout', 'JANE EYRE');
    expect(filtered.status).toBe(403);
    const ok = await listed.client(pgrstTokenA).from('books').select('id,title_shout').eq('id', 1);
    expect(ok.error).toBeNull();
    expect(ok.data).toEqual([{ id: 1, title_shout: 'NOTES ON THE ENGINE' }]);
  } finally {
    await all.close();
    await listed.close();
  }
});

it('the function allow-list governs computed fields as it governs calls: a function not on it is 403 before SQL', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-computed-'));
  const list = path.join(dir, 'functions.txt');
  fs.writeFileSync(list, 'pgrst.title_shout\n');
  const guarded = await startPostgrestApp({ rpcAllowlistPath: list }, db);
  try {
    const allowed = await guarded.client(pgrstTokenA).from('books').select('id,title_shout').eq('id', 1);
    expect(allowed.data).toEqual([{ id: 1, title_shout: 'NOTES ON THE ENGINE' }]);
    for (const query of [
      guarded.client(pgrstTokenA).from('authors').select('id,visible_books'),
      guarded.client(pgrstTokenA).from('authors').select('id').gt('visible_books', 0),
      // The rows a write answers with: refused before the write runs.
      guarded.client(pgrstTokenA).from('authors').update({ name: 'Changed' }).eq('id', 1).select('id,visible_books'),
    ]) {
      const refused = await query;
      expect(refused.status).toBe(403);
      expect(refused.data).toBeNull();
    }
    const { data } = await guarded.client(pgrstTokenA).from('authors').select('name').eq('id', 1);
    expect(data).toEqual([{ name: 'Ada' }]);
  } finally {
    await guarded.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('a function of a table is not a computed field of another schema\'s same-named table: matched by row type OID, not by name', async () => {
  // Discovery runs under the requests' search_path (pgrst, pgrst_alt, public), where format_type()
  // prints pgrst.authors as a bare `authors`: a match by name made pen_name a computed field of
  // pgrst_alt.authors too, whose rows the function cannot take.
  const own = await app.client(pgrstTokenA).from('authors').select('id,pen_name').eq('id', 1);
  expect(own.error).toBeNull();
  expect(own.data).toEqual([{ id: 1, pen_name: 'ADA' }]);
  const other = await app.client(pgrstTokenB).from('authors').select('id,pen_name').order('id');
  expect(other.data).toEqual([{ id: 11, pen_name: 'BOB AUTHOR' }, { id: 12, pen_name: 'BEA AUTHOR' }]);
  const wrong = await app.client(pgrstTokenA, 'pgrst_alt').from('authors').select('id,pen_name');
  expect(wrong.status).toBe(400);
  expect(wrong.error?.code).toBe('42703');
});
