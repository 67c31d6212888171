/**
 * examples/postgrest-app started against a real database and driven by its postgrest-js script
 * (examples/postgrest-app/notes-script.ts), as a PostgREST project would be: only the URL and the
 * token's secret differ. Tenant B running the same script never sees or touches tenant A's rows.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createPostgrestApp } from '../../examples/postgrest-app/app';
import { runNotesScript } from '../../examples/postgrest-app/notes-script';
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

test('the postgrest-js script runs unchanged against the dialect', async () => {
  const result = await runNotesScript(url, signToken({ tenant_id: TENANT_A, sub: 'user-a' }));
  expect(result).toEqual({
    created: [
      { id: 501, slug: 'script-1', author: { name: 'Ada' } },
      { id: 502, slug: 'script-2', author: null },
    ],
    listed: [
      { slug: 'script-1', body: 'first' },
      { slug: 'script-2', body: 'second' },
    ],
    updated: { id: 502, body: 'edited' },
    sum: 42,
    deleted: [{ id: 501 }, { id: 502 }],
    errors: [],
  });
  const { rows } = await db.admin.query('SELECT count(*)::int AS n FROM pgrst.notes WHERE id IN (501, 502)');
  expect(rows[0].n).toBe(0);
});

test("tenant B runs the same script: its rows only, and tenant A's notes are untouched", async () => {
  const before = await db.admin.query('SELECT id, body FROM pgrst.notes WHERE tenant_id = $1 ORDER BY id', [TENANT_A]);
  const result = await runNotesScript(url, signToken({ tenant_id: TENANT_B, sub: 'user-b' }));
  // Author 1 is tenant A's: B's note may reference it, but the embed shows nothing of it.
  expect(result.created).toEqual([
    { id: 501, slug: 'script-1', author: null },
    { id: 502, slug: 'script-2', author: null },
  ]);
  expect(result.errors).toEqual([]);
  const after = await db.admin.query('SELECT id, body FROM pgrst.notes WHERE tenant_id = $1 ORDER BY id', [TENANT_A]);
  expect(after.rows).toEqual(before.rows);
});
