import { GatewayError } from '../../../lib/errors/gateway-error';
import { claimsToIdentity } from '../../../lib/stages/auth/claims-to-identity';

const map = (payload: unknown, requireTenant = false) => claimsToIdentity(payload, { requireTenant });

function mapError(payload: unknown, requireTenant = false): GatewayError {
  try {
    map(payload, requireTenant);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('claimsToIdentity', () => {
  test('maps the identity claims and keeps every other claim, registered ones included', () => {
    const identity = map({ tenant_id: 't', user_id: 'u', role: 'r', agent_id: 'a', sub: 's', exp: 1, operator_id: 'op', x: [1] });
    expect(identity).toEqual({
      tenantId: 't',
      userId: 'u',
      role: 'r',
      agentId: 'a',
      scopes: [],
      claims: { sub: 's', exp: 1, operator_id: 'op', x: [1] },
      source: 'jwt',
    });
  });

  test('operator_id is never the tenant', () => {
    expect(map({ operator_id: 'op' }).tenantId).toBe('');
    expect(mapError({ operator_id: 'op' }, true).message).toBe('The token carries no tenant_id claim.');
  });

  test('user_id falls back to sub when absent or empty', () => {
    expect(map({ sub: 's' }).userId).toBe('s');
    expect(map({ sub: 's', user_id: '' }).userId).toBe('s');
    expect(map({ sub: 's', user_id: 'u' }).userId).toBe('u');
  });

  test('numbers become decimal text', () => {
    expect(map({ tenant_id: 7, user_id: 0, agent_id: -3 })).toMatchObject({ tenantId: '7', userId: '0', agentId: '-3' });
  });

  test.each([
    ['an object', { id: 1 }],
    ['a boolean', true],
    ['null', null],
    ['an array', ['t']],
    ['a fraction', 1.5],
    ['an integer beyond 2^53 (already rounded by JSON parsing)', 2 ** 53 + 2],
  ])('a tenant_id that is %s is 401', (_, value) => {
    const error = mapError({ tenant_id: value });
    expect(error.status).toBe(401);
    expect(error.message).toBe('The token claim `tenant_id` must be a string or an integer.');
  });

  test('role and agent_id of the wrong type are 401 too', () => {
    expect(mapError({ role: false }).status).toBe(401);
    expect(mapError({ agent_id: {} }).status).toBe(401);
    expect(mapError({ sub: { a: 1 } }).status).toBe(401);
  });

  test('ids longer than 256 characters or containing NUL are 401', () => {
    expect(map({ tenant_id: 'a'.repeat(256) }).tenantId).toHaveLength(256);
    expect(mapError({ tenant_id: 'a'.repeat(257) }).message).toContain('longer than 256');
    expect(mapError({ user_id: 'u\u0000' }).message).toContain('NUL');
    expect(mapError({ sub: 'x'.repeat(300) }).status).toBe(401);
  });

  test('other text is kept as is (it is bound as a parameter later)', () => {
    const hostile = `'; drop table t; -- "é\u202e`;
    expect(map({ tenant_id: hostile }).tenantId).toBe(hostile);
  });

  test('scope: space- or comma-separated string', () => {
    expect(map({ scope: 'read write' }).scopes).toEqual(['read', 'write']);
    expect(map({ scope: 'read,write , admin' }).scopes).toEqual(['read', 'write', 'admin']);
    expect(map({ scope: '' }).scopes).toEqual([]);
  });

  test('scopes and permissions arrays, deduplicated across all three claims', () => {
    expect(map({ scopes: ['a', 'b', 'a'] }).scopes).toEqual(['a', 'b']);
    expect(map({ permissions: ['p:read'] }).scopes).toEqual(['p:read']);
    expect(map({ scope: 'a b', scopes: ['b', 'c'], permissions: ['c', 'd'] }).scopes).toEqual(['a', 'b', 'c', 'd']);
  });

  test('malformed scope claims are 401', () => {
    expect(mapError({ scopes: [1, 2] }).status).toBe(401);
    expect(mapError({ permissions: { read: true } }).status).toBe(401);
    expect(mapError({ scope: 5 }).status).toBe(401);
  });

  test('the identity, its scopes and its claims are deeply frozen', () => {
    const identity = map({ scope: 'a', nested: { deep: [1] } });
    expect(Object.isFrozen(identity)).toBe(true);
    expect(Object.isFrozen(identity.scopes)).toBe(true);
    expect(Object.isFrozen(identity.claims)).toBe(true);
    expect(Object.isFrozen((identity.claims['nested'] as { deep: unknown }).deep)).toBe(true);
  });

  test('a __proto__ claim stays an ordinary own claim', () => {
    const identity = map(JSON.parse('{"__proto__": {"tenant_id": "evil"}, "user_id": "u"}'));
    expect(identity.tenantId).toBe('');
    expect(Object.getPrototypeOf(identity.claims)).toBe(Object.prototype);
    expect(Object.keys(identity.claims)).toEqual(['__proto__']);
  });

  test('a payload that is not an object is 401', () => {
    for (const payload of ['text', 1, null, [], undefined]) expect(mapError(payload).status).toBe(401);
  });
});
