/**
 * The validated connection policy of one `database_url`: what parse-connection-url produces and
 * everything below it reads. Plain frozen data; secrets (the password, the client key) are
 * non-enumerable so that logging the settings never prints them. See docs/security.md.
 */

/** `sslmode` as written (libpq's words); `verify-ca` and `verify-full` are kinds of `require`. */
export type SslMode = 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';

/** What the server certificate is checked against: nothing, the CA chain, or chain and host name. */
export type ServerVerification = 'none' | 'chain' | 'chain-and-host';

export type ChannelBinding = 'disable' | 'prefer' | 'require';

/** The mechanisms a server can ask for, each governed by one `auth_*` key. */
export const authMechanisms = ['scram', 'md5', 'cleartext', 'kerberos', 'gssapi', 'sspi'] as const;
export type AuthMechanism = (typeof authMechanisms)[number];

export const authModes = ['default', 'scram_only', 'gssapi_only'] as const;
export type AuthMode = (typeof authModes)[number];

export const gssProviderNames = ['linux_krb5', 'callback', 'custom'] as const;
export type GssProviderName = (typeof gssProviderNames)[number];

export interface TlsSettings {
  readonly mode: SslMode;
  /** Whether TLS is attempted at all (false for `disable`, and for Unix sockets). */
  readonly enabled: boolean;
  readonly verification: ServerVerification;
  /** CA bundle (PEM) for `chain` / `chain-and-host`; undefined with `sslrootcert=system` (Node's CA list). */
  readonly ca: string | undefined;
  /** Where the CA bundle came from, for messages and docs: a path, `system`, or the libpq default file. */
  readonly caSource: string | undefined;
  /** Client certificate chain (PEM), with `key`, for mTLS. */
  readonly cert: string | undefined;
  /** Client private key (PEM, decrypted with `sslpassword` when that is given). Non-enumerable. */
  readonly key: string | undefined;
  /** `sslnegotiation`: `postgres` (SSLRequest first) or `direct` (TLS at once, PostgreSQL 17+). */
  readonly negotiation: 'postgres' | 'direct';
}

export interface AuthPolicy {
  readonly mode: AuthMode;
  /** The mechanisms the gateway answers, after the preset and the explicit toggles. */
  readonly allowed: ReadonlySet<AuthMechanism>;
  /** Toggles given explicitly in the URL (they override the preset), for messages. */
  readonly explicit: Readonly<Partial<Record<AuthMechanism, boolean>>>;
  /**
   * scram_only and gssapi_only: a server that lets the gateway in without any authentication
   * exchange (pg_hba `trust`, or `cert` alone) is refused.
   */
  readonly requireExchange: boolean;
}

export interface GssSettings {
  /** Unset: a GSS request from the server fails with a message saying how to configure one. */
  readonly provider: GssProviderName | undefined;
  readonly service: string;
  /** `gss_target`, else `<gss_service>@<host>`. */
  readonly target: string;
  readonly connectRetries: number;
  readonly retryBaseMs: number;
  readonly circuitThreshold: number;
  readonly circuitWindowMs: number;
  readonly circuitCooldownMs: number;
}

export interface ConnectionSettings {
  /** Host name, IP address, or Unix socket directory (starts with `/`). */
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly user: string | undefined;
  /** Non-enumerable. */
  readonly password: string | undefined;
  readonly database: string | undefined;
  readonly applicationName: string | undefined;
  readonly fallbackApplicationName: string | undefined;
  readonly options: string | undefined;
  /** `connect_timeout` in ms (libpq: seconds, at least 2); undefined = the pool's timeout. */
  readonly connectTimeoutMs: number | undefined;
  readonly keepAlive: boolean | undefined;
  readonly keepAliveIdleMs: number | undefined;
  readonly tls: TlsSettings;
  readonly channelBinding: ChannelBinding;
  readonly auth: AuthPolicy;
  readonly gss: GssSettings;
}
