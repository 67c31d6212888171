import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { createAuthStage } from '../../../lib/stages/auth/create-auth-stage';
import { authenticate, expectInvalidToken, rejection, secret, sign } from './auth-test-helpers';
import { testConfig } from './config-fixture';

let dir: string;
let rsaPublicPath: string;
let rsaPublicPem: string;
let rsaPrivatePem: string;
let ecPublicPath: string;
let ecPrivatePem: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tablegate-auth-'));
  const rsa = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  rsaPublicPem = rsa.publicKey;
  rsaPrivatePem = rsa.privateKey;
  rsaPublicPath = join(dir, 'rsa.pub.pem');
  writeFileSync(rsaPublicPath, rsaPublicPem);
  const ec = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  ecPrivatePem = ec.privateKey;
  ecPublicPath = join(dir, 'ec.pub.pem');
  writeFileSync(ecPublicPath, ec.publicKey);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rs256 = (): Partial<ResolvedConfig> => ({ jwtSecret: undefined, jwtAlgorithms: ['RS256'], jwtPublicKeyPath: rsaPublicPath });
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

function configError(overrides: Partial<ResolvedConfig>): GatewayConfigError {
  try {
    createAuthStage(testConfig(overrides));
  } catch (error) {
    if (error instanceof GatewayConfigError) return error;
    throw error;
  }
  throw new Error('expected a GatewayConfigError');
}

describe('auth stage: public keys', () => {
  test('an RS256 token verifies with jwt_public_key_path', async () => {
    const token = jwt.sign({ tenant_id: 'rs-tenant' }, rsaPrivatePem, { algorithm: 'RS256' });
    expect(await authenticate(bearer(token), rs256())).toMatchObject({ tenantId: 'rs-tenant', source: 'jwt' });
  });

  test('an ES256 token verifies with an EC public key', async () => {
    const token = jwt.sign({ tenant_id: 'es-tenant' }, ecPrivatePem, { algorithm: 'ES256' });
    const config = { jwtSecret: undefined, jwtAlgorithms: ['ES256'], jwtPublicKeyPath: ecPublicPath };
    expect((await authenticate(bearer(token), config)).tenantId).toBe('es-tenant');
  });

  test('HS/RS confusion: HS256 signed with the public key PEM is rejected', async () => {
    const forged = jwt.sign({ tenant_id: 'forged' }, rsaPublicPem, { algorithm: 'HS256' });
    expectInvalidToken(await rejection(authenticate(bearer(forged), rs256())));
    // Also when HS256 is allowed alongside RS256: the HMAC key is the secret, never the PEM.
    expectInvalidToken(await rejection(authenticate(bearer(forged), { ...rs256(), jwtSecret: secret, jwtAlgorithms: ['HS256', 'RS256'] })));
  });

  test('with a secret and a public key, each token is verified with the key of its algorithm', async () => {
    const both = { jwtSecret: secret, jwtAlgorithms: ['HS256', 'RS256'], jwtPublicKeyPath: rsaPublicPath };
    expect((await authenticate(bearer(sign({ tenant_id: 'hs' })), both)).tenantId).toBe('hs');
    const rsToken = jwt.sign({ tenant_id: 'rs' }, rsaPrivatePem, { algorithm: 'RS256' });
    expect((await authenticate(bearer(rsToken), both)).tenantId).toBe('rs');
    expectInvalidToken(await rejection(authenticate(bearer(sign({ tenant_id: 'x' }, { algorithm: 'HS512' })), both)));
  });

  test('an RS256 token is rejected by an HS256-only gateway', async () => {
    const token = jwt.sign({ tenant_id: 't' }, rsaPrivatePem, { algorithm: 'RS256' });
    expectInvalidToken(await rejection(authenticate(bearer(token))));
  });
});

describe('auth stage: configuration errors at construction', () => {
  test('"none" is refused', () => {
    for (const alg of ['none', 'None']) {
      const error = configError({ jwtSecret: secret, jwtAlgorithms: ['HS256', alg] });
      expect(error.key).toBe('jwt_algorithms');
      expect(error.message).toContain('jwt_algorithms');
    }
  });

  test('unknown algorithms and an empty list are refused', () => {
    expect(configError({ jwtSecret: secret, jwtAlgorithms: ['hs256'] }).message).toContain('unsupported algorithm "hs256"');
    expect(configError({ jwtAlgorithms: ['EdDSA'], jwtPublicKeyPath: ecPublicPath }).message).toContain('EdDSA');
    expect(configError({ jwtSecret: secret, jwtAlgorithms: [] }).key).toBe('jwt_algorithms');
  });

  test('HS algorithms with only a public key are refused, naming the fix', () => {
    const error = configError({ jwtPublicKeyPath: rsaPublicPath }); // default jwt_algorithms ["HS256"]
    expect(error.key).toBe('jwt_algorithms');
    expect(error.message).toMatch(/HS256.*jwt_secret/);
    expect(error.message).toContain('RS256');
  });

  test('a public key with only HS algorithms is refused even when a secret is set', () => {
    expect(configError({ jwtSecret: secret, jwtPublicKeyPath: rsaPublicPath }).key).toBe('jwt_algorithms');
  });

  test('RS/ES algorithms without a public key are refused', () => {
    const error = configError({ jwtSecret: secret, jwtAlgorithms: ['RS256'] });
    expect(error.key).toBe('jwt_algorithms');
    expect(error.message).toContain('jwt_public_key_path');
  });

  test('an algorithm that does not fit the key type is refused', () => {
    expect(configError({ jwtAlgorithms: ['ES256'], jwtPublicKeyPath: rsaPublicPath }).key).toBe('jwt_algorithms');
    expect(configError({ jwtAlgorithms: ['RS256'], jwtPublicKeyPath: ecPublicPath }).key).toBe('jwt_algorithms');
    expect(configError({ jwtAlgorithms: ['ES384'], jwtPublicKeyPath: ecPublicPath }).message).toContain('prime256v1');
  });

  test('an unreadable or non-PEM key file is refused without echoing its content', () => {
    expect(configError({ jwtAlgorithms: ['RS256'], jwtPublicKeyPath: join(dir, 'missing.pem') }).key).toBe('jwt_public_key_path');
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, 'top-secret-not-a-key');
    const error = configError({ jwtAlgorithms: ['RS256'], jwtPublicKeyPath: garbage });
    expect(error.key).toBe('jwt_public_key_path');
    expect(error.message).not.toContain('top-secret-not-a-key');
  });

  test('dev mode without a secret is refused', () => {
    expect(configError({ devMode: true, jwtSecret: undefined }).key).toBe('jwt_secret');
  });

  test('require_auth with no way to verify a token is refused, naming JWT_SECRET and the alternatives', () => {
    const error = configError({ requireAuth: true, jwtSecret: undefined });
    expect(error.key).toBe('jwt_secret');
    expect(error.message).toContain('require_auth');
    expect(error.message).toContain('JWT_SECRET');
    expect(error.message).toContain('jwt_public_key_path');
    expect(error.message).toContain('jwks_url');
    expect(error.message).toContain('require_auth = false');
    // Any one way to verify is enough; without require_auth no key is needed (anonymous only).
    expect(() => createAuthStage(testConfig({ requireAuth: true, jwtSecret: secret }))).not.toThrow();
    expect(() => createAuthStage(testConfig({ requireAuth: true, jwtAlgorithms: ['RS256'], jwtPublicKeyPath: rsaPublicPath }))).not.toThrow();
    expect(() => createAuthStage(testConfig({ requireAuth: true, jwtAlgorithms: ['RS256'], jwksUrl: 'https://issuer.example/jwks.json' }))).not.toThrow();
    expect(() => createAuthStage(testConfig({ requireAuth: false, jwtSecret: undefined }))).not.toThrow();
  });

  test('configuration errors never echo the secret', () => {
    const error = configError({ jwtSecret: secret, jwtAlgorithms: ['none'] });
    expect(error.message).not.toContain(secret);
  });
});
