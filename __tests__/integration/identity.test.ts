/**
 * Identity hardening over HTTP against real PostgreSQL: every JWT rule (algorithms and keys, PEM
 * and JWKS with rotation, registered claims, size, cookie), the claim mapping, and the dev-mode
 * matrix. What a token makes the database see is read back through the `session_context` view
 * (fixture 090), which shows the transaction-local `app.*` settings the gateway set, and through
 * `orders`, whose RLS policy scopes rows to `app.current_tenant_id`.
 *
 * Tokens are signed independently of the verifier (jose): HS/RS/ES with jsonwebtoken, EdDSA with
 * node:crypto directly.
 */
import { createHmac, generateKeyPairSync, randomUUID, sign as cryptoSign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import express from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createGateway, type GatewayOptions } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { gatewayFactory } from '../support/gateway-app';
import { useTempFiles } from '../unit/support/temp-files';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await apps.closeAll();
  await db?.drop();
});

const apps = gatewayFactory(() => ({ databaseUrl: db.appUrl }));
const appWith = apps.appWith;

const context = (app: express.Express, token?: string) => {
  const req = request(app).get('/api/session_context');
  return token === undefined ? req : req.set('Authorization', `Bearer ${token}`);
};

/** 401, the RFC 6750 challenge, and a body that says nothing about which check failed. */
function expectInvalidToken(res: request.Response): void {
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  expect(res.body).toEqual({ code: 'UNAUTHORIZED', message: 'The bearer token is invalid or expired.' });
}

/** An HS256 JWS of exactly this payload (jsonwebtoken rewrites or drops `iat`). */
function signExact(payload: object, secret: string = TEST_JWT_SECRET): string {
  const input = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** A JWS signed with node:crypto (jsonwebtoken 9 cannot sign EdDSA). */
function signEdDsa(payload: object, key: KeyObject, kid?: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', ...(kid ? { kid } : {}) })).toString('base64url');
  const body = Buffer.from(JSON.stringify({ iat: now(), ...payload })).toString('base64url');
  return `${header}.${body}.${cryptoSign(null, Buffer.from(`${header}.${body}`), key).toString('base64url')}`;
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');
const keyFiles = useTempFiles('identity-keys-');
const pemFile = (name: string, key: KeyObject): string => keyFiles.write(name, key.export({ type: 'spki', format: 'pem' }).toString());

describe('JWT: shared secret', () => {
  it('refuses a secret shorter than 32 bytes when the gateway is created, without echoing it', () => {
    const short = 'only-31-bytes-long-secret-xxxxx';
    expect(Buffer.byteLength(short)).toBe(31);
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: short })).toThrow(/at least 32/);
    try {
      createGateway({ databaseUrl: db.appUrl, jwtSecret: short });
    } catch (err) {
      expect(String((err as Error).message)).not.toContain(short);
    }
    // 32 bytes of multi-byte UTF-8 text is enough: the rule counts bytes.
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtSecret: 'é'.repeat(16) }).close()).not.toThrow();
  });

  it.each(['HS256', 'HS384', 'HS512'] as const)('verifies %s when listed in jwt_algorithms, and only then', async (algorithm) => {
    const app = await appWith({ jwtSecret: TEST_JWT_SECRET, jwtAlgorithms: [algorithm] });
    const res = await context(app, signToken({ tenant_id: TENANT_A, user_id: 'u1' }, TEST_JWT_SECRET, { algorithm }));
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toMatchObject({ tenant_id: TENANT_A, user_id: 'u1' });
    const other = algorithm === 'HS256' ? 'HS512' : 'HS256';
    expectInvalidToken(await context(app, signToken({ tenant_id: TENANT_A }, TEST_JWT_SECRET, { algorithm: other })));
  });

  it('rejects alg none, another secret, a malformed token and a token over 8 KiB with the same 401', async () => {
    const app = await appWith({ jwtSecret: TEST_JWT_SECRET });
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ tenant_id: TENANT_A })).toString('base64url')}.`;
    const huge = signToken({ tenant_id: TENANT_A, pad: 'x'.repeat(8200) });
    const crit = jwt.sign({ tenant_id: TENANT_A }, TEST_JWT_SECRET, { algorithm: 'HS256', header: { alg: 'HS256', crit: ['x-unknown'], 'x-unknown': 1 } as never });
    for (const token of [none, signToken({ tenant_id: TENANT_A }, 'another-secret-that-is-long-enough-1234'), 'not.a.jwt', 'abc', huge, crit]) {
      expectInvalidToken(await context(app, token));
    }
  });

  it('checks exp, nbf and iat with jwt_clock_skew_s', async () => {
    const app = await appWith({ jwtSecret: TEST_JWT_SECRET, jwtClockSkewS: 60 });
    const ok = (claims: object) => context(app, signExact({ tenant_id: TENANT_A, ...claims }));
    expect((await ok({})).status).toBe(200); // no iat at all is fine
    expect((await ok({ exp: now() - 30 })).status).toBe(200); // expired, within the skew
    expectInvalidToken(await ok({ exp: now() - 120 }));
    expect((await ok({ nbf: now() + 30 })).status).toBe(200);
    expectInvalidToken(await ok({ nbf: now() + 120 }));
    expect((await ok({ iat: now() + 30 })).status).toBe(200);
    expectInvalidToken(await ok({ iat: now() + 120 })); // issued in the future
    expectInvalidToken(await ok({ iat: 'yesterday' }));
  });

  it('checks aud (any of the configured values) and iss when configured', async () => {
    const app = await appWith({ jwtSecret: TEST_JWT_SECRET, jwtAudience: ['api', 'admin-api'], jwtIssuer: 'https://issuer.test/' });
    const token = (claims: object) => signToken({ tenant_id: TENANT_A, ...claims });
    expect((await context(app, token({ aud: 'admin-api', iss: 'https://issuer.test/' }))).status).toBe(200);
    expect((await context(app, token({ aud: ['other', 'api'], iss: 'https://issuer.test/' }))).status).toBe(200);
    expectInvalidToken(await context(app, token({ aud: 'other', iss: 'https://issuer.test/' })));
    expectInvalidToken(await context(app, token({ iss: 'https://issuer.test/' })));
    expectInvalidToken(await context(app, token({ aud: 'api', iss: 'https://evil.test/' })));
    expectInvalidToken(await context(app, token({ aud: 'api' })));
  });
});

describe('JWT: PEM public keys (jwt_public_key_path)', () => {
  const cases = [
    ['RS256', rsa, (claims: object) => jwt.sign(claims, rsa.privateKey, { algorithm: 'RS256' })],
    ['ES256', ec, (claims: object) => jwt.sign(claims, ec.privateKey, { algorithm: 'ES256' })],
    ['EdDSA', ed, (claims: object) => signEdDsa(claims, ed.privateKey)],
  ] as const;

  it.each(cases)('verifies %s tokens and rejects forgeries', async (alg, pair, signWith) => {
    const app = await appWith({ jwtPublicKeyPath: pemFile(`${alg}.pem`, pair.publicKey), jwtAlgorithms: [alg] });
    const res = await context(app, signWith({ tenant_id: TENANT_B, user_id: `${alg}-user` }));
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toMatchObject({ tenant_id: TENANT_B, user_id: `${alg}-user` });
    // Signed by another key of the same type.
    const otherPair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
    const forged = alg === 'EdDSA' ? signEdDsa({ tenant_id: TENANT_B }, otherPair.privateKey) : jwt.sign({ tenant_id: TENANT_B }, otherPair.privateKey, { algorithm: alg });
    expectInvalidToken(await context(app, forged));
    // HS/RS confusion: an HS256 token whose "secret" is the public key PEM.
    const pem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const confused = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ tenant_id: TENANT_B })).toString('base64url')}`;
    expectInvalidToken(await context(app, `${confused}.${createHmac('sha256', pem).update(confused).digest('base64url')}`));
  });

  it('refuses a key that does not fit the listed algorithm when the gateway is created', () => {
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtPublicKeyPath: pemFile('ed-for-rs.pem', ed.publicKey), jwtAlgorithms: ['RS256'] })).toThrow(/ed25519/);
    expect(() => createGateway({ databaseUrl: db.appUrl, jwtPublicKeyPath: pemFile('rs-for-ed.pem', rsa.publicKey), jwtAlgorithms: ['EdDSA'] })).toThrow(/rsa/);
  });
});

/** A local JWKS endpoint whose keys, availability and fetch count the test controls. */
interface JwksServer {
  readonly url: string;
  keys: object[];
  mode: 'ok' | 'error' | 'hang';
  fetches: number;
  close(): Promise<void>;
}

async function startJwksServer(keys: object[]): Promise<JwksServer> {
  const hanging: http.ServerResponse[] = [];
  const state = { keys, mode: 'ok' as JwksServer['mode'], fetches: 0 };
  const server = http.createServer((req, res) => {
    state.fetches++;
    if (state.mode === 'hang') return void hanging.push(res);
    if (state.mode === 'error') return void res.writeHead(500).end('down');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

const jwk = (key: KeyObject, kid: string, alg: string) => ({ ...key.export({ format: 'jwk' }), kid, alg, use: 'sig' });

describe('JWT: JWKS (jwks_url)', () => {
  let jwks: JwksServer;
  const rsa2 = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rs = (kid: string, key: KeyObject = rsa.privateKey, claims: object = { tenant_id: TENANT_A }) => jwt.sign(claims, key, { algorithm: 'RS256', keyid: kid });

  beforeEach(async () => {
    jwks = await startJwksServer([jwk(rsa.publicKey, 'rsa-1', 'RS256'), jwk(ec.publicKey, 'ec-1', 'ES256'), jwk(ed.publicKey, 'ed-1', 'EdDSA')]);
  });
  afterEach(() => jwks.close());

  const jwksApp = (options: Partial<GatewayOptions> = {}) => appWith({ jwksUrl: jwks.url, jwtAlgorithms: ['RS256', 'ES256', 'EdDSA'], ...options });

  it('verifies RS256, ES256 and EdDSA tokens by kid, fetching the set once', async () => {
    const app = await jwksApp();
    expect(jwks.fetches).toBe(0); // fetched on first use
    const tokens = [rs('rsa-1'), jwt.sign({ tenant_id: TENANT_A }, ec.privateKey, { algorithm: 'ES256', keyid: 'ec-1' }), signEdDsa({ tenant_id: TENANT_A }, ed.privateKey, 'ed-1')];
    for (const token of tokens) {
      const res = await context(app, token);
      expect(res.status).toBe(200);
      expect(res.body.data[0].tenant_id).toBe(TENANT_A);
    }
    expect(jwks.fetches).toBe(1);
    // A kid of the set with a signature of another key.
    expectInvalidToken(await context(app, rs('rsa-1', rsa2.privateKey)));
    // An HS256 token naming a JWKS kid (HS/RS confusion through the key set).
    expectInvalidToken(await context(app, jwt.sign({ tenant_id: TENANT_A }, 'x'.repeat(40), { algorithm: 'HS256', keyid: 'rsa-1' })));
  });

  it('follows a key rotation: an unknown kid triggers one refetch', async () => {
    const app = await jwksApp({ jwksCooldownS: 0 });
    expect((await context(app, rs('rsa-1'))).status).toBe(200);
    jwks.keys = [jwk(rsa2.publicKey, 'rsa-2', 'RS256')]; // the issuer rotates
    const res = await context(app, rs('rsa-2', rsa2.privateKey));
    expect(res.status).toBe(200);
    expect(jwks.fetches).toBe(2);
    // The retired key is gone from the refreshed set.
    expectInvalidToken(await context(app, rs('rsa-1')));
  });

  it('rate-limits refetches caused by unknown kids (jwks_cooldown_s)', async () => {
    const app = await jwksApp({ jwksCooldownS: 30 });
    expect((await context(app, rs('rsa-1'))).status).toBe(200);
    for (let i = 0; i < 20; i++) expectInvalidToken(await context(app, rs(`made-up-${randomUUID()}`)));
    expect(jwks.fetches).toBe(1); // still within the cooldown of the first fetch
  });

  it('refreshes the set after jwks_cache_s', async () => {
    const app = await jwksApp({ jwksCacheS: 1, jwksCooldownS: 30 });
    expect((await context(app, rs('rsa-1'))).status).toBe(200);
    jwks.keys = [jwk(rsa2.publicKey, 'rsa-2', 'RS256')];
    expect((await context(app, rs('rsa-1'))).status).toBe(200); // cached
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expectInvalidToken(await context(app, rs('rsa-1'))); // refetched: rsa-1 was retired
    expect((await context(app, rs('rsa-2', rsa2.privateKey))).status).toBe(200);
    expect(jwks.fetches).toBe(2);
  });

  it('fails closed with 503 when the keys cannot be fetched (error, timeout), never accepting the token', async () => {
    jwks.mode = 'error';
    const app = await jwksApp({ jwksCooldownS: 0, jwksTimeoutMs: 300 });
    const down = await context(app, rs('rsa-1'));
    expect(down.status).toBe(503);
    expect(down.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(down.headers['retry-after']).toBe('0');
    jwks.mode = 'hang';
    const started = Date.now();
    expect((await context(app, rs('rsa-1'))).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(5000);
    jwks.mode = 'ok';
    expect((await context(app, rs('rsa-1'))).status).toBe(200); // recovers
  });

  it('refuses a plain-http jwks_url on a non-loopback host, and a public key file together with jwks_url', () => {
    expect(() => createGateway({ databaseUrl: db.appUrl, jwksUrl: 'http://issuer.example/jwks.json', jwtAlgorithms: ['RS256'] })).toThrow(/https/);
    expect(() => createGateway({ databaseUrl: db.appUrl, jwksUrl: jwks.url, jwtPublicKeyPath: pemFile('both.pem', rsa.publicKey), jwtAlgorithms: ['RS256'] })).toThrow(/both/);
  });
});

describe('JWT from a cookie (jwt_cookie)', () => {
  it('reads the token from the cookie, with the same checks; a Bearer header wins', async () => {
    const app = await appWith({ jwtSecret: TEST_JWT_SECRET, jwtCookie: 'access_token' });
    const cookie = (token: string) => request(app).get('/api/session_context').set('Cookie', `theme=dark; access_token=${token}`);
    const a = await cookie(signToken({ tenant_id: TENANT_A }));
    expect(a.status).toBe(200);
    expect(a.body.data[0].tenant_id).toBe(TENANT_A);
    expectInvalidToken(await cookie(signToken({ tenant_id: TENANT_A, exp: now() - 3600 })));
    expectInvalidToken(await cookie(signToken({ tenant_id: TENANT_A }, 'another-secret-that-is-long-enough-1234')));
    const both = await cookie(signToken({ tenant_id: TENANT_A })).set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_B })}`);
    expect(both.body.data[0].tenant_id).toBe(TENANT_B);
  });
});

describe('claims', () => {
  it('maps numbers to decimal text, user_id to sub when absent, and never operator_id to the tenant', async () => {
    const app = await appWith({ jwtSecret: TEST_JWT_SECRET });
    const numeric = await context(app, signToken({ tenant_id: 4242, user_id: 17, agent_id: 'bot-1' }));
    expect(numeric.body.data[0]).toMatchObject({ tenant_id: '4242', user_id: '17', agent_id: 'bot-1' });
    const sub = await context(app, signToken({ tenant_id: TENANT_A, sub: 'subject-1' }));
    expect(sub.body.data[0].user_id).toBe('subject-1');
    const operator = await context(app, signToken({ operator_id: TENANT_B }));
    expect(operator.body.data[0].tenant_id).toBe('');
    const orders = await request(app).get('/api/orders').set('Authorization', `Bearer ${signToken({ operator_id: TENANT_B })}`);
    expect(orders.body.data).toEqual([]);
    // A signed token with a claim of the wrong type: 401 with the challenge; the message names
    // the claim (only the holder of a validly signed token learns it).
    const wrongType = await context(app, signToken({ tenant_id: { id: TENANT_A } }));
    expect(wrongType.status).toBe(401);
    expect(wrongType.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('require_tenant: a token without tenant_id is 401', async () => {
    const app = await appWith({ jwtSecret: TEST_JWT_SECRET, requireTenant: true });
    const res = await context(app, signToken({ user_id: 'no-tenant' }));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect((await context(app, signToken({ tenant_id: TENANT_A }))).status).toBe(200);
  });

  it('exposes the typed identity, scopes from scope / scopes / permissions, to replacement stages and host middleware', async () => {
    const seen: unknown[] = [];
    const gateway = createGateway({
      databaseUrl: db.appUrl,
      jwtSecret: TEST_JWT_SECRET,
      stages: { parse: (ctx, next) => (seen.push(ctx.identity), next(ctx)) },
    });
    apps.track(gateway);
    await gateway.ready;
    const hostSaw: unknown[] = [];
    const app = express()
      .use((req, res, next) => (res.on('finish', () => hostSaw.push(res.locals['gateway']?.identity)), next()))
      .use('/api', gateway);
    const token = signToken({ tenant_id: TENANT_A, user_id: 'u', role: 'editor', scope: 'orders:read orders:write', scopes: ['a'], permissions: ['orders:read', 'b'], plan: 'pro' });
    expect((await context(app, token)).status).toBe(200);
    const expected = { tenantId: TENANT_A, userId: 'u', role: 'editor', agentId: '', scopes: ['orders:read', 'orders:write', 'a', 'b'], source: 'jwt' };
    expect(seen[0]).toMatchObject({ ...expected, claims: expect.objectContaining({ plan: 'pro' }) });
    expect(hostSaw[0]).toEqual(seen[0]);
    expect(Object.isFrozen(seen[0])).toBe(true);
  });
});

/** An address of this machine that is not loopback, so a request to it arrives from a non-loopback peer. */
function externalAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
}

describe('dev mode matrix', () => {
  const devHeaders = { 'x-tenant-id': TENANT_A, 'x-user-id': 'dev-user', 'x-user-role': 'admin' };

  it('refuses to create a dev-mode gateway without JWT_SECRET', () => {
    expect(() => createGateway({ databaseUrl: db.appUrl, devMode: true })).toThrow(/JWT_SECRET/);
  });

  it('honours dev headers only when GW_DEV_MODE is on, on loopback, and without any token', async () => {
    const dev = await appWith({ jwtSecret: TEST_JWT_SECRET, devMode: true });
    const ok = await request(dev).get('/api/session_context').set(devHeaders);
    expect(ok.body.data[0]).toMatchObject({ tenant_id: TENANT_A, user_id: 'dev-user' });
    // A valid Bearer token wins; an invalid one is a 401, never a fallback to the headers.
    const bearer = await request(dev).get('/api/session_context').set(devHeaders).set('Authorization', `Bearer ${signToken({ tenant_id: TENANT_B })}`);
    expect(bearer.body.data[0].tenant_id).toBe(TENANT_B);
    expectInvalidToken(await request(dev).get('/api/session_context').set(devHeaders).set('Authorization', 'Bearer forged.token.value'));
    // Off: the headers are no credentials at all.
    const prod = await appWith({ jwtSecret: TEST_JWT_SECRET, devMode: false });
    expect((await request(prod).get('/api/session_context').set(devHeaders)).status).toBe(401);
  });

  // Runs on every machine, also one with no interface but loopback (where the real-peer test
  // below cannot run): a host middleware makes the connection's peer a public address, as a
  // reverse proxy on another host would be. X-Forwarded-For naming loopback must not help.
  it('ignores dev headers when the connection peer is not loopback, whatever X-Forwarded-For says', async () => {
    const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, devMode: true });
    apps.track(gateway);
    await gateway.ready;
    const peers: Record<string, string> = { '/remote': '203.0.113.9', '/mapped': '::ffff:198.51.100.7', '/v6': '2001:db8::1', '/local': '127.0.0.1' };
    const app = express()
      .use((req, _res, next) => {
        const peer = Object.keys(peers).find((prefix) => req.url.startsWith(prefix));
        if (peer) {
          Object.defineProperty(req.socket, 'remoteAddress', { value: peers[peer], configurable: true });
          req.url = req.url.slice(peer.length);
        }
        next();
      })
      .use('/api', gateway);
    for (const prefix of ['/remote', '/mapped', '/v6']) {
      const res = await request(app).get(`${prefix}/api/session_context`).set(devHeaders).set('X-Forwarded-For', '127.0.0.1');
      expect(res.status).toBe(401);
    }
    const local = await request(app).get('/local/api/session_context').set(devHeaders);
    expect(local.body.data[0].tenant_id).toBe(TENANT_A);
  });

  const external = externalAddress();
  (external ? it : it.skip)(`ignores dev headers from a non-loopback peer (connecting to ${external ?? 'no external address'})`, async () => {
    const dev = await appWith({ jwtSecret: TEST_JWT_SECRET, devMode: true });
    const server = dev.listen(0, '0.0.0.0');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://${external}:${port}/api/session_context`, { headers: devHeaders });
      expect(res.status).toBe(401);
      const loop = await fetch(`http://127.0.0.1:${port}/api/session_context`, { headers: devHeaders });
      expect(((await loop.json()) as { data: { tenant_id: string }[] }).data[0]!.tenant_id).toBe(TENANT_A);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
