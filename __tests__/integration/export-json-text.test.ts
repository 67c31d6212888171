/**
 * A JSON or NDJSON export builds each row's object in the gateway from its columns' text
 * (lib/stages/compile/compile-export.ts, lib/doors/rest/respond/write-export.ts): this is the differential test
 * that keeps it byte for byte PostgreSQL's `to_json` of the row, so that an export renders a row
 * exactly as a page does (docs/querying.md, "Exports"). Over HTTP, as the RLS-bound app role:
 *   - a table of its own (schema `json_text`, created in this file's clone of the template) with a
 *     column of every type the gateway renders itself (int2/4/8, float4/8, numeric, bool, text,
 *     varchar, bpchar, name, uuid, json, jsonb, and a column whose name needs escaping), NULLs,
 *     NaN and the infinities, extreme numbers, and strings with every awkward character
 *     (quotes, backslashes, U+0001-U+001F, U+007F, U+2028, U+2029, non-BMP);
 *   - every column of kinds.gadgets (__tests__/fixtures/050-kinds.sql: enums, domains, arrays,
 *     ranges, composites, numeric NaN/Infinity, money, bytea, interval, tsvector...), which
 *     PostgreSQL renders per column.
 * The reference is `SELECT to_json(_p.*)::text FROM (SELECT * ... ORDER BY id) AS _p` run by the
 * test as the same role with the same tenant.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { describeFrom } from '../support/server-version';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });

let db: TestDatabase;
let gateway: Gateway;
let server: http.Server;
let app: express.Express;
let port: number;

/** Every character below U+0020 but NUL (PostgreSQL text cannot hold it), then the other awkward ones. */
const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
const awkward = [
  `${controls}"\\/\u007f\u0080\u2028\u2029\ufeff😀é`,
  'say "hi" \\ back\\slash \\u0041 \\n',
  '',
  ' padded ',
  '{"not":"json"}',
  '😀😀',
];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.admin.query(`
    CREATE SCHEMA json_text;
    GRANT USAGE ON SCHEMA json_text TO tablegate_app;
    CREATE TABLE json_text.samples (
      id integer PRIMARY KEY,
      tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
      i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, n numeric, n2 numeric(12,2), b boolean,
      t text, vc varchar(60), bc character(6), nm name, u uuid, j json, jb jsonb,
      "say ""hi"" \\ é" text
    );
    ALTER TABLE json_text.samples ENABLE ROW LEVEL SECURITY;
    ALTER TABLE json_text.samples FORCE ROW LEVEL SECURITY;
    CREATE POLICY tenant_isolation ON json_text.samples
      USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid)
      WITH CHECK (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
    GRANT SELECT ON json_text.samples TO tablegate_app;
    INSERT INTO json_text.samples (id, tenant_id) VALUES (1, '${TENANT_A}'), (99, '${TENANT_B}');
    INSERT INTO json_text.samples VALUES
      (2, '${TENANT_A}', -32768, -2147483648, -9223372036854775808, '-0', '-0', '-0.000', 0, true, 'x', 'y', 'ab', 'nm', '${TENANT_A}',
          '{"a": [1, 2.50, "x\\u0000y"],  "b" : null}', '{"a": [1, 2.50, "x\\u0001y"], "b": null}', 'q'),
      (3, '${TENANT_A}', 32767, 2147483647, 9223372036854775807, 'NaN', 'Infinity', 'Infinity', 1234567890.12, false, NULL, NULL, NULL, NULL, NULL,
          '"just a string"', '12.500', NULL),
      (4, '${TENANT_A}', 0, 0, 0, '-Infinity', '-Infinity', '-Infinity', -0.01, NULL, NULL, NULL, NULL, NULL, NULL, 'null', 'null', NULL),
      (5, '${TENANT_A}', 1, 1, 1, '1.17549435e-38', '1e308', 'NaN', NULL, NULL, NULL, NULL, NULL, NULL, NULL, '[]', '{}', NULL),
      (6, '${TENANT_A}', 2, 2, 2, '3.4028235e+38', '5e-324', '123456789012345678901234567890.123456789012345678901234567890', 0.5, NULL,
          NULL, NULL, NULL, NULL, NULL, '1e2', '1e2', NULL),
      (7, '${TENANT_A}', NULL, NULL, NULL, '0.1', '0.1', '0.1000', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  `);
  // The awkward strings, bound (never written into SQL), in every string column.
  for (const [i, s] of awkward.entries()) {
    await db.admin.query(`INSERT INTO json_text.samples (id, tenant_id, t, vc, bc, nm, "say ""hi"" \\ é", j, jb) VALUES ($1, $2, $3::text, $3::text, $4::text, $5::text, $3::text, to_json($3::text), to_jsonb($3::text))`, [
      10 + i,
      TENANT_A,
      s,
      [...s].slice(0, 6).join(''),
      s.slice(0, 20),
    ]);
  }
  gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['json_text', 'kinds'], maxLimit: 100, maxExportRows: 1000 });
  await gateway.ready;
  app = express().use('/api', gateway);
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await gateway?.close();
  if (server) await new Promise((r) => server.close(r));
  await db?.drop();
});

function rawGet(path: string, accept: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: `/api${path}`, headers: { Accept: accept, Authorization: `Bearer ${tokenA}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
  });
}

/** PostgreSQL's to_json of each visible row, as the app role with tenant A's context. */
async function toJsonRows(table: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: db.appUrl });
  await client.connect();
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(`SELECT set_config('app.current_tenant_id', $1, true)`, [TENANT_A]);
    const { rows } = await client.query<{ r: string }>(`SELECT to_json(_p.*)::text AS r FROM (SELECT * FROM ${table} ORDER BY id) AS _p`);
    await client.query('ROLLBACK');
    return rows.map((r) => r.r);
  } finally {
    await client.end();
  }
}

async function expectSameAsToJson(route: string, table: string, count: number): Promise<void> {
  const expected = await toJsonRows(table);
  expect(expected).toHaveLength(count);
  const ndjson = await rawGet(`/${route}?sort=id`, 'application/x-ndjson');
  expect(ndjson.status).toBe(200);
  expect(ndjson.body).toBe(expected.map((r) => `${r}\n`).join(''));
  const json = await rawGet(`/${route}?sort=id&limit=1000`, 'application/json');
  expect(json.status).toBe(200);
  expect(json.body).toBe(`{"data":[${expected.join(',')}],"count":${count},"limit":1000,"offset":0}`);
  // And a page holds the same rows (json_agg of to_json's rows).
  const page = await request(app).get(`/api/${route}?sort=id`).set('Authorization', `Bearer ${tokenA}`);
  expect(page.status).toBe(200);
  expect((page.body as { data: unknown[] }).data).toEqual(expected.map((r) => JSON.parse(r) as unknown));
}

describe('a JSON or NDJSON export row is byte for byte PostgreSQL to_json of the row', () => {
  it('for the types the gateway renders from their text: numbers, NaN and infinities, booleans, strings with every awkward character, uuid, json, jsonb, an escaped key', async () => {
    await expectSameAsToJson('samples', 'json_text.samples', 7 + awkward.length);
  });

  it('for a selection of columns, with a filter, as a page would select them', async () => {
    const expected = await (async () => {
      const client = new pg.Client({ connectionString: db.appUrl });
      await client.connect();
      try {
        await client.query('BEGIN READ ONLY');
        await client.query(`SELECT set_config('app.current_tenant_id', $1, true)`, [TENANT_A]);
        const { rows } = await client.query<{ r: string }>(`SELECT to_json(_p.*)::text AS r FROM (SELECT nm, f8, id, jb FROM json_text.samples WHERE id >= 3 ORDER BY id DESC) AS _p`);
        await client.query('ROLLBACK');
        return rows.map((r) => r.r);
      } finally {
        await client.end();
      }
    })();
    const res = await rawGet('/samples?select=nm,f8,id,jb&id=gte.3&sort=-id', 'application/x-ndjson');
    expect(res.body).toBe(expected.map((r) => `${r}\n`).join(''));
  });
});

describeFrom(150000, 'schema kinds needs PostgreSQL 15')('every column of kinds.gadgets', () => {
  it('enums, domains, arrays, ranges, composites, NaN/Infinity, money, bytea, interval, tsvector: the same bytes as to_json', async () => {
    const expected = await toJsonRows('kinds.gadgets');
    await expectSameAsToJson('gadgets', 'kinds.gadgets', expected.length);
    expect(expected.length).toBeGreaterThanOrEqual(5);
  });
});
