/**
 * The PostgREST dialect's integration set-up: a fresh test database, a gateway with
 * `dialect: 'postgrest'` over the schemas of __tests__/fixtures/080-postgrest.sql, served over
 * real HTTP (postgrest-js uses fetch), and clients of @supabase/postgrest-js for tenants A and B.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { PostgrestClient } from '@supabase/postgrest-js';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from './test-database';

export const pgrstTokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
export const pgrstTokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });

export interface PostgrestApp {
  readonly db: TestDatabase;
  readonly gateway: Gateway;
  /** The base URL PostgREST would have, e.g. http://127.0.0.1:1234/rest/v1. */
  readonly url: string;
  /** A postgrest-js client with this bearer token (default: tenant A's), on this schema. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  client(token?: string, schema?: string): PostgrestClient<any, any, any>;
  close(): Promise<void>;
}

export async function startPostgrestApp(options: Partial<GatewayOptions> = {}, db?: TestDatabase): Promise<PostgrestApp> {
  const database = db ?? (await createTestDatabase());
  const gateway = createGateway({ databaseUrl: database.appUrl, jwtSecret: TEST_JWT_SECRET, dialect: 'postgrest', schemas: ['pgrst', 'pgrst_alt'], ...options });
  await gateway.ready;
  const app = express().use('/rest/v1', gateway);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rest/v1`;
  return {
    db: database,
    gateway,
    url,
    client: (token = pgrstTokenA, schema?: string) => new PostgrestClient(url, { headers: token === '' ? {} : { Authorization: `Bearer ${token}` }, ...(schema ? { schema } : {}) }),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
      if (!db) await database.drop();
    },
  };
}

/**
 * A PostgREST-dialect app on `db` whose execute stage first reports each statement's text to
 * `record` (a request refused before any SQL reports none): what tests of "refused before SQL" read.
 */
export function startRecordingPostgrestApp(record: (text: string) => void, options: Partial<GatewayOptions>, db: TestDatabase): Promise<PostgrestApp> {
  return startPostgrestApp({ stages: { execute: (ctx, execute) => (record(ctx.plan.query?.text ?? ''), execute(ctx)) }, ...options }, db);
}

/** `appWith(options)` of a test file: a recording app (above) on `db()`, kept in `apps` for afterAll to close. */
export function recordingApps(db: () => TestDatabase, apps: PostgrestApp[], record: (text: string) => void): (options?: Partial<GatewayOptions>) => Promise<PostgrestApp> {
  return async (options = {}) => {
    const app = await startRecordingPostgrestApp(record, options, db());
    apps.push(app);
    return app;
  };
}

/** One app for a whole test file: started in beforeAll, closed in afterAll. */
export function usePostgrestApp(options: Partial<GatewayOptions>, onStart: (app: PostgrestApp) => void): void {
  let started: PostgrestApp | undefined;
  beforeAll(async () => {
    started = await startPostgrestApp(options);
    onStart(started);
  });
  afterAll(() => started?.close());
}
