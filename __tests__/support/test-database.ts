/**
 * Per-file test databases for the integration tests.
 *
 * createTestDatabase() clones the template that global-setup.js built from __tests__/fixtures, so
 * every test file gets the same data, isolated from the writes of files running in other workers.
 * `appUrl` connects as the app role (no superuser, no BYPASSRLS: RLS applies); `adminUrl` and
 * `admin` connect as the superuser, for direct checks that bypass RLS. In the PgBouncer projects
 * (jest.config.js) `appUrl` goes through the run's PgBouncer in transaction mode; `adminUrl` stays
 * direct.
 */
import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import pg from 'pg';

/** HS256 secret that the integration tests give the gateway (>= 32 bytes). */
export const TEST_JWT_SECRET = 'tablegate-integration-test-secret-do-not-use';

/** The fixture tenants (see the header of __tests__/fixtures/020-data.sql). */
export const TENANT_A = '11111111-1111-4111-8111-111111111111';
export const TENANT_B = '22222222-2222-4222-8222-222222222222';
export const TENANT_C = '33333333-3333-4333-8333-333333333333';

/** Rows per tenant of each fixture table, as documented in 020-data.sql (checked by harness.test.ts). */
export const FIXTURE_ROWS = {
  tenants: { A: 1, B: 1, C: 1 },
  users: { A: 14, B: 14, C: 2 },
  orders: { A: 120, B: 80, C: 2 },
  order_items: { A: 180, B: 120, C: 3 },
  user_profiles: { A: 10, B: 9, C: 1 },
  order_tags: { A: 50, B: 53, C: 1 },
  audit_log: { A: 10, B: 6, C: 1 },
  shipments: { A: 8, B: 5, C: 0 },
  'we"ird table': { A: 3, B: 2, C: 0 },
  documents: { A: 6, B: 4, C: 1 },
} as const;

/**
 * The PgBouncer project this file runs in (`transaction`: prepared_statements = false;
 * `transaction-prepared`: PgBouncer keeps prepared statements), or undefined when `appUrl` is direct.
 */
export const pgBouncerMode: string | undefined = (globalThis as { __TABLEGATE_TEST_PGBOUNCER_MODE__?: string }).__TABLEGATE_TEST_PGBOUNCER_MODE__;

/**
 * `describe` for a file or block that cannot run through PgBouncer: skipped, saying why, in the
 * PgBouncer projects (each such case is listed in docs/scaling-out.md).
 */
export function describeDirect(reason: string): jest.Describe {
  if (pgBouncerMode === undefined) return describe;
  process.stderr.write(`tablegate: skipped through PgBouncer (${pgBouncerMode}): ${expect.getState().testPath ?? ''}: ${reason}\n`);
  return describe.skip;
}

/** `it` for one test that cannot run through PgBouncer: skipped, saying why, in the PgBouncer projects. */
export function itDirect(reason: string): jest.It {
  if (pgBouncerMode === undefined) return it;
  process.stderr.write(`tablegate: skipped through PgBouncer (${pgBouncerMode}): ${expect.getState().testPath ?? ''}: ${reason}\n`);
  return it.skip;
}

export interface TestDatabase {
  /** Database name, `tg_<run>_<random>`. */
  readonly name: string;
  /** The app role (tablegate_app) on this database. */
  readonly appUrl: string;
  /** The superuser on this database. */
  readonly adminUrl: string;
  /** A small superuser pool on this database (bypasses RLS). */
  readonly admin: pg.Pool;
  /** Closes `admin` and drops the database, closing any connection left open. */
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const env = harnessEnv();
  const name = `tg_${env.runId}_${randomBytes(4).toString('hex')}`;
  await withAdmin(env.adminUrl, async (client) => {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${env.templateDb}`);
    // Per-database settings are not copied from a template. Fixed here so that timestamps render
    // the same and full-text search stems English on every server the harness may use.
    await client.query(`ALTER DATABASE ${name} SET timezone TO 'UTC'`);
    await client.query(`ALTER DATABASE ${name} SET default_text_search_config TO 'pg_catalog.english'`);
  });
  const adminUrl = withDatabase(env.adminUrl, name);
  const app = new URL(adminUrl);
  if (pgBouncerMode !== undefined) {
    if (!env.pgBouncerPort) throw new Error('a PgBouncer project without its PgBouncer: run it through jest.config.js (global-setup-pgbouncer.js)');
    app.hostname = '127.0.0.1';
    app.port = env.pgBouncerPort;
  }
  app.username = encodeURIComponent(env.appUser);
  app.password = encodeURIComponent(env.appPassword);
  const admin = new pg.Pool({ connectionString: adminUrl, max: 2 });
  admin.on('error', () => undefined); // an idle connection closed by the server must not crash the worker
  let dropped = false;
  return {
    name,
    appUrl: app.toString(),
    adminUrl,
    admin,
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin.end();
      await withAdmin(env.adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** A signed HS256 JWT with these claims (`iat` is added). */
export function signToken(claims: Record<string, unknown>, secret: string = TEST_JWT_SECRET, options: jwt.SignOptions = {}): string {
  return jwt.sign(claims, secret, { algorithm: 'HS256', ...options });
}

function harnessEnv() {
  const { TABLEGATE_TEST_ADMIN_URL, TABLEGATE_TEST_TEMPLATE_DB, TABLEGATE_TEST_APP_USER, TABLEGATE_TEST_APP_PASSWORD, TABLEGATE_TEST_RUN_ID } =
    process.env;
  if (!TABLEGATE_TEST_ADMIN_URL || !TABLEGATE_TEST_TEMPLATE_DB || !TABLEGATE_TEST_APP_USER || !TABLEGATE_TEST_APP_PASSWORD) {
    throw new Error(
      'the integration harness did not run: start these tests with `npx jest --selectProjects integration` ' +
        '(jest.config.js sets __tests__/support/global-setup.js as globalSetup)',
    );
  }
  return {
    adminUrl: TABLEGATE_TEST_ADMIN_URL,
    templateDb: TABLEGATE_TEST_TEMPLATE_DB,
    appUser: TABLEGATE_TEST_APP_USER,
    appPassword: TABLEGATE_TEST_APP_PASSWORD,
    runId: TABLEGATE_TEST_RUN_ID ?? 'x',
    pgBouncerPort: process.env.TABLEGATE_TEST_PGBOUNCER_PORT ?? '',
  };
}

async function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
