// Two projects: `unit` (no database) and `integration` (real PostgreSQL, see
// __tests__/support/global-setup.js). `npm test` type-checks with tsc first, so ts-jest only
// transpiles: tsconfig.json sets `isolatedModules: true`, which is ts-jest's transpile-only switch
// (its own `isolatedModules` option is deprecated in favour of the tsconfig one).
'use strict';

const shared = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The examples import the package by name, as users do.
  moduleNameMapper: { '^tablegate$': '<rootDir>/lib/index.ts' },
};

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
      ...shared,
      displayName: 'integration',
      rootDir: __dirname,
      testMatch: ['<rootDir>/__tests__/integration/**/*.test.ts'],
      // One PostgreSQL server per run; each test file clones its own database from the template,
      // so files run in parallel workers without sharing data.
      globalSetup: '<rootDir>/__tests__/support/global-setup.js',
      globalTeardown: '<rootDir>/__tests__/support/global-teardown.js',
      setupFilesAfterEnv: ['<rootDir>/__tests__/support/integration-setup.js'],
    },
  ],
};
