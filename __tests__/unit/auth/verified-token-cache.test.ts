/**
 * The verified-token cache (docs/security.md, "The verified-token cache"): a token verifies once,
 * and a hit is refused whenever the verification would refuse the token.
 */
import { createAuthStage } from '../../../lib/stages/auth/create-auth-stage';
import { createVerifiedTokenCache } from '../../../lib/stages/auth/verified-token-cache';
import type { Identity } from '../../../lib/pipeline/identity';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { expectInvalidToken, nowS, rejection, secret, sign } from './auth-test-helpers';
import { testConfig } from './config-fixture';
import { testContext, testRequest } from './request-fixture';

const identity = (tenantId: string): Identity =>
  Object.freeze({ tenantId, userId: '', role: '', agentId: '', scopes: [], claims: {}, source: 'jwt' as const });

function stage(overrides: Partial<ResolvedConfig> = {}): (token: string) => Promise<Identity> {
  const config = testConfig({ jwtSecret: secret, ...overrides });
  const auth = createAuthStage(config);
  return async (token) => await auth(testContext(testRequest({ authorization: `Bearer ${token}` }, true), config));
}

afterEach(() => jest.useRealTimers());

describe('verified-token cache', () => {
  test('a hit needs the same token, an unexpired entry and the same key generation', () => {
    const cache = createVerifiedTokenCache({ maxEntries: 10, maxLifetimeS: 300, clockSkewS: 5 })!;
    const a = identity('a');
    cache.set('tok', a, 1000, 900, 0);
    expect(cache.get('tok', 900, 0)).toBe(a);
    expect(cache.get('tok2', 900, 0)).toBeUndefined();
    expect(cache.get('tok', 1004, 0)).toBe(a); // exp 1000 + skew 5: valid while now < 1005
    expect(cache.get('tok', 900, 1)).toBeUndefined(); // a JWKS fetch since: verify again
    expect(cache.size()).toBe(0); // and the stale entry is gone
    cache.set('tok', a, 1000, 900, 0);
    expect(cache.get('tok', 1005, 0)).toBeUndefined();
  });

  test('an entry ends after the maximum lifetime even without exp; an expired token is not stored', () => {
    const cache = createVerifiedTokenCache({ maxEntries: 10, maxLifetimeS: 60, clockSkewS: 0 })!;
    cache.set('no-exp', identity('a'), undefined, 1000, 0);
    expect(cache.get('no-exp', 1059, 0)).toBeDefined();
    expect(cache.get('no-exp', 1060, 0)).toBeUndefined();
    cache.set('expired', identity('a'), 999, 1000, 0);
    expect(cache.size()).toBe(0);
  });

  test('bounded: the oldest entry goes when full', () => {
    const cache = createVerifiedTokenCache({ maxEntries: 2, maxLifetimeS: 60, clockSkewS: 0 })!;
    cache.set('1', identity('1'), undefined, 0, 0);
    cache.set('2', identity('2'), undefined, 0, 0);
    cache.set('3', identity('3'), undefined, 0, 0);
    expect(cache.size()).toBe(2);
    expect(cache.get('1', 1, 0)).toBeUndefined();
    expect(cache.get('3', 1, 0)?.tenantId).toBe('3');
  });

  test('0 entries or 0 seconds: no cache', () => {
    expect(createVerifiedTokenCache({ maxEntries: 0, maxLifetimeS: 60, clockSkewS: 0 })).toBeUndefined();
    expect(createVerifiedTokenCache({ maxEntries: 10, maxLifetimeS: 0, clockSkewS: 0 })).toBeUndefined();
  });
});

describe('auth stage with the verified-token cache', () => {
  test('the same token twice: one verification, the same frozen identity', async () => {
    const auth = stage();
    const token = sign({ tenant_id: 't-1', user_id: 'u-1' }, { expiresIn: 60 });
    const first = await auth(token);
    expect(await auth(token)).toBe(first);
    // Without the cache each request verifies and builds its own identity.
    const uncached = stage({ jwtCacheMaxEntries: 0 });
    const one = await uncached(token);
    const two = await uncached(token);
    expect(two).not.toBe(one);
    expect(two).toEqual(one);
  });

  test('a cached token is refused once it expires (same skew as verification)', async () => {
    const auth = stage({ jwtClockSkewS: 2 });
    const token = sign({ tenant_id: 't-1', exp: nowS() + 10 });
    expect((await auth(token)).tenantId).toBe('t-1');
    expect(await auth(token)).toBeDefined(); // a hit
    // Only the clock moves (jose reads it through `new Date()`, the cache through Date.now()).
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] });
    jest.setSystemTime(Date.now() + 12_000); // exp + skew has passed
    expectInvalidToken(await rejection(auth(token)));
    jest.useRealTimers();
  });

  test('a token altered in its signature never hits the cache', async () => {
    const auth = stage();
    const token = sign({ tenant_id: 't-1' }, { expiresIn: 60 });
    await auth(token);
    // The signature's first character: all six of its bits are signature bits (the last one's
    // low bits are padding, so changing it could leave the signature the same).
    const at = token.lastIndexOf('.') + 1;
    const altered = token.slice(0, at) + (token[at] === 'A' ? 'g' : 'A') + token.slice(at + 1);
    expectInvalidToken(await rejection(auth(altered)));
  });

  test('a token that failed is not remembered: it fails again', async () => {
    const auth = stage();
    const token = sign({ tenant_id: 't-1' }, { expiresIn: 60 }, 'another-secret-that-is-long-enough-for-hs256');
    expectInvalidToken(await rejection(auth(token)));
    expectInvalidToken(await rejection(auth(token)));
  });
});
