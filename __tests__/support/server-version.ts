/**
 * Tests that need a newer PostgreSQL than the harness minimum (13): `describeFrom(150000, why)`
 * is `describe` on a new enough server, else `describe.skip` with a console line saying why, so
 * the skip shows in the report instead of passing silently. The number is the server's
 * `server_version_num`, read by global-setup.js.
 */
export function serverVersionNum(): number {
  const num = Number(process.env.TABLEGATE_TEST_SERVER_VERSION_NUM);
  if (!Number.isInteger(num) || num <= 0) throw new Error('TABLEGATE_TEST_SERVER_VERSION_NUM is not set: run the integration tests through jest (global-setup.js)');
  return num;
}

export function describeFrom(minimum: number, why: string): jest.Describe {
  if (serverVersionNum() >= minimum) return describe;
  console.log(`skipped: ${why} needs PostgreSQL server_version_num >= ${minimum}; this server is ${serverVersionNum()}`);
  return describe.skip;
}
