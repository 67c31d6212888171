// setupFilesAfterEnv of the PgBouncer projects (jest.config.js). In the `integration-pgbouncer`
// project every gateway a test builds sends unnamed statements (prepared_statements = false, the
// documented setting for PgBouncer before 1.21, docs/scaling-out.md) unless the test sets
// preparedStatements itself: createGateway is wrapped here rather than in each of the files that
// call it. Gateways started as child processes (`tablegate serve`) keep the default and rely on
// the gateway's own detection, which switches them to unnamed statements at `ready`.
'use strict';
const path = require('node:path');

// eslint-disable-next-line no-undef -- `globals` in jest.config.js
if (__TABLEGATE_TEST_PGBOUNCER_MODE__ === 'transaction') {
  const file = path.join(__dirname, '..', '..', 'lib', 'create-gateway.ts');
  jest.mock(file, () => {
    const actual = jest.requireActual(file);
    // LISTEN cannot work through transaction pooling (the server connection goes back to the pool
    // after each transaction): the documented settings behind PgBouncer are reload_database_url
    // or reload_listen = false (docs/scaling-out.md). The LISTEN tests run directly (jest.config.js).
    const behindPgBouncer = (options) => ({
      ...options,
      ...(options.preparedStatements === undefined ? { preparedStatements: false } : {}),
      ...(options.reloadListen === undefined && options.reloadDatabaseUrl === undefined ? { reloadListen: false } : {}),
    });
    const createGateway = (options, ...rest) =>
      actual.createGateway(options !== null && typeof options === 'object' && !Array.isArray(options) ? behindPgBouncer(options) : options, ...rest);
    return { ...actual, createGateway };
  });
}
