// Jest globalSetup of the PgBouncer projects (jest.config.js, TABLEGATE_TEST_PGBOUNCER): the usual
// PostgreSQL server and template (global-setup.js, run once whichever project asks first), then
// one PgBouncer in front of it in pool_mode = transaction (support/pgbouncer.js), shared by the
// PgBouncer projects. From PgBouncer 1.21 it also keeps prepared statements
// (max_prepared_statements), which the `integration-pgbouncer-prepared` project needs; the
// `integration-pgbouncer` project sends unnamed statements, which that setting does not affect.
// support/test-database.ts points `appUrl` at it; `adminUrl` stays direct.
'use strict';
const globalSetup = require('./global-setup');
const { findPgBouncer, PREPARED_STATEMENTS_SINCE, startPgBouncer } = require('./pgbouncer');

module.exports = async function globalSetupPgBouncer() {
  await globalSetup();
  if (globalThis.__TABLEGATE_TEST_PGBOUNCER__) return;
  let bouncer;
  try {
    const found = findPgBouncer();
    if (found.missing) throw new Error(`the PgBouncer projects are selected (TABLEGATE_TEST_PGBOUNCER) but ${found.missing}`);
    bouncer = await startPgBouncer(process.env.TABLEGATE_TEST_ADMIN_URL, {
      users: [{ user: process.env.TABLEGATE_TEST_APP_USER, password: process.env.TABLEGATE_TEST_APP_PASSWORD }],
      poolMode: 'transaction',
      ...(found.versionNum >= PREPARED_STATEMENTS_SINCE ? { maxPreparedStatements: 200 } : {}),
    });
  } catch (err) {
    // Jest runs no globalTeardown after a failed globalSetup: do not leave the server running.
    const server = globalThis.__TABLEGATE_TEST_SERVER__;
    delete globalThis.__TABLEGATE_TEST_SERVER__;
    await server?.stop().catch(() => undefined);
    throw err;
  }
  globalThis.__TABLEGATE_TEST_PGBOUNCER__ = bouncer;
  process.env.TABLEGATE_TEST_PGBOUNCER_PORT = String(bouncer.port);
  console.log(`tablegate integration tests: PgBouncer ${bouncer.version} at 127.0.0.1:${bouncer.port} (pool_mode = transaction) in front of it`);
};
