import { createHmac } from 'node:crypto';
import { anonymousIdentity } from '../../../lib/pipeline/identity';
import { authenticate, expectInvalidToken, nowS, rejection, secret, sign } from './auth-test-helpers';

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

describe('auth stage: bearer tokens (HS256)', () => {
  test('a valid token yields an identity with every claim', async () => {
    const token = sign({
      tenant_id: 't-1',
      user_id: 'u-1',
      role: 'editor',
      agent_id: 'a-1',
      scope: 'read write',
      operator_id: 'op-9',
      custom: { nested: true },
    });
    const identity = await authenticate(bearer(token));
    expect(identity).toMatchObject({
      tenantId: 't-1',
      userId: 'u-1',
      role: 'editor',
      agentId: 'a-1',
      scopes: ['read', 'write'],
      source: 'jwt',
    });
    expect(identity.claims).toMatchObject({ operator_id: 'op-9', custom: { nested: true } });
    expect(typeof identity.claims['iat']).toBe('number');
    expect(Object.isFrozen(identity)).toBe(true);
  });

  test('operator_id never becomes the tenant', async () => {
    const identity = await authenticate(bearer(sign({ operator_id: 'op-9', user_id: 'u-1' })), { requireTenant: false });
    expect(identity.tenantId).toBe('');
    expect(identity.claims['operator_id']).toBe('op-9');
    const error = await rejection(authenticate(bearer(sign({ operator_id: 'op-9' })), { requireTenant: true }));
    expect(error.message).toBe('The token carries no tenant_id claim.');
  });

  test('user_id falls back to sub', async () => {
    const identity = await authenticate(bearer(sign({ tenant_id: 't' }, { subject: 'subject-1' })));
    expect(identity.userId).toBe('subject-1');
  });

  test('a numeric tenant_id becomes decimal text', async () => {
    expect((await authenticate(bearer(sign({ tenant_id: 42 })))).tenantId).toBe('42');
  });

  test('lowercase "bearer" scheme is accepted', async () => {
    const identity = await authenticate({ authorization: `bearer ${sign({ tenant_id: 't' })}` });
    expect(identity.tenantId).toBe('t');
  });

  test('expired beyond the clock skew is 401; expired within the skew is accepted', async () => {
    expectInvalidToken(await rejection(authenticate(bearer(sign({ tenant_id: 't', exp: nowS() - 60 })))));
    const identity = await authenticate(bearer(sign({ tenant_id: 't', exp: nowS() - 10 })));
    expect(identity.tenantId).toBe('t');
    expectInvalidToken(await rejection(authenticate(bearer(sign({ tenant_id: 't', exp: nowS() - 10 })), { jwtClockSkewS: 0 })));
  });

  test('nbf in the future (beyond the skew) is 401', async () => {
    expectInvalidToken(await rejection(authenticate(bearer(sign({ tenant_id: 't', nbf: nowS() + 120 })))));
    expect((await authenticate(bearer(sign({ tenant_id: 't', nbf: nowS() + 10 })))).tenantId).toBe('t');
  });

  test('a token signed with another secret is 401', async () => {
    expectInvalidToken(await rejection(authenticate(bearer(sign({ tenant_id: 't' }, {}, 'some-other-secret')))));
  });

  test('an alg "none" token is 401 even with "none" nowhere configured', async () => {
    const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${part({ alg: 'none', typ: 'JWT' })}.${part({ tenant_id: 't', iat: nowS() })}.`;
    expectInvalidToken(await rejection(authenticate(bearer(unsigned))));
  });

  test('an algorithm outside jwt_algorithms is 401', async () => {
    const token = sign({ tenant_id: 't' }, { algorithm: 'HS512' });
    expectInvalidToken(await rejection(authenticate(bearer(token))));
    expect((await authenticate(bearer(token), { jwtAlgorithms: ['HS256', 'HS512'] })).tenantId).toBe('t');
  });

  test('audience and issuer are checked when configured', async () => {
    const config = { jwtAudience: 'tablegate', jwtIssuer: 'https://issuer.example' };
    const good = sign({ tenant_id: 't' }, { audience: 'tablegate', issuer: 'https://issuer.example' });
    expect((await authenticate(bearer(good), config)).tenantId).toBe('t');
    const wrongAudience = sign({ tenant_id: 't' }, { audience: 'someone-else', issuer: 'https://issuer.example' });
    expectInvalidToken(await rejection(authenticate(bearer(wrongAudience), config)));
    const wrongIssuer = sign({ tenant_id: 't' }, { audience: 'tablegate', issuer: 'https://evil.example' });
    expectInvalidToken(await rejection(authenticate(bearer(wrongIssuer), config)));
    const noAudience = sign({ tenant_id: 't' }, { issuer: 'https://issuer.example' });
    expectInvalidToken(await rejection(authenticate(bearer(noAudience), config)));
    expect((await authenticate(bearer(good), { jwtAudience: ['other', 'tablegate'] })).tenantId).toBe('t');
  });

  test('a token longer than 8192 characters is 401 without verification', async () => {
    const token = sign({ tenant_id: 't', padding: 'x'.repeat(9000) });
    expect(token.length).toBeGreaterThan(8192);
    expectInvalidToken(await rejection(authenticate(bearer(token))));
  });

  test('garbage tokens are 401', async () => {
    for (const token of ['not-a-jwt', 'a.b.c', `${sign({ tenant_id: 't' })}x`, '...']) {
      expectInvalidToken(await rejection(authenticate(bearer(token))));
    }
  });

  test('a signed token whose payload is not a JSON object is 401', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from('"just a string"').toString('base64url');
    const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
    expectInvalidToken(await rejection(authenticate(bearer(`${header}.${payload}.${signature}`))));
  });

  test("the 401 never carries the verifier's reason", async () => {
    const tokens = [
      sign({ tenant_id: 't', exp: nowS() - 3600 }),
      sign({ tenant_id: 't' }, {}, 'wrong'),
      sign({ tenant_id: 't', nbf: nowS() + 3600 }),
      'a.b.c',
    ];
    for (const token of tokens) {
      const error = await rejection(authenticate(bearer(token), { jwtAudience: 'aud' }));
      const rendered = JSON.stringify(error.toJSON());
      expect(rendered).toBe('{"code":"UNAUTHORIZED","message":"The bearer token is invalid or expired."}');
      // jose's reason is kept only as the (never rendered) cause, for server-side logs.
      const reason = (error.cause as Error).message;
      expect(reason).toMatch(/claim|signature|JWS|JWT/);
      expect(rendered).not.toContain(reason);
      expect(error.details).toBeUndefined();
      expect(error.hint).toBeUndefined();
      expect(rendered).not.toContain(secret);
    }
  });
});

describe('auth stage: the Authorization header', () => {
  test('Basic scheme is 401', async () => {
    const error = await rejection(authenticate({ authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }));
    expect(error.status).toBe(401);
    expect(error.headers['WWW-Authenticate']).toBe('Bearer');
  });

  test('an empty token or an empty header is 401, not "no credentials"', async () => {
    for (const authorization of ['Bearer', 'Bearer   ', '']) {
      const error = await rejection(authenticate({ authorization }, { requireAuth: false }));
      expect(error.status).toBe(401);
    }
  });
});

describe('auth stage: token cookie', () => {
  const cookieConfig = { jwtCookie: 'tg_token' };

  test('the token is read from the configured cookie', async () => {
    const cookie = `theme=dark; tg_token=${sign({ tenant_id: 'from-cookie' })}; other=1`;
    expect((await authenticate({ cookie }, cookieConfig)).tenantId).toBe('from-cookie');
    expect((await authenticate({ cookie: `tg_token="${sign({ tenant_id: 'quoted' })}"` }, cookieConfig)).tenantId).toBe('quoted');
  });

  test('the cookie is ignored unless jwt_cookie is configured', async () => {
    const cookie = `tg_token=${sign({ tenant_id: 'from-cookie' })}`;
    const error = await rejection(authenticate({ cookie }));
    expect(error.message).toBe('Authentication is required.');
  });

  test('a Bearer header wins over the cookie', async () => {
    const headers = { ...bearer(sign({ tenant_id: 'from-header' })), cookie: `tg_token=${sign({ tenant_id: 'from-cookie' })}` };
    expect((await authenticate(headers, cookieConfig)).tenantId).toBe('from-header');
  });

  test('an invalid cookie token is 401, not anonymous', async () => {
    const cookie = `tg_token=${sign({ tenant_id: 't' }, {}, 'wrong')}`;
    expectInvalidToken(await rejection(authenticate({ cookie }, { ...cookieConfig, requireAuth: false })));
  });

  test('a cookie with a similar name is not the token cookie', async () => {
    const cookie = `xtg_token=${sign({ tenant_id: 't' })}; tg_token_old=${sign({ tenant_id: 't' })}`;
    expect(await authenticate({ cookie }, { ...cookieConfig, requireAuth: false })).toBe(anonymousIdentity);
  });
});

describe('auth stage: no credentials', () => {
  test('require_auth -> 401 with WWW-Authenticate: Bearer', async () => {
    const error = await rejection(authenticate({}));
    expect(error.status).toBe(401);
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.message).toBe('Authentication is required.');
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
  });

  test('require_auth false -> the anonymous identity', async () => {
    expect(await authenticate({}, { requireAuth: false })).toBe(anonymousIdentity);
  });

  test('no key configured: anonymous still works, every token is 401', async () => {
    const noKey = { jwtSecret: undefined, requireAuth: false };
    expect(await authenticate({}, noKey)).toBe(anonymousIdentity);
    expectInvalidToken(await rejection(authenticate(bearer(sign({ tenant_id: 't' })), noKey)));
  });
});
