/**
 * examples/postgrest-js run against a real database: the server serves the PostgREST dialect at
 * /rest/v1 and the application's postgrest-js queries (queries.ts, written for PostgREST) answer
 * each tenant with its own rows.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createPostgrestServer } from '../../examples/postgrest-js/server';
import { author, booksOfGenre, connect, genreStats, searchTitles } from '../../examples/postgrest-js/queries';
import { pgrstTokenA, pgrstTokenB } from '../support/postgrest-app';
import { createTestDatabase, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
let server: Server;
let example: ReturnType<typeof createPostgrestServer>;
let url: string;

beforeAll(async () => {
  db = await createTestDatabase();
  example = createPostgrestServer({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['pgrst'] });
  await example.gateway.ready;
  server = await new Promise((resolve) => {
    const s = example.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rest/v1`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await example?.gateway.close();
  await db?.drop();
});

test('the application queries answer tenant A with its rows', async () => {
  const a = connect(url, pgrstTokenA);
  expect(await booksOfGenre(a, 'fiction', 0, 1)).toEqual({ books: [{ id: 3, title: 'Shirley', pages: 400, author: { name: 'Brontë' }, shelves: [] }], total: 2 });
  expect(await genreStats(a)).toEqual([
    { genre: 'fiction', books: 2, pages: 900 },
    { genre: 'science', books: 2, pages: 270 },
    { genre: 'poetry', books: 1, pages: 80 },
  ]);
  expect(await author(a, 1)).toEqual({ id: 1, name: 'Ada', author_bios: { bio: 'First programmer' } });
  expect(await author(a, 11)).toBeNull();
  expect(await searchTitles(a, 'jane OR secrets')).toEqual([{ id: 2, title: 'Jane Eyre' }]);
});

test('and tenant B with its own', async () => {
  const b = connect(url, pgrstTokenB);
  expect(await booksOfGenre(b, 'fiction')).toEqual({ books: [{ id: 11, title: 'Tenant B Secrets', pages: 99, author: { name: 'Bob Author' }, shelves: [{ label: 'B shelf' }] }], total: 1 });
  expect(await author(b, 1)).toBeNull();
  expect(await searchTitles(b, 'jane OR secrets')).toEqual([{ id: 11, title: 'Tenant B Secrets' }]);
});
