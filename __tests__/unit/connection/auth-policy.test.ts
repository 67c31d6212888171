/** The resulting mechanism sets of auth_mode and the auth_* toggles, as docs/security.md tables them. */
import { resolveAuthPolicy, refusalFor, describeAllowed } from '../../../lib/db/connection/auth-policy';

const allowed = (mode: Parameters<typeof resolveAuthPolicy>[0], toggles: Parameters<typeof resolveAuthPolicy>[1] = {}) => describeAllowed(resolveAuthPolicy(mode, toggles));

describe('auth policy', () => {
  it('has the preset sets; cleartext only when explicitly allowed', () => {
    expect(allowed('default')).toBe('scram, md5, kerberos, gssapi, sspi');
    expect(allowed('scram_only')).toBe('scram');
    expect(allowed('gssapi_only')).toBe('kerberos, gssapi, sspi');
    expect(allowed('default', { cleartext: true })).toBe('scram, md5, cleartext, kerberos, gssapi, sspi');
  });

  it('lets an explicit toggle narrow or widen its preset', () => {
    expect(allowed('default', { md5: false })).toBe('scram, kerberos, gssapi, sspi');
    expect(allowed('scram_only', { md5: true })).toBe('scram, md5');
    expect(allowed('gssapi_only', { scram: true, sspi: false })).toBe('scram, kerberos, gssapi');
  });

  it('names the mechanism and the key that forbids it', () => {
    expect(refusalFor(resolveAuthPolicy('default', { md5: false }), 'md5')).toBe('the server asked for MD5 password authentication (pg_hba.conf method md5), which auth_md5=false forbids');
    expect(refusalFor(resolveAuthPolicy('scram_only', {}), 'gssapi')).toBe(
      'the server asked for GSSAPI authentication (pg_hba.conf method gss), which auth_mode=scram_only does not allow (set auth_gssapi=true to allow it)',
    );
    expect(refusalFor(resolveAuthPolicy('default', {}), 'cleartext')).toMatch(/cleartext password .* only with auth_cleartext=true/);
    expect(refusalFor(resolveAuthPolicy('default', {}), 'scram')).toBeUndefined();
  });

  it('requires an authentication exchange under scram_only and gssapi_only only', () => {
    expect(resolveAuthPolicy('default', {}).requireExchange).toBe(false);
    expect(resolveAuthPolicy('scram_only', {}).requireExchange).toBe(true);
    expect(resolveAuthPolicy('gssapi_only', {}).requireExchange).toBe(true);
  });
});
