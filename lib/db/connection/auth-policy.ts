/**
 * Which authentication mechanisms the gateway answers: auth_mode's preset, narrowed or widened by
 * the explicit auth_* toggles. In: the preset and the toggles from the URL. Out: the resulting
 * set, and for a server's request the refusal message naming the mechanism and the key that
 * forbids it. Never: lets a password go out in cleartext unless auth_cleartext=true was written.
 * The resulting sets are tabled in docs/security.md.
 */
import { authMechanisms, type AuthMechanism, type AuthMode, type AuthPolicy } from './connection-settings';

const presets: Readonly<Record<AuthMode, readonly AuthMechanism[]>> = {
  // The successor of the removed `compat`: everything but cleartext.
  default: ['scram', 'md5', 'kerberos', 'gssapi', 'sspi'],
  scram_only: ['scram'],
  gssapi_only: ['kerberos', 'gssapi', 'sspi'],
};

export function resolveAuthPolicy(mode: AuthMode, explicit: Partial<Record<AuthMechanism, boolean>>): AuthPolicy {
  const allowed = new Set<AuthMechanism>(presets[mode]);
  for (const mechanism of authMechanisms) {
    const toggle = explicit[mechanism];
    if (toggle === true) allowed.add(mechanism);
    if (toggle === false) allowed.delete(mechanism);
  }
  return Object.freeze({
    mode,
    allowed: Object.freeze(allowed) as ReadonlySet<AuthMechanism>,
    explicit: Object.freeze({ ...explicit }),
    requireExchange: mode !== 'default',
  });
}

/** The URL key that governs a mechanism. */
export function mechanismKey(mechanism: AuthMechanism): string {
  return `auth_${mechanism}`;
}

/** A mechanism as the server asks for it, with its pg_hba.conf method, for messages. */
export function describeMechanism(mechanism: AuthMechanism): string {
  switch (mechanism) {
    case 'scram':
      return 'SCRAM-SHA-256 authentication (pg_hba.conf method scram-sha-256)';
    case 'md5':
      return 'MD5 password authentication (pg_hba.conf method md5)';
    case 'cleartext':
      return 'a cleartext password (pg_hba.conf method password)';
    case 'kerberos':
      return 'Kerberos V5 authentication (AuthenticationKerberosV5, removed from PostgreSQL in 9.4)';
    case 'gssapi':
      return 'GSSAPI authentication (pg_hba.conf method gss)';
    case 'sspi':
      return 'SSPI authentication (pg_hba.conf method sspi)';
  }
}

/** Undefined when the policy allows the mechanism, else why not, naming the key to change. */
export function refusalFor(policy: AuthPolicy, mechanism: AuthMechanism): string | undefined {
  if (policy.allowed.has(mechanism)) return undefined;
  const key = mechanismKey(mechanism);
  const asked = `the server asked for ${describeMechanism(mechanism)}`;
  if (policy.explicit[mechanism] === false) return `${asked}, which ${key}=false forbids`;
  if (mechanism === 'cleartext') return `${asked}, which the gateway sends only with ${key}=true (a password in cleartext is never sent by default)`;
  return `${asked}, which auth_mode=${policy.mode} does not allow (set ${key}=true to allow it)`;
}

/** The allowed set in words, e.g. "scram, md5, kerberos, gssapi, sspi". */
export function describeAllowed(policy: AuthPolicy): string {
  const names = authMechanisms.filter((m) => policy.allowed.has(m));
  return names.length === 0 ? 'none' : names.join(', ');
}
