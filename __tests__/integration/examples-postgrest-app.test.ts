/**
 * examples/postgrest-app started against a real database and driven by its postgrest-js script
 * (examples/postgrest-app/client-script.ts), as a PostgREST project would be: only the URL and the
 * token's secret differ. The script reads (embeds, filters, order, exact count), writes (insert,
 * update, upsert, delete) and calls functions; tenant B running it sees only its own rows and never
 * touches tenant A's, even rows with the same slugs as its own.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createPostgrestApp } from '../../examples/postgrest-app/app';
import { runClientScript } from '../../examples/postgrest-app/client-script';
import { createTestDatabase, signToken, TEST_JWT_SECRET, TENANT_A, TENANT_B } from '../support/test-database';

type Db = Awaited<ReturnType<typeof createTestDatabase>>;

let db: Db;
let example: ReturnType<typeof createPostgrestApp>;
let server: Server;
let url: string;

beforeAll(async () => {
  db = await createTestDatabase();
  example = createPostgrestApp({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['pgrst'] });
  await example.gateway.ready;
  server = await new Promise((resolve) => {
    const s = example.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rest/v1`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await example?.gateway.close();
  await db?.drop();
});

/** Every note of a tenant as the database owner sees it (no RLS). */
async function notesOf(tenant: string): Promise<unknown[]> {
  const { rows } = await db.admin.query('SELECT id, slug, body, author_id FROM pgrst.notes WHERE tenant_id = $1 ORDER BY id', [tenant]);
  return rows;
}

test('the postgrest-js script runs unchanged against the dialect (tenant A)', async () => {
  const result = await runClientScript(url, signToken({ tenant_id: TENANT_A, sub: 'user-a' }));
  expect(result).toEqual({
    fiction: {
      books: [
        { id: 3, title: 'Shirley', author: { name: 'Brontë' }, shelves: [] },
        { id: 2, title: 'Jane Eyre', author: { name: 'Brontë' }, shelves: [{ label: 'Favourites' }, { label: 'To read' }] },
      ],
      total: 2,
    },
    created: [
      { slug: 'script-1', author: { name: 'Ada' } },
      { slug: 'script-2', author: null },
    ],
    notes: [
      { slug: 'a-first', body: 'A one', author: { name: 'Ada' } },
      { slug: 'a-second', body: 'A two', author: { name: 'Brontë' } },
      { slug: 'script-1', body: 'first', author: { name: 'Ada' } },
      { slug: 'script-2', body: 'second', author: null },
    ],
    updated: { slug: 'script-2', body: 'edited' },
    upserted: [
      { slug: 'script-2', body: 'merged' },
      { slug: 'script-3', body: 'third' },
    ],
    sum: 42,
    titles: [{ title: 'Jane Eyre' }, { title: 'Shirley' }],
    deleted: [{ slug: 'script-1' }, { slug: 'script-2' }, { slug: 'script-3' }],
    errors: [],
  });
  expect((await notesOf(TENANT_A)).map((n) => (n as { slug: string }).slug)).toEqual(['a-first', 'a-second']);
});

test("tenant B runs the same script: its rows only, and tenant A's rows are untouched", async () => {
  // Tenant A holds notes with the slugs B's script writes, upserts on and deletes by.
  await db.admin.query("INSERT INTO pgrst.notes (id, tenant_id, slug, body, author_id) VALUES (9001, $1, 'script-1', 'A keeps', 1), (9002, $1, 'script-2', 'A keeps', NULL)", [TENANT_A]);
  const before = await notesOf(TENANT_A);
  const result = await runClientScript(url, signToken({ tenant_id: TENANT_B, sub: 'user-b' }));
  expect(result).toEqual({
    fiction: { books: [{ id: 11, title: 'Tenant B Secrets', author: { name: 'Bob Author' }, shelves: [{ label: 'B shelf' }] }], total: 1 },
    created: [
      { slug: 'script-1', author: { name: 'Bob Author' } },
      { slug: 'script-2', author: null },
    ],
    notes: [
      { slug: 'b-first', body: 'B one', author: { name: 'Bob Author' } },
      { slug: 'script-1', body: 'first', author: { name: 'Bob Author' } },
      { slug: 'script-2', body: 'second', author: null },
    ],
    updated: { slug: 'script-2', body: 'edited' },
    upserted: [
      { slug: 'script-2', body: 'merged' },
      { slug: 'script-3', body: 'third' },
    ],
    sum: 42,
    titles: [{ title: 'Tenant B Secrets' }],
    deleted: [{ slug: 'script-1' }, { slug: 'script-2' }, { slug: 'script-3' }],
    errors: [],
  });
  expect(await notesOf(TENANT_A)).toEqual(before);
  expect((await notesOf(TENANT_B)).map((n) => (n as { slug: string }).slug)).toEqual(['b-first']);
});
