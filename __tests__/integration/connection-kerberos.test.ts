/**
 * GSSAPI / Kerberos against a real MIT KDC and a PostgreSQL built with GSSAPI (docs/security.md,
 * "Kerberos / GSSAPI"): gss_provider=linux_krb5 and callback connect (pg_stat_gssapi shows the
 * principal), the preflight explains a missing credential cache, and a stopped KDC gives retries,
 * then an open circuit with fast 503s, and recovery closes it (all counted on /metrics).
 */
import fs from 'node:fs';
import express from 'express';
import request from 'supertest';
import { createGateway, GatewayConfigError, type Gateway, type GatewayOptions } from '../../lib';
import { debianGssBinDir, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { missingKerberosTools, REALM, setNativeEnv, startKerberosRealm, type KerberosRealm } from '../support/kerberos-realm';
import { signToken, TENANT_A, TEST_JWT_SECRET } from '../support/test-database';
import { startGssResetProxy } from '../support/wire-proxies';
import { describeIfPresent, SETUP_KERBEROS, SETUP_SYSTEM } from '../support/skips';

interface KerberosModule {
  initializeClient(service: string, options: { mechOID?: number }): Promise<{ step(challenge: string): Promise<string | null> }>;
  GSS_MECH_OID_KRB5: number;
}
let kerberos: KerberosModule | undefined;
let kerberosError = '';
try {
  kerberos = require('kerberos') as KerberosModule;
} catch (err) {
  kerberosError = (err as Error).message.split('\n')[0]!;
}
const binDir = debianGssBinDir();
const systemMissing = [
  process.platform === 'linux' ? '' : 'Linux',
  ...missingKerberosTools().map((t) => `${t} (Debian krb5-kdc, krb5-admin-server, krb5-user)`),
  binDir === undefined ? 'a PostgreSQL server built with GSSAPI (Debian postgresql-15)' : '',
  fs.existsSync('/usr/include/gssapi/gssapi.h') || kerberos !== undefined ? '' : 'the gssapi headers (Debian libkrb5-dev)',
].filter(Boolean);
const missing = [...systemMissing, kerberos === undefined ? `the optional kerberos addon (${kerberosError})` : ''];
// Only the addon missing: building it is enough; anything else: the system packages first.
const run = describeIfPresent('connection-kerberos.test.ts (GSSAPI with a real KDC)', missing, systemMissing.length === 0 ? SETUP_KERBEROS : SETUP_SYSTEM);

const CLIENT = 'tablegate_krb';
let realm: KerberosRealm;
let server: PrivatePostgres;
const gateways: Gateway[] = [];
const savedEnv = { KRB5_CONFIG: process.env['KRB5_CONFIG'], KRB5CCNAME: process.env['KRB5CCNAME'], KRB5_CLIENT_KTNAME: process.env['KRB5_CLIENT_KTNAME'] };
const token = signToken({ tenant_id: TENANT_A });

run('GSSAPI with a real KDC', () => {
  beforeAll(async () => {
    realm = await startKerberosRealm({ service: 'postgres/localhost', client: CLIENT });
    server = await startPrivatePostgres({
      binDir: binDir!,
      settings: { krb_server_keyfile: "'server.keytab'" },
      files: { 'server.keytab': realm.serverKeytab },
      env: { KRB5_CONFIG: realm.krb5Config },
      hba: [`host all ${CLIENT} samehost gss include_realm=0 krb_realm=${REALM}`],
      setupSql: `
        CREATE ROLE ${CLIENT} LOGIN;
        CREATE SCHEMA conn_test;
        CREATE TABLE conn_test.items (id int PRIMARY KEY, tenant_id uuid NOT NULL);
        ALTER TABLE conn_test.items ENABLE ROW LEVEL SECURITY;
        ALTER TABLE conn_test.items FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant ON conn_test.items USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
        INSERT INTO conn_test.items VALUES (1, '${TENANT_A}');
        GRANT USAGE ON SCHEMA conn_test TO ${CLIENT};
        GRANT SELECT ON conn_test.items TO ${CLIENT};`,
    });
    // The native library reads these from the process environment on every GSS call.
    setNativeEnv('KRB5_CONFIG', realm.krb5Config);
    setNativeEnv('KRB5CCNAME', `FILE:${realm.freshCcache()}`);
    setNativeEnv('KRB5_CLIENT_KTNAME', undefined);
  });

  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((g) => g.close()));
  });

  afterAll(async () => {
    for (const [k, v] of Object.entries(savedEnv)) setNativeEnv(k, v);
    await server?.stop();
    await realm?.remove();
  });

  function gateway(query: string, options: { host?: string; port?: number } & Partial<GatewayOptions> = {}): Gateway {
    const { host = 'localhost', port = server.port, ...rest } = options;
    const g = createGateway({ databaseUrl: `postgres://${CLIENT}@${host}:${port}/postgres?sslmode=disable&${query}`, jwtSecret: TEST_JWT_SECRET, schemas: ['conn_test'], ...rest });
    gateways.push(g);
    return g;
  }

  async function gssView() {
    const { rows } = await server.query<{ gss_authenticated: boolean; principal: string }>(
      'SELECT g.gss_authenticated, g.principal FROM pg_stat_gssapi g JOIN pg_stat_activity a USING (pid) WHERE a.usename = $1',
      [CLIENT],
    );
    return rows;
  }

  it('gss_provider=linux_krb5 authenticates with the credential cache; the server sees the principal', async () => {
    const mark = server.logMark();
    const g = gateway('gss_provider=linux_krb5');
    await g.ready;
    const view = await gssView();
    expect(view.length).toBeGreaterThan(0);
    expect(view.every((v) => v.gss_authenticated && v.principal === `${CLIENT}@${REALM}`)).toBe(true);
    expect(server.logSince(mark)).toMatch(new RegExp(`connection authenticated: identity="${CLIENT}@${REALM}" method=gss`));
    const res = await request(express().use('/api', g)).get('/api/items').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ id: 1, tenant_id: TENANT_A }]);
  });

  it('gss_provider=callback takes the tokens from the host function, for gss_target', async () => {
    const targets: string[] = [];
    const gss = {
      provider: 'callback' as const,
      token: async (target: string, challenge: Uint8Array | undefined, state: Record<string, unknown>) => {
        targets.push(target);
        state['client'] ??= await kerberos!.initializeClient(target, { mechOID: kerberos!.GSS_MECH_OID_KRB5 });
        const client = state['client'] as Awaited<ReturnType<KerberosModule['initializeClient']>>;
        const response = await client.step(challenge === undefined ? '' : Buffer.from(challenge).toString('base64'));
        return response ? Buffer.from(response, 'base64') : undefined;
      },
    };
    // The URL's host is an address; gss_target names the service principal's host.
    const g = gateway('gss_target=postgres@localhost', { host: '127.0.0.1', gss });
    await g.ready;
    expect(targets.length).toBeGreaterThan(0);
    expect(new Set(targets)).toEqual(new Set(['postgres@localhost']));
    expect((await gssView()).every((v) => v.principal === `${CLIENT}@${REALM}`)).toBe(true);
  });

  it('gss_provider=custom makes one context per connection from the host factory', async () => {
    const made: string[] = [];
    const gss = {
      provider: 'custom' as const,
      createContext: async (target: string, mechanism: 'gssapi' | 'sspi') => {
        made.push(`${mechanism}:${target}`);
        const client = await kerberos!.initializeClient(target, { mechOID: kerberos!.GSS_MECH_OID_KRB5 });
        return {
          step: async (challenge: Uint8Array | undefined) => {
            const response = await client.step(challenge === undefined ? '' : Buffer.from(challenge).toString('base64'));
            return response ? Buffer.from(response, 'base64') : undefined;
          },
        };
      },
    };
    const g = gateway('gss_provider=custom&gss_service=postgres', { gss });
    await g.ready;
    expect(made.length).toBeGreaterThan(0);
    expect(new Set(made)).toEqual(new Set(['gssapi:postgres@localhost']));
    expect((await gssView()).every((v) => v.gss_authenticated && v.principal === `${CLIENT}@${REALM}`)).toBe(true);
  });

  it('refuses GSS when the policy forbids it, or when no provider is configured', async () => {
    await expect(gateway('gss_provider=linux_krb5&auth_gssapi=false').ready).rejects.toThrow(/GSSAPI authentication \(pg_hba\.conf method gss\), which auth_gssapi=false forbids/);
    await expect(gateway('auth_mode=scram_only').ready).rejects.toThrow(/which auth_mode=scram_only does not allow \(set auth_gssapi=true/);
    await expect(gateway('').ready).rejects.toThrow(/asked for GSSAPI authentication, but no GSS provider is configured: set gss_provider=linux_krb5/);
  });

  it('the linux_krb5 preflight names a missing credential cache and the fix, at createGateway', () => {
    const cache = process.env['KRB5CCNAME'];
    setNativeEnv('KRB5CCNAME', `FILE:${realm.dir}/no-such-ccache`);
    try {
      expect(() => gateway('gss_provider=linux_krb5')).toThrow(GatewayConfigError);
      expect(() => gateway('gss_provider=linux_krb5')).toThrow(/KRB5CCNAME names FILE:.*no-such-ccache, which does not exist.*kinit -k -t <keytab> <principal>/);
    } finally {
      setNativeEnv('KRB5CCNAME', cache);
    }
  });

  it('a stopped KDC: retries, then an open circuit with fast 503s and Retry-After; recovery closes it', async () => {
    // No LISTEN connection: terminating the backends below would make it reconnect, and its
    // attempts would count beside the requests' (schema reload is tested in schema-reload.test.ts).
    const g = gateway('gss_provider=linux_krb5&gss_retry_base_ms=40&gss_circuit_threshold=2&gss_circuit_cooldown_ms=1500', { reloadListen: false });
    await g.ready;
    const app = express().use('/api', g).use(g.admin);
    const metrics = async () => {
      const text = (await request(app).get('/metrics')).text;
      const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
      return { retries: value('tablegate_gss_retries_total'), failures: value('tablegate_gss_failures_total'), openings: value('tablegate_gss_circuit_openings_total'), open: value('tablegate_gss_circuit_open') };
    };
    expect(await metrics()).toEqual({ retries: 0, failures: 0, openings: 0, open: 0 });

    // New connections now need a service ticket (a cache with only the TGT) from a KDC that is gone.
    setNativeEnv('KRB5CCNAME', `FILE:${realm.freshCcache()}`);
    await realm.stopKdc();
    await server.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [CLIENT]);
    await new Promise((r) => setTimeout(r, 300)); // the pool drops its terminated idle connections

    const first = await request(app).get('/api/items').set('Authorization', `Bearer ${token}`);
    expect(first.status).toBe(503);
    expect(first.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(await metrics()).toEqual({ retries: 2, failures: 1, openings: 0, open: 0 });

    const second = await request(app).get('/api/items').set('Authorization', `Bearer ${token}`);
    expect(second.status).toBe(503);
    expect(await metrics()).toEqual({ retries: 4, failures: 2, openings: 1, open: 1 });

    const started = Date.now();
    const fast = await request(app).get('/api/items').set('Authorization', `Bearer ${token}`);
    expect(Date.now() - started).toBeLessThan(100); // no connection attempt, no retry delays
    expect(fast.status).toBe(503);
    expect(fast.body.message).toMatch(/GSSAPI connections keep failing/);
    expect(Number(fast.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(fast.headers['retry-after'])).toBeLessThanOrEqual(2);
    expect(await metrics()).toEqual({ retries: 4, failures: 2, openings: 1, open: 1 });

    await realm.startKdc();
    await new Promise((r) => setTimeout(r, 1600)); // the cooldown
    const recovered = await request(app).get('/api/items').set('Authorization', `Bearer ${token}`);
    expect(recovered.status).toBe(200);
    expect(await metrics()).toEqual({ retries: 4, failures: 2, openings: 1, open: 0 });
  });

  it('GSS handshakes reset mid-way after the server terminated the connections: the new connection succeeds on its third attempt, with the backoff', async () => {
    const proxy = await startGssResetProxy(server.port);
    try {
      const g = gateway('gss_provider=linux_krb5&gss_connect_retries=2&gss_retry_base_ms=150', { port: proxy.port, reloadListen: false });
      await g.ready;
      const app = express().use('/api', g).use(g.admin);
      const metrics = async () => {
        const text = (await request(app).get('/metrics')).text;
        const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
        return { retries: value('tablegate_gss_retries_total'), failures: value('tablegate_gss_failures_total') };
      };
      const items = () => request(app).get('/api/items').set('Authorization', `Bearer ${token}`);
      expect((await items()).status).toBe(200);
      expect(await metrics()).toEqual({ retries: 0, failures: 0 });

      // Twice, so the second round is a connection that replaces a replacement.
      for (const round of [1, 2]) {
        await server.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [CLIENT]);
        await new Promise((r) => setTimeout(r, 300)); // the pool drops its terminated idle connections
        proxy.resetNext(2);
        const resetsBefore = proxy.resets();
        const started = Date.now();
        const res = await items();
        const elapsed = Date.now() - started;
        expect({ round, status: res.status, body: res.body.data }).toEqual({ round, status: 200, body: [{ id: 1, tenant_id: TENANT_A }] });
        expect(proxy.resets() - resetsBefore).toBe(2);
        // Two retries after gss_retry_base_ms x 2^attempt: at least 150 + 300 ms.
        expect(elapsed).toBeGreaterThanOrEqual(450);
        expect(await metrics()).toEqual({ retries: 2 * round, failures: 0 });
      }
      const view = await gssView();
      expect(view.length).toBeGreaterThan(0);
      expect(view.every((v) => v.gss_authenticated && v.principal === `${CLIENT}@${REALM}`)).toBe(true);

      // A third reset is one more than gss_connect_retries=2 allows: the request fails, counted once.
      await server.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [CLIENT]);
      await new Promise((r) => setTimeout(r, 300));
      proxy.resetNext(3);
      const failed = await items();
      expect(failed.status).toBe(503);
      expect(await metrics()).toEqual({ retries: 6, failures: 1 });
    } finally {
      await proxy.close();
    }
  });
});
