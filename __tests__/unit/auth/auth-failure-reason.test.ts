/**
 * The auth stage names why it refused a token (GatewayError.reason, for
 * tablegate_auth_failures_total), from jose's real errors, while the caller keeps getting one
 * generic message; anything without a known reason counts as `other`.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { authFailureReasonOf, authFailureReasons } from '../../../lib/pipeline/auth-failure-reasons';
import { authenticate, nowS, rejection, sign } from './auth-test-helpers';

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
const reasonOf = async (headers: Record<string, string>, overrides = {}) => (await rejection(authenticate(headers, overrides))).reason;

describe('auth failure reasons', () => {
  it('names each failed check, while the message stays the same for every token check', async () => {
    const cases: [Record<string, string>, object, string][] = [
      [{}, { requireAuth: true }, 'missing_credentials'],
      [{ authorization: 'Basic YTpi' }, {}, 'malformed_header'],
      [{ authorization: 'Bearer' }, {}, 'malformed_header'],
      [bearer('not.a.jwt'), {}, 'malformed_token'],
      [bearer('x'.repeat(9000)), {}, 'malformed_token'],
      [bearer(sign({ tenant_id: 't' }, {}, 'another-secret-that-is-long-enough-for-hs256')), {}, 'bad_signature'],
      [bearer(sign({ tenant_id: 't', exp: nowS() - 3600 })), {}, 'expired'],
      [bearer(sign({ tenant_id: 't', nbf: nowS() + 3600 })), {}, 'not_yet_valid'],
      [bearer(sign({ tenant_id: 't', iat: nowS() + 3600 })), {}, 'not_yet_valid'],
      [bearer(sign({ tenant_id: 't' }, { audience: 'other-api' })), { jwtAudience: 'api' }, 'wrong_audience'],
      [bearer(sign({ tenant_id: 't' }, { issuer: 'https://evil.example' })), { jwtIssuer: 'https://issuer.example' }, 'wrong_issuer'],
      [bearer(sign({ tenant_id: 't' }, { algorithm: 'HS384' })), {}, 'algorithm_not_allowed'],
      [bearer(sign({ user_id: 'u' })), { requireTenant: true }, 'bad_claim'],
      [bearer(sign({ tenant_id: { nested: 1 } })), {}, 'bad_claim'],
    ];
    const seen: string[] = [];
    for (const [headers, overrides, expected] of cases) {
      const reason = await reasonOf(headers, overrides);
      expect([headers, reason]).toEqual([headers, expected]);
      seen.push(reason!);
    }
    const verified = [cases[5]!, cases[6]!, cases[9]!, cases[11]!];
    const messages = new Set(await Promise.all(verified.map(async ([h, o]) => (await rejection(authenticate(h, o))).message)));
    expect(messages).toEqual(new Set(['The bearer token is invalid or expired.']));
    expect(seen.every((r) => (authFailureReasons as readonly string[]).includes(r))).toBe(true);
  });

  it('names an RS256 token that no configured key verifies', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const dir = mkdtempSync(join(tmpdir(), 'tg-auth-'));
    try {
      const file = join(dir, 'key.pem');
      writeFileSync(file, publicKey.export({ type: 'spki', format: 'pem' }));
      const token = sign({ tenant_id: 't' }, { algorithm: 'RS256' }, other.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
      expect(await reasonOf(bearer(token), { jwtSecret: undefined, jwtPublicKeyPath: file, jwtAlgorithms: ['RS256'] })).toBe('bad_signature');
      // An HS256 token where only RS256 is configured.
      expect(await reasonOf(bearer(sign({ tenant_id: 't' })), { jwtSecret: undefined, jwtPublicKeyPath: file, jwtAlgorithms: ['RS256'] })).toBe('algorithm_not_allowed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is bad_dev_headers for unusable dev-mode headers', async () => {
    expect(await reasonOf({ 'x-user-id': 'u' }, { devMode: true, requireTenant: true })).toBe('bad_dev_headers');
    expect(await reasonOf({ 'x-tenant-id': 'a\u0000b' }, { devMode: true })).toBe('bad_dev_headers');
  });

  it('maps anything else to other, so a replacement auth stage cannot invent a label value', () => {
    expect(authFailureReasonOf(new Error('boom'))).toBe('other');
    expect(authFailureReasonOf(new GatewayError('UNAUTHORIZED', 'no'))).toBe('other');
    expect(authFailureReasonOf(new GatewayError('UNAUTHORIZED', 'no', { reason: 'users_table_drop' }))).toBe('other');
    expect(authFailureReasonOf(new GatewayError('UNAUTHORIZED', 'no', { reason: 'expired' }))).toBe('expired');
  });

  it('never renders the reason to the caller', () => {
    const error = new GatewayError('UNAUTHORIZED', 'The bearer token is invalid or expired.', { reason: 'expired' });
    expect(JSON.stringify(error.toJSON())).not.toContain('expired"');
    expect(error.toJSON()).toEqual({ code: 'UNAUTHORIZED', message: 'The bearer token is invalid or expired.' });
  });
});
