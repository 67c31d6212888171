// setupFilesAfterEnv of the integration project: a test against real PostgreSQL (a cloned
// database, a gateway start, HTTP round trips) gets 30 s. A project-level `testTimeout` in
// jest.config.js would be ignored: jest-circus reads only the global one.
'use strict';
jest.setTimeout(30000);
