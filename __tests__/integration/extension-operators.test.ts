/**
 * Operators outside the search path (docs/querying.md#column-types): PostGIS and `isn` installed
 * in schema `extensions`, which is not on the gateway role's search_path, so `=`, `<`, ... of
 * geometry and isbn are found only qualified. eq, ne, gt, gte, lt, lte, in, sort and cursors on
 * those columns work in both dialects; a type with no such operator at all (xml `=`, point `=`,
 * xml ordering) is a 400 naming the column and its type, never a 500. Against a private
 * PostgreSQL 15 with PostGIS (the shared test server has none), as the non-superuser role
 * tablegate_app (no BYPASSRLS), RLS forced, two tenants. Skipped, saying why and how to enable it,
 * when Debian's PostgreSQL 15 or its PostGIS package is missing.
 */
import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { describeIfPresent, SETUP_SYSTEM } from '../support/skips';
import { signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';

const binDir = '/usr/lib/postgresql/15/bin';
const extensionDir = '/usr/share/postgresql/15/extension';
const run = describeIfPresent(
  'extension-operators.test.ts (PostGIS and isn in a schema off the search path)',
  [
    process.platform === 'linux' ? '' : 'Linux',
    fs.existsSync(path.join(binDir, 'postgres')) ? '' : `${binDir}/postgres (Debian postgresql-15)`,
    fs.existsSync(path.join(extensionDir, 'postgis.control')) ? '' : `${extensionDir}/postgis.control (Debian postgresql-15-postgis-3)`,
    fs.existsSync(path.join(extensionDir, 'isn.control')) ? '' : `${extensionDir}/isn.control (Debian postgresql-15)`,
  ],
  SETUP_SYSTEM,
);

const APP_PASSWORD = 'ops-app-test-password';
const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });

// ISBN-13s in order: 978-0-306-40615-7 < 978-1-4028-9462-6 < 978-3-16-148410-0 < 978-9-99-999999-?.
const ISBN = ['978-0-306-40615-7', '978-1-4028-9462-6', '978-3-16-148410-0', '978-0-596-52068-7'];

const SETUP_SQL = `
CREATE SCHEMA extensions;
CREATE EXTENSION postgis SCHEMA extensions;
CREATE EXTENSION isn SCHEMA extensions;
CREATE ROLE tablegate_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD '${APP_PASSWORD}';
-- The gateway's role may use the types, but its search_path does not reach their operators.
ALTER ROLE tablegate_app SET search_path = public;
GRANT USAGE ON SCHEMA extensions TO tablegate_app;
CREATE SCHEMA ops;
GRANT USAGE ON SCHEMA ops TO tablegate_app;
CREATE TABLE ops.things (
  id int PRIMARY KEY,
  tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
  shape extensions.geometry NOT NULL,
  code extensions.isbn13 NOT NULL,
  doc xml,
  spot point,
  ref oid NOT NULL DEFAULT 1,
  price money NOT NULL DEFAULT 2
);
ALTER TABLE ops.things ENABLE ROW LEVEL SECURITY;
ALTER TABLE ops.things FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON ops.things USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
GRANT SELECT ON ops.things TO tablegate_app;
INSERT INTO ops.things VALUES
  (1, '${TENANT_A}', 'POINT(1 1)', '${ISBN[0]}', '<a/>', '(1,1)'),
  (2, '${TENANT_A}', 'POINT(2 2)', '${ISBN[1]}', '<b/>', '(2,2)'),
  (3, '${TENANT_A}', 'POINT(3 3)', '${ISBN[2]}', '<c/>', '(3,3)'),
  (4, '${TENANT_B}', 'POINT(2 2)', '${ISBN[3]}', '<d/>', '(2,2)');
`;

run('operators outside the search path (PostGIS and isn in `extensions`, private PostgreSQL 15)', () => {
  let server: PrivatePostgres;
  const gateways: Gateway[] = [];
  let native: express.Express;
  let postgrest: express.Express;

  beforeAll(async () => {
    server = await startPrivatePostgres({ binDir, hba: ['host all tablegate_app 127.0.0.1/32 scram-sha-256'], setupSql: SETUP_SQL });
    const databaseUrl = `postgres://tablegate_app:${APP_PASSWORD}@127.0.0.1:${server.port}/postgres?sslmode=disable`;
    const a = createGateway({ databaseUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['ops'], reloadListen: false });
    const b = createGateway({ databaseUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['ops'], dialect: 'postgrest', postgrestAggregates: true, reloadListen: false });
    gateways.push(a, b);
    await Promise.all([a.ready, b.ready]);
    native = express().use('/api', a);
    postgrest = express().use('/rest/v1', b);
  }, 90000);

  afterAll(async () => {
    for (const g of gateways) await g.close();
    await server?.stop();
  });

  const get = (url: string, token = tokenA) => request(native).get(url).set('Authorization', `Bearer ${token}`);
  const pg = (url: string, token = tokenA) => request(postgrest).get(url).set('Authorization', `Bearer ${token}`);
  const ids = (rows: { id: number }[]) => rows.map((r) => r.id);

  it('the fixture: the role is no superuser, has no BYPASSRLS, and cannot reach the operators unqualified', async () => {
    const { rows } = await server.query("SELECT rolsuper, rolbypassrls, rolconfig FROM pg_roles WHERE rolname = 'tablegate_app'");
    expect(rows).toEqual([{ rolsuper: false, rolbypassrls: false, rolconfig: ['search_path=public'] }]);
    // What a request without qualified operators runs into: no `=` for geometry (42883), or an ambiguous one (42725).
    await expect(server.query("SET search_path = public; SELECT 'POINT(1 1)'::extensions.geometry = 'POINT(1 1)'::extensions.geometry")).rejects.toMatchObject({ code: expect.stringMatching(/^42(883|725)$/) });
    await server.query('RESET search_path');
  });

  it('native dialect: eq, ne, gt, gte, lt, lte and in on geometry and isbn, per tenant', async () => {
    const cases: [string, number[]][] = [
      ['shape=eq.POINT(2 2)', [2]],
      ['shape=ne.POINT(2 2)&sort=id', [1, 3]],
      ['shape=in.(POINT(1 1),POINT(3 3))&sort=id', [1, 3]],
      [`code=eq.${ISBN[1]}`, [2]],
      [`code=ne.${ISBN[1]}&sort=id`, [1, 3]],
      [`code=gt.${ISBN[0]}&sort=id`, [2, 3]],
      [`code=gte.${ISBN[1]}&sort=id`, [2, 3]],
      [`code=lt.${ISBN[2]}&sort=id`, [1, 2]],
      [`code=lte.${ISBN[0]}&sort=id`, [1]],
      [`code=in.(${ISBN[0]},${ISBN[2]},${ISBN[3]})&sort=id`, [1, 3]],
      ['shape=gt.POINT(1 1)&sort=id', [2, 3]],
    ];
    for (const [query, expected] of cases) {
      const res = await get(`/api/things?${query}`);
      expect({ query, status: res.status, ids: res.status === 200 ? ids(res.body.data) : res.body }).toEqual({ query, status: 200, ids: expected });
    }
    const other = await get('/api/things?shape=eq.POINT(2 2)', tokenB);
    expect({ status: other.status, ids: ids(other.body.data) }).toEqual({ status: 200, ids: [4] });
  });

  it.each(['code', '-code', 'shape', '-shape'])('native dialect: sort=%s walks every row once with next_cursor', async (sort) => {
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await get(`/api/things?sort=${sort}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res.body.data));
      cursor = res.body.next_cursor ?? undefined;
      if (!cursor) break;
    }
    expect(seen).toEqual(sort.startsWith('-') ? [3, 2, 1] : [1, 2, 3]);
  });

  it('PostgREST dialect: eq, neq, gt, gte, lt, lte, in, any/all and order on geometry and isbn', async () => {
    const cases: [string, number[]][] = [
      ['shape=eq.POINT(2 2)', [2]],
      ['shape=neq.POINT(2 2)&order=id', [1, 3]],
      ['shape=in.(POINT(1 1),POINT(3 3))&order=id', [1, 3]],
      [`code=eq.${ISBN[1]}`, [2]],
      [`code=neq.${ISBN[1]}&order=id`, [1, 3]],
      [`code=gt.${ISBN[0]}&order=id`, [2, 3]],
      [`code=gte.${ISBN[1]}&order=id`, [2, 3]],
      [`code=lt.${ISBN[2]}&order=id`, [1, 2]],
      [`code=lte.${ISBN[0]}&order=id`, [1]],
      [`code=in.(${ISBN[0]},${ISBN[2]})&order=id`, [1, 3]],
      [`code=eq(any).{${ISBN[0]},${ISBN[2]}}&order=id`, [1, 3]],
      [`code=neq(any).{${ISBN[0]},${ISBN[2]}}&order=id`, [1, 2, 3]],
      [`code=neq(all).{${ISBN[0]},${ISBN[2]}}&order=id`, [2]],
      ['order=code.desc', [3, 2, 1]],
      ['order=shape', [1, 2, 3]],
      ['or=(shape.eq.POINT(1 1),code.eq.' + ISBN[2] + ')&order=id', [1, 3]],
    ];
    for (const [query, expected] of cases) {
      const res = await pg(`/rest/v1/things?select=id&${query}`);
      expect({ query, status: res.status, ids: res.status === 200 ? ids(res.body) : res.body }).toEqual({ query, status: 200, ids: expected });
    }
    const other = await pg('/rest/v1/things?select=id&code=lt.' + ISBN[2], tokenB);
    expect({ status: other.status, body: other.body }).toEqual({ status: 200, body: [{ id: 4 }] });
  });

  it('a type without the operator: 400 naming the column and its type, before any SQL (native)', async () => {
    const cases: [string, RegExp][] = [
      ['doc=eq.<a/>', /`doc` is xml, which has no `=` operator/],
      ['doc=in.(<a/>)', /`doc` is xml, which has no `=` operator/],
      ['doc=gt.<a/>', /`doc` is xml, which has no ordering/],
      ['sort=doc', /`doc` is xml, which has no ordering/],
      ['spot=eq.(1,1)', /`spot` is point, which has no `=` operator/],
      ['sort=-spot', /`spot` is point, which has no ordering/],
    ];
    for (const [query, message] of cases) {
      const res = await get(`/api/things?${query}`);
      expect({ query, status: res.status, code: res.body.code }).toEqual({ query, status: 400, code: 'PARSE_ERROR' });
      expect(res.body.message).toMatch(message);
    }
    // point has a `<>` of its own.
    const ne = await get('/api/things?spot=ne.(2,2)&sort=id');
    expect({ status: ne.status, ids: ids(ne.body.data ?? []) }).toEqual({ status: 200, ids: [1, 3] });
  });

  it('a type without the operator: 400 naming the column and its type (PostgREST dialect)', async () => {
    for (const query of ['doc=eq.<a/>', 'spot=eq.(1,1)', 'order=doc', 'doc=in.(<a/>)', 'spot=eq(any).{"(1,1)"}']) {
      const res = await pg(`/rest/v1/things?select=id&${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(JSON.stringify(res.body)).toMatch(/`(doc|spot)` is (xml|point)/);
    }
  });

  it('an aggregate its column type has no function for: 400 naming the column and its type, before any SQL (native; PostgREST\'s own answer in its dialect)', async () => {
    const native: [string, RegExp][] = [
      ['fn=sum&column=ref', /sum needs a numeric column; `ref` is oid/],
      ['fn=avg&column=ref', /avg needs a numeric column; `ref` is oid/],
      ['fn=avg&column=price', /avg needs a numeric column; `price` is money/],
      ['fn=max&column=doc', /max needs an ordered type; `doc` is xml/],
      ['fn=min&column=spot', /min needs an ordered type; `spot` is point/],
    ];
    for (const [query, message] of native) {
      const res = await get(`/api/things/aggregate?${query}`);
      expect({ query, status: res.status, code: res.body.code, type: res.body.details?.type }).toEqual({ query, status: 400, code: 'PARSE_ERROR', type: expect.any(String) });
      expect(res.body.message).toMatch(message);
    }
    // The PostgREST dialect answers as PostgREST does: 42883 at 404 (docs/postgrest-dialect.md), never a 500.
    for (const query of ['select=ref.sum()', 'select=ref.avg()', 'select=price.avg()', 'select=doc.max()', 'select=spot.min()']) {
      const res = await pg(`/rest/v1/things?${query}`);
      expect({ query, status: res.status, code: res.body.code }).toEqual({ query, status: 404, code: '42883' });
    }
    // What the types do have still answers, for the caller's own rows only.
    const sum = await get('/api/things/aggregate?fn=sum&column=price');
    expect({ status: sum.status, value: sum.body.data?.value }).toEqual({ status: 200, value: '$6.00' });
    const pgSum = await pg('/rest/v1/things?select=price.sum()');
    expect({ status: pgSum.status, body: pgSum.body }).toEqual({ status: 200, body: [{ sum: '$6.00' }] });
  });
});
