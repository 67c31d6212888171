/**
 * A PostgREST replacement in an Express app: tablegate's PostgREST dialect mounted at /rest/v1,
 * where a project written for PostgREST (or Supabase) points its client. Nothing in the client
 * code changes but the URL and the JWT secret the tokens are signed with (docs/postgrest-dialect.md).
 *
 * Run: DATABASE_URL=postgres://app@localhost/app JWT_SECRET=... SCHEMAS=pgrst npx ts-node examples/postgrest-app/app.ts
 * then `npx ts-node examples/postgrest-app/client-script.ts` (see README.md).
 * `__tests__/integration/examples-postgrest-app.test.ts` starts this app and drives it with the
 * script for two tenants, so it cannot silently stop working.
 *
 * With CHANGE_FEED_DATABASE_URL (a role with REPLICATION, wal_level = logical), screens stay live
 * too: supabase-js's `channel().on('postgres_changes', ...)` connects to /realtime/v1
 * (live-script.ts; tested by examples-postgrest-app-live.test.ts).
 */
import http from 'node:http';
import express from 'express';
import { createGateway } from 'tablegate';
import type { Gateway } from 'tablegate';

export interface PostgrestAppOptions {
  databaseUrl: string;
  jwtSecret: string;
  /** The exposed schemas; the first is the default (Accept-Profile / Content-Profile choose another). */
  schemas?: string[];
  /** Live changes for supabase-js Realtime: the change feed's connection (a role with REPLICATION) and the tenant column. */
  changeFeed?: { databaseUrl: string; tenantColumn: string };
}

export function createPostgrestApp(options: PostgrestAppOptions): { app: express.Express; gateway: Gateway } {
  const gateway = createGateway({
    databaseUrl: options.databaseUrl,
    jwtSecret: options.jwtSecret,
    dialect: 'postgrest',
    schemas: options.schemas ?? ['api'],
    ...(options.changeFeed ? { changeFeed: { enabled: true, ...options.changeFeed } } : {}),
  });
  const app = express();
  app.disable('x-powered-by');
  // Where Supabase serves PostgREST: supabase-js's createClient(url) calls `${url}/rest/v1`.
  app.use('/rest/v1', gateway);
  return { app, gateway };
}

/**
 * Listens on `port`; with the change feed on, realtime-js's WebSocket endpoint is attached to the
 * same server at /realtime/v1 (an Express app cannot route WebSocket upgrades itself).
 */
export function listenPostgrestApp({ app, gateway }: { app: express.Express; gateway: Gateway }, port: number, host = '127.0.0.1'): Promise<http.Server> {
  return new Promise((resolve) => {
    const server = http.createServer(app);
    if (gateway.config.changeFeed?.enabled === true) gateway.attachRealtime(server, { path: '/realtime/v1' });
    server.listen(port, host, () => resolve(server));
  });
}

if (require.main === module) {
  const feedUrl = process.env['CHANGE_FEED_DATABASE_URL'];
  const made = createPostgrestApp({
    databaseUrl: process.env['DATABASE_URL']!,
    jwtSecret: process.env['JWT_SECRET']!,
    schemas: (process.env['SCHEMAS'] ?? 'api').split(','),
    ...(feedUrl ? { changeFeed: { databaseUrl: feedUrl, tenantColumn: process.env['TENANT_COLUMN'] ?? 'tenant_id' } } : {}),
  });
  const port = Number(process.env['PORT'] ?? 3000);
  void listenPostgrestApp(made, port).then(() => console.log(`PostgREST dialect on http://localhost:${port}/rest/v1${feedUrl ? `, realtime on ws://localhost:${port}/realtime/v1` : ''}`));
}
