import { anonymousIdentity } from '../../../lib/pipeline/identity';
import { authenticate, expectInvalidToken, rejection, sign } from './auth-test-helpers';

const devHeaders = { 'x-user-id': 'dev-user', 'x-user-role': 'admin', 'x-tenant-id': 'dev-tenant' };
const devMode = { devMode: true };

describe('auth stage: dev headers', () => {
  test('honoured in dev mode on a loopback connection', async () => {
    const identity = await authenticate(devHeaders, devMode, true);
    expect(identity).toEqual({
      tenantId: 'dev-tenant',
      userId: 'dev-user',
      role: 'admin',
      agentId: '',
      scopes: [],
      claims: {},
      source: 'dev-headers',
    });
    expect(Object.isFrozen(identity)).toBe(true);
  });

  test('ignored outside dev mode (no credentials -> 401 / anonymous)', async () => {
    expect((await rejection(authenticate(devHeaders, { devMode: false }))).message).toBe('Authentication is required.');
    expect(await authenticate(devHeaders, { devMode: false, requireAuth: false })).toBe(anonymousIdentity);
  });

  test('ignored on a non-loopback connection, even in dev mode', async () => {
    expect((await rejection(authenticate(devHeaders, devMode, false))).message).toBe('Authentication is required.');
    expect(await authenticate(devHeaders, { ...devMode, requireAuth: false }, false)).toBe(anonymousIdentity);
  });

  test('an invalid bearer token never falls back to dev headers', async () => {
    const headers = { ...devHeaders, authorization: `Bearer ${sign({ tenant_id: 't' }, {}, 'wrong-secret')}` };
    expectInvalidToken(await rejection(authenticate(headers, { ...devMode, requireAuth: false })));
  });

  test('a non-Bearer Authorization header with dev headers is 401, not a dev identity', async () => {
    const headers = { ...devHeaders, authorization: 'Basic dTpw' };
    expect((await rejection(authenticate(headers, { ...devMode, requireAuth: false }))).status).toBe(401);
  });

  test('a valid bearer token wins over dev headers', async () => {
    const headers = { ...devHeaders, authorization: `Bearer ${sign({ tenant_id: 'jwt-tenant' })}` };
    const identity = await authenticate(headers, devMode);
    expect(identity).toMatchObject({ tenantId: 'jwt-tenant', source: 'jwt' });
  });

  test('a token cookie also disables dev headers', async () => {
    const headers = { ...devHeaders, cookie: `tg=${sign({ tenant_id: 't' }, {}, 'wrong-secret')}` };
    expectInvalidToken(await rejection(authenticate(headers, { ...devMode, jwtCookie: 'tg' })));
  });

  test('none of the three headers present means no credentials', async () => {
    expect((await rejection(authenticate({ 'x-other': '1' }, devMode))).message).toBe('Authentication is required.');
    expect(await authenticate({ 'x-user-id': '' }, { ...devMode, requireAuth: false })).toBe(anonymousIdentity);
  });

  test('one header is enough', async () => {
    expect(await authenticate({ 'x-tenant-id': 'only-tenant' }, devMode)).toMatchObject({ tenantId: 'only-tenant', userId: '', role: '' });
  });

  test('require_tenant applies to dev identities', async () => {
    const error = await rejection(authenticate({ 'x-user-id': 'u' }, { ...devMode, requireTenant: true }));
    expect(error.status).toBe(401);
    expect(error.message).toBe('The request carries no x-tenant-id header.');
  });

  test('values longer than 256 characters or containing NUL are 401', async () => {
    expect((await rejection(authenticate({ 'x-tenant-id': 't'.repeat(257) }, devMode))).status).toBe(401);
    expect((await rejection(authenticate({ 'x-user-id': 'u\u0000' }, devMode))).status).toBe(401);
    expect((await authenticate({ 'x-tenant-id': 't'.repeat(256) }, devMode)).tenantId).toHaveLength(256);
  });
});
