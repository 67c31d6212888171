/**
 * A PostgREST replacement: tablegate with the PostgREST dialect mounted where PostgREST (or
 * Supabase's Data API) answers, `/rest/v1`. An application written against PostgREST with
 * postgrest-js (queries.ts) runs against it by changing only the URL and the JWT secret.
 *
 * Run: DATABASE_URL=postgres://app@localhost/app JWT_SECRET=... SCHEMAS=api npx ts-node examples/postgrest-js/server.ts
 * (see README.md). `__tests__/integration/examples-postgrest-js.test.ts` starts it and runs
 * queries.ts through it, so it cannot silently stop working.
 */
import express from 'express';
import { createGateway } from 'tablegate';
import type { Gateway } from 'tablegate';

export interface ServerOptions {
  databaseUrl: string;
  jwtSecret: string;
  /** The exposed schemas (PostgREST's db-schemas); the first is the default. */
  schemas: string[];
}

export function createPostgrestServer(options: ServerOptions): { app: express.Express; gateway: Gateway } {
  const gateway = createGateway({ databaseUrl: options.databaseUrl, jwtSecret: options.jwtSecret, schemas: options.schemas, dialect: 'postgrest' });
  const app = express();
  app.use('/rest/v1', gateway);
  return { app, gateway };
}

if (require.main === module) {
  const { app, gateway } = createPostgrestServer({
    databaseUrl: process.env.DATABASE_URL ?? '',
    jwtSecret: process.env.JWT_SECRET ?? '',
    schemas: (process.env.SCHEMAS ?? 'public').split(','),
  });
  const server = app.listen(Number(process.env.PORT ?? 3000), () => console.log(`PostgREST dialect at http://localhost:${process.env.PORT ?? 3000}/rest/v1`));
  process.on('SIGTERM', () => server.close(() => void gateway.close()));
}
