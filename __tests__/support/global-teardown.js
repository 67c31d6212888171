// Jest globalTeardown of the integration projects: stops the PostgreSQL server that
// global-setup.js started (embedded server or container); for a TABLEGATE_TEST_DATABASE_URL
// server, drops the databases this run's test files left behind.
'use strict';

module.exports = async function globalTeardown() {
  // The PgBouncer projects' PgBouncer (global-setup-pgbouncer.js), if this run started one.
  const bouncer = globalThis.__TABLEGATE_TEST_PGBOUNCER__;
  delete globalThis.__TABLEGATE_TEST_PGBOUNCER__;
  if (bouncer) await bouncer.stop();
  const server = globalThis.__TABLEGATE_TEST_SERVER__;
  delete globalThis.__TABLEGATE_TEST_SERVER__;
  if (server) await server.stop();
};
