/**
 * Every query parameter `database_url` accepts, written once: parse-connection-url validates
 * against this table, error messages suggest names from it, and a unit test checks that
 * docs/configuration.md lists every row. Anything else in the query string is an error (a typo
 * must not silently leave a security setting at its default).
 */

export interface ConnectionParameter {
  readonly name: string;
  /** `policy`: the gateway's connection policy; `libpq`: a libpq parameter node-postgres honours. */
  readonly kind: 'policy' | 'libpq';
  /** Accepted values, in words (shown in errors). */
  readonly values: string;
  /** Default, in words. */
  readonly default: string;
  /** libpq environment variable used when the URL does not set the parameter. */
  readonly env?: string;
}

const BOOLEAN = 'true, false, 1, 0, yes, no, on, off';

export const connectionParameters: readonly ConnectionParameter[] = Object.freeze([
  { name: 'sslmode', kind: 'policy', values: 'disable, prefer, require, verify-ca, verify-full', default: 'prefer', env: 'PGSSLMODE' },
  { name: 'sslrootcert', kind: 'policy', values: 'a PEM file path, or system', default: '~/.postgresql/root.crt when it exists, else none', env: 'PGSSLROOTCERT' },
  { name: 'sslcert', kind: 'policy', values: 'a PEM file path (with sslkey)', default: 'none', env: 'PGSSLCERT' },
  { name: 'sslkey', kind: 'policy', values: 'a PEM file path (with sslcert)', default: 'none', env: 'PGSSLKEY' },
  { name: 'sslpassword', kind: 'policy', values: 'the passphrase of an encrypted sslkey', default: 'none' },
  { name: 'sslnegotiation', kind: 'policy', values: 'postgres, direct', default: 'postgres', env: 'PGSSLNEGOTIATION' },
  { name: 'channel_binding', kind: 'policy', values: 'disable, prefer, require', default: 'prefer', env: 'PGCHANNELBINDING' },
  { name: 'auth_mode', kind: 'policy', values: 'default, scram_only, gssapi_only', default: 'default' },
  { name: 'auth_scram', kind: 'policy', values: BOOLEAN, default: 'from auth_mode' },
  { name: 'auth_md5', kind: 'policy', values: BOOLEAN, default: 'from auth_mode' },
  { name: 'auth_cleartext', kind: 'policy', values: BOOLEAN, default: 'false' },
  { name: 'auth_kerberos', kind: 'policy', values: BOOLEAN, default: 'from auth_mode' },
  { name: 'auth_gssapi', kind: 'policy', values: BOOLEAN, default: 'from auth_mode' },
  { name: 'auth_sspi', kind: 'policy', values: BOOLEAN, default: 'from auth_mode' },
  { name: 'gss_provider', kind: 'policy', values: 'linux_krb5, callback, custom', default: 'none (the `gss` option\'s provider when given)' },
  { name: 'gss_service', kind: 'policy', values: 'a Kerberos service name', default: 'postgres' },
  { name: 'gss_target', kind: 'policy', values: 'a host-based service name service@host', default: '<gss_service>@<host>' },
  { name: 'gss_connect_retries', kind: 'policy', values: 'an integer 0 to 10', default: '2' },
  { name: 'gss_retry_base_ms', kind: 'policy', values: 'an integer 0 to 60000', default: '150' },
  { name: 'gss_circuit_threshold', kind: 'policy', values: 'an integer 1 to 1000000', default: '8' },
  { name: 'gss_circuit_window_ms', kind: 'policy', values: 'an integer 1 to 2147483647', default: '30000' },
  { name: 'gss_circuit_cooldown_ms', kind: 'policy', values: 'an integer 1 to 2147483647', default: '15000' },
  { name: 'host', kind: 'libpq', values: 'a host name, IP address or Unix socket directory', default: 'the URL\'s host' },
  { name: 'port', kind: 'libpq', values: 'an integer 1 to 65535', default: 'the URL\'s port, else 5432' },
  { name: 'user', kind: 'libpq', values: 'a role name', default: 'the URL\'s user' },
  { name: 'password', kind: 'libpq', values: 'a password', default: 'the URL\'s password' },
  { name: 'dbname', kind: 'libpq', values: 'a database name', default: 'the URL\'s path' },
  { name: 'application_name', kind: 'libpq', values: 'text', default: 'tablegate' },
  { name: 'fallback_application_name', kind: 'libpq', values: 'text', default: 'none' },
  { name: 'options', kind: 'libpq', values: 'server command-line options, e.g. -c search_path=app', default: 'none' },
  { name: 'client_encoding', kind: 'libpq', values: 'UTF8', default: 'UTF8' },
  { name: 'connect_timeout', kind: 'libpq', values: 'seconds, an integer >= 0 (0 = the pool\'s timeout)', default: 'pool_connection_timeout_ms' },
  { name: 'keepalives', kind: 'libpq', values: '1 or 0', default: 'node-postgres\' default (off)' },
  { name: 'keepalives_idle', kind: 'libpq', values: 'seconds, an integer >= 0', default: 'the system\'s' },
  { name: 'gssencmode', kind: 'libpq', values: 'disable', default: 'disable' },
] satisfies ConnectionParameter[]);

/**
 * libpq (and node-postgres) parameters tablegate knows but does not support, with what to do
 * instead; a better message than "unknown parameter".
 */
export const unsupportedParameters: Readonly<Record<string, string>> = Object.freeze({
  ssl: 'use sslmode=require (encrypted) or sslmode=verify-full (encrypted and verified)',
  uselibpqcompat: 'tablegate always gives sslmode its libpq meaning; remove it',
  krbsrvname: 'use gss_service',
  gsslib: 'use gss_provider',
  require_auth: 'use auth_mode and the auth_* toggles',
  gssdelegation: 'the gateway never delegates credentials; remove it',
  replication: 'a gateway does not open replication connections; remove it',
  statement_timeout: 'use the statement_timeout_ms key of [gateway]',
  query_timeout: 'use the statement_timeout_ms key of [gateway]',
  lock_timeout: 'set it on the role instead: ALTER ROLE ... SET lock_timeout = ...',
  idle_in_transaction_session_timeout: 'set it on the role instead: ALTER ROLE ... SET idle_in_transaction_session_timeout = ...',
  sslcrl: 'certificate revocation lists are not supported; remove it',
  sslcrldir: 'certificate revocation lists are not supported; remove it',
  sslcompression: 'TLS compression is not supported; remove it',
  sslsni: 'node-postgres always sends SNI for host names; remove it',
  sslcertmode: 'give sslcert and sslkey to send a client certificate',
  ssl_min_protocol_version: 'TLS 1.2 is the minimum (Node\'s default); remove it',
  ssl_max_protocol_version: 'remove it',
  sslkeylogfile: 'remove it',
  target_session_attrs: 'connect to the primary directly; remove it',
  load_balance_hosts: 'one host is supported; remove it',
  hostaddr: 'put the address in the URL\'s host',
  service: 'put the connection parameters in the URL itself',
  passfile: 'put the password in the URL or in env PGPASSWORD',
  requirepeer: 'remove it',
  tcp_user_timeout: 'remove it',
  keepalives_interval: 'only keepalives and keepalives_idle are supported',
  keepalives_count: 'only keepalives and keepalives_idle are supported',
  min_protocol_version: 'remove it',
  max_protocol_version: 'remove it',
  encoding: 'the gateway always uses UTF8; remove it',
  db: 'put the database in the URL\'s path or in dbname',
});

/** The parameters of the connection policy (TLS, channel binding, auth, GSS), by name. */
export const policyParameterNames: ReadonlySet<string> = new Set(connectionParameters.filter((p) => p.kind === 'policy').map((p) => p.name));

/**
 * True when a URL's query string sets any connection-policy parameter. Used to refuse a
 * `database_url` that would be silently ignored because a `pool` option replaces it.
 */
export function hasPolicyParameters(url: string): boolean {
  try {
    for (const name of new URL(url).searchParams.keys()) if (policyParameterNames.has(name)) return true;
  } catch {
    return false;
  }
  return false;
}
