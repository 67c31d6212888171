/**
 * The rate-limit key (lib/ops/rate-limit-key.ts): per caller and route kind, bounded, and no
 * claim text can make two callers share a key.
 */
import { rateLimitKey } from '../../../lib/ops/rate-limit-key';

const jwt = (tenantId: string, userId: string) => ({ source: 'jwt' as const, tenantId, userId });
const anonymous = { source: 'anonymous' as const, tenantId: '', userId: '' };

describe('rateLimitKey', () => {
  it('keys a token caller by tenant and user, and the route kind', () => {
    expect(rateLimitKey(jwt('t1', 'alice'), 'list', '10.0.0.1')).toBe('t:t1:u:alice:list');
    expect(rateLimitKey({ ...jwt('t1', 'alice'), source: 'dev-headers' }, 'insert', undefined)).toBe('t:t1:u:alice:insert');
    expect(rateLimitKey(jwt('', 'alice'), 'get', '10.0.0.1')).toBe('t::u:alice:get');
  });

  it('percent-encodes the parts, so a `:` cannot move the boundary between tenant and user', () => {
    expect(rateLimitKey(jwt('x:u:y', 'z'), 'list', undefined)).not.toBe(rateLimitKey(jwt('x', 'y:u:z'), 'list', undefined));
    expect(rateLimitKey(jwt('x:u:y', 'z'), 'list', undefined)).toBe('t:x%3Au%3Ay:u:z:list');
  });

  it('hashes very long claims to a fixed length', () => {
    const key = rateLimitKey(jwt('t'.repeat(5000), 'u'), 'list', undefined);
    expect(key).toMatch(/^h:[0-9a-f]{64}:list$/);
    expect(rateLimitKey(jwt('t'.repeat(5000), 'v'), 'list', undefined)).not.toBe(key);
  });

  it('keys anonymous callers, and tokens that name nobody, by address; IPv6 by /56', () => {
    expect(rateLimitKey(anonymous, 'list', '203.0.113.9')).toBe('ip:203.0.113.9:list');
    expect(rateLimitKey(jwt('', ''), 'rpc', '203.0.113.9')).toBe('ip:203.0.113.9:rpc');
    expect(rateLimitKey(anonymous, 'list', '2001:db8:0:12::1')).toBe(rateLimitKey(anonymous, 'list', '2001:db8:0:34::9'));
    expect(rateLimitKey(anonymous, 'list', '2001:db8:0:12::1')).toBe('ip:2001:db8::/56:list');
    expect(rateLimitKey(anonymous, 'list', '::ffff:203.0.113.9')).toBe('ip:203.0.113.9:list');
  });

  it('never copies text that is not an address into the key', () => {
    expect(rateLimitKey(anonymous, 'list', 'x'.repeat(10_000))).toBe('ip:invalid:list');
    expect(rateLimitKey(anonymous, 'list', '')).toBe('ip:unknown:list');
    expect(rateLimitKey(anonymous, 'list', undefined)).toBe('ip:unknown:list');
  });
});
