/**
 * Configuration and start-up traps, against a real PostgreSQL as the RLS-bound app role:
 * - require_auth with no way to verify a token refuses to start (naming JWT_SECRET), while
 *   require_auth = false without a key serves anonymous callers;
 * - `schemas` with names that need quoting (`Mixed Case`, `a-b`, `we"ird`, `x@y`) are served
 *   (fixture 060-quoted-schemas.sql), tenant by tenant;
 * - `distinct` and the aggregate `column=` take quoted names like `select` and `sort`;
 * - an unreachable or refusing database makes `ready` reject with one line naming the database
 *   and host:port, no password and no driver stack;
 * - the superuser / BYPASSRLS refusal names allow_rls_bypass_role in the caller's spelling.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { createGateway, DatabaseUnreachableError, GatewayConfigError } from '../../lib';
import { freePort } from '../../lib/cli/free-port';
import { createTestDatabase, pgBouncerMode, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { gatewayFactory, tokenA, tokenB } from '../support/gateway-app';

let db: TestDatabase;
let dir: string;
const apps = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET }));

beforeAll(async () => {
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-startup-'));
});

afterAll(async () => {
  await apps.closeAll();
  await db?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs `fn` with env JWT_SECRET unset (the gateway falls back to it), restoring it afterwards. */
function withoutEnvSecret<T>(fn: () => T): T {
  const saved = process.env['JWT_SECRET'];
  delete process.env['JWT_SECRET'];
  try {
    return fn();
  } finally {
    if (saved !== undefined) process.env['JWT_SECRET'] = saved;
  }
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('require_auth needs a way to verify tokens', () => {
  it('createGateway throws a GatewayConfigError naming JWT_SECRET when require_auth is on and no key is set', () => {
    const error = withoutEnvSecret(() => thrownBy(() => createGateway({ databaseUrl: db.appUrl })));
    expect(error).toBeInstanceOf(GatewayConfigError);
    const message = (error as GatewayConfigError).message;
    expect(message).toMatch(/^require_auth is on \(the default\) but no key to verify tokens is configured/);
    expect(message).toContain('JWT_SECRET');
    expect(message).toContain('jwt_public_key_path');
    expect(message).toContain('jwks_url');
    // Explicitly on: the same.
    expect(withoutEnvSecret(() => thrownBy(() => createGateway({ databaseUrl: db.appUrl, requireAuth: true })))).toBeInstanceOf(GatewayConfigError);
  });

  it('require_auth = false without a key starts and serves anonymous callers (who see no tenant rows)', async () => {
    const gateway = apps.track(withoutEnvSecret(() => createGateway({ databaseUrl: db.appUrl, requireAuth: false })));
    await gateway.ready;
    const res = await request(express().use('/api', gateway)).get('/api/orders');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });
});

describe('schemas whose names need quoting', () => {
  const schemas = ['Mixed Case', 'a-b', 'we"ird', 'x@y'];
  const tables = [
    ['Mixed Case', 'Notes'],
    ['a-b', 'dash-items'],
    ['we"ird', 'quote"things'],
    ['x@y', 'at_docs'],
  ];
  let app: express.Express;
  beforeAll(async () => {
    app = await apps.appWith({ schemas });
  });
  const get = (url: string, token = tokenA) => request(app).get(url).set('Authorization', `Bearer ${token}`);

  it.each(tables)('lists and gets the rows of %s.%s, each tenant its own', async (_schema, table) => {
    const base = `/api/${encodeURIComponent(table!)}`;
    const a = await get(`${base}?select=id,tenant_id,body`);
    expect(a.status).toBe(200);
    expect(a.body.data).toEqual([
      { id: 1, tenant_id: TENANT_A, body: 'a one' },
      { id: 2, tenant_id: TENANT_A, body: 'a two' },
    ]);
    const b = await get(`${base}?select=id,tenant_id,body`, tokenB);
    expect(b.body.data).toEqual([{ id: 3, tenant_id: TENANT_B, body: 'b three' }]);
    expect((await get(`${base}/2?select=body`)).body).toEqual({ data: { body: 'a two' } });
    expect((await get(`${base}/3`)).status).toBe(404); // tenant B's row
  });

  it('writes into a quoted schema under RLS', async () => {
    const res = await request(app)
      .post(`/api/${encodeURIComponent('dash-items')}`)
      .set('Authorization', `Bearer ${tokenA}`)
      .set('Content-Type', 'application/json')
      .send({ id: 10, tenant_id: TENANT_A, body: 'new' });
    expect(res.status).toBe(201);
    const { rows } = await db.admin.query('SELECT tenant_id, body FROM "a-b"."dash-items" WHERE id = 10');
    expect(rows).toEqual([{ tenant_id: TENANT_A, body: 'new' }]);
  });

  it('calls a function by its quoted schema-qualified name', async () => {
    const res = await request(app).post(`/api/rpc/${encodeURIComponent('x@y.my_doc_count')}`).set('Authorization', `Bearer ${tokenB}`);
    expect(res.status).toBe(200);
    expect(Number(res.body.data)).toBe(1);
  });
});

describe('distinct and aggregate column= take quoted names like select and sort', () => {
  let app: express.Express;
  beforeAll(async () => {
    app = await apps.appWith();
  });
  const weird = `/api/${encodeURIComponent('we"ird table')}`;
  const get = (query: string) => request(app).get(`${weird}${query}`).set('Authorization', `Bearer ${tokenA}`);

  it('distinct="a""b" lists the distinct values of column a"b', async () => {
    const select = await get(`?select=${encodeURIComponent('"a""b"')}&sort=${encodeURIComponent('"a""b"')}`);
    expect(select.status).toBe(200);
    const res = await get(`?distinct=${encodeURIComponent('"a""b"')}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ 'a"b': '""' }, { 'a"b': 'quote " inside' }, { 'a"b': null }]);
  });

  it('aggregate column="a""b" and column="from" resolve the quoted names', async () => {
    const max = await get(`/aggregate?fn=max&column=${encodeURIComponent('"a""b"')}`);
    expect([max.status, max.body]).toEqual([200, { data: { fn: 'max', column: 'a"b', value: 'quote " inside' } }]);
    const sum = await get(`/aggregate?fn=sum&column=${encodeURIComponent('"from"')}`);
    expect([sum.status, sum.body]).toEqual([200, { data: { fn: 'sum', column: 'from', value: 6 } }]);
  });
});

describe('ready names the database when it cannot be reached', () => {
  const password = 'do-not-print-me-7f3a';

  it('an unreachable port: one line naming the database and host:port, no password, no stack', async () => {
    const port = await freePort(); // nothing listens there now
    const gateway = apps.track(createGateway({ databaseUrl: `postgres://nobody:${password}@127.0.0.1:${port}/none`, jwtSecret: TEST_JWT_SECRET }));
    const error = await gateway.ready.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnreachableError);
    const message = (error as Error).message;
    expect(message).toBe(`cannot reach the database at 127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
    expect((error as Error).stack).toBe(`DatabaseUnreachableError: ${message}`);
    expect(JSON.stringify(error) + String((error as Error).stack)).not.toContain(password);
    // Requests still get the usual 503.
    const res = await request(express().use('/api', gateway)).get('/api/orders').set('Authorization', `Bearer ${tokenA}`);
    expect(res.status).toBe(503);
  });

  it('a host name that resolves to several addresses (localhost) is named as configured', async () => {
    const port = await freePort();
    const gateway = apps.track(createGateway({ databaseUrl: `postgres://nobody:${password}@localhost:${port}/none`, jwtSecret: TEST_JWT_SECRET }));
    await expect(gateway.ready).rejects.toThrow(`cannot reach the database at localhost:${port}: connection refused (ECONNREFUSED)`);
  });

  it('a refused login says which database refused it and why, without the password', async () => {
    const url = new URL(db.appUrl);
    url.password = password;
    const gateway = apps.track(createGateway({ databaseUrl: url.toString(), jwtSecret: TEST_JWT_SECRET }));
    const error = (await gateway.ready.then(() => undefined, (e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(DatabaseUnreachableError);
    // PgBouncer checks the password itself and says it its own way.
    const why = pgBouncerMode ? 'SASL authentication failed (SQLSTATE 08P01)' : `password authentication failed for user "${decodeURIComponent(url.username)}" (SQLSTATE 28P01)`;
    expect(error.message).toBe(`the database at ${url.hostname}:${url.port} refused the connection: ${why}`);
    expect(String(error.stack)).not.toContain(password);
  });
});

describe('the superuser / BYPASSRLS refusal names allow_rls_bypass_role as the caller spells it', () => {
  it('in code: the allowRlsBypassRole option', async () => {
    const gateway = apps.track(createGateway({ databaseUrl: db.adminUrl, jwtSecret: TEST_JWT_SECRET }));
    const error = (await gateway.ready.then(() => undefined, (e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect(error.message).toMatch(/is a superuser, so row-level security would not isolate tenants/);
    expect(error.message).toContain('(or set the option `allowRlsBypassRole: true` to accept the risk)');
    expect(error.message).not.toContain('allow_rls_bypass_role');
  });

  it('in gw.toml: allow_rls_bypass_role in [gateway] of that file', async () => {
    const file = path.join(dir, 'gw.toml');
    fs.writeFileSync(file, `[gateway]\ndatabase_url = ${JSON.stringify(db.adminUrl)}\njwt_secret = "${TEST_JWT_SECRET}"\n`);
    const gateway = apps.track(createGateway({ configFile: file }));
    const error = (await gateway.ready.then(() => undefined, (e: unknown) => e)) as Error;
    expect(error.message).toContain(`(or set \`allow_rls_bypass_role = true\` in [gateway] of ${file} to accept the risk)`);
    expect(error.message).not.toContain('allowRlsBypassRole');
  });

  it('when allowed, the warning says which setting allowed it', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const gateway = apps.track(createGateway({ databaseUrl: db.adminUrl, jwtSecret: TEST_JWT_SECRET, allowRlsBypassRole: true }));
      await gateway.ready;
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('is a superuser; row-level security does not apply to it (allowed by the option `allowRlsBypassRole: true`).'));
    } finally {
      warn.mockRestore();
    }
  });
});
