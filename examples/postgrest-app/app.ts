/**
 * A PostgREST replacement in an Express app: tablegate's PostgREST dialect mounted at /rest/v1,
 * where a project written for PostgREST (or Supabase) points its client. Nothing in the client
 * code changes but the URL and the JWT secret the tokens are signed with (docs/postgrest-dialect.md).
 *
 * Run: DATABASE_URL=postgres://app@localhost/app JWT_SECRET=... SCHEMAS=pgrst npx ts-node examples/postgrest-app/app.ts
 * then `npx ts-node examples/postgrest-app/client-script.ts` (see README.md).
 * `__tests__/integration/examples-postgrest-app.test.ts` starts this app and drives it with the
 * script for two tenants, so it cannot silently stop working.
 */
import express from 'express';
import { createGateway } from 'tablegate';
import type { Gateway } from 'tablegate';

export interface PostgrestAppOptions {
  databaseUrl: string;
  jwtSecret: string;
  /** The exposed schemas; the first is the default (Accept-Profile / Content-Profile choose another). */
  schemas?: string[];
}

export function createPostgrestApp(options: PostgrestAppOptions): { app: express.Express; gateway: Gateway } {
  const gateway = createGateway({ databaseUrl: options.databaseUrl, jwtSecret: options.jwtSecret, dialect: 'postgrest', schemas: options.schemas ?? ['api'] });
  const app = express();
  app.disable('x-powered-by');
  // Where Supabase serves PostgREST: supabase-js's createClient(url) calls `${url}/rest/v1`.
  app.use('/rest/v1', gateway);
  return { app, gateway };
}

if (require.main === module) {
  const { app } = createPostgrestApp({ databaseUrl: process.env['DATABASE_URL']!, jwtSecret: process.env['JWT_SECRET']!, schemas: (process.env['SCHEMAS'] ?? 'api').split(',') });
  const port = Number(process.env['PORT'] ?? 3000);
  app.listen(port, () => console.log(`PostgREST dialect on http://localhost:${port}/rest/v1`));
}
