/**
 * `database_url` -> ConnectionSettings, once, when createGateway runs. Every query parameter is
 * checked against connection-parameters.ts: an unknown one is an error with the nearest valid
 * name, a bad value names the parameter and the accepted values, files are read now (tls-options),
 * and contradictions (channel_binding=require without TLS, gssapi_only without a provider, ...)
 * are refused. Never: echoes the password, passes an unchecked parameter on to node-postgres.
 */
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { nearestName } from '../../errors/nearest-name';
import { describeAllowed, resolveAuthPolicy } from './auth-policy';
import { connectionParameters, unsupportedParameters } from './connection-parameters';
import {
  authMechanisms,
  authModes,
  gssProviderNames,
  type AuthMechanism,
  type AuthMode,
  type ChannelBinding,
  type ConnectionSettings,
  type GssProviderName,
  type GssSettings,
  type SslMode,
} from './connection-settings';
import { readTlsSettings } from './tls-options';

const MAX_INT4 = 2147483647;
const known = new Map(connectionParameters.map((p) => [p.name, p]));

export interface ParseOptions {
  /** The provider of the `gss` option, when given. */
  readonly gssOptionProvider?: 'callback' | 'custom';
  readonly env?: NodeJS.ProcessEnv;
  /** Home directory for libpq's default ~/.postgresql/root.crt. */
  readonly home?: string;
}

export function parseConnectionUrl(databaseUrl: string, options: ParseOptions = {}): ConnectionSettings {
  const env = options.env ?? process.env;
  const fail = (message: string): never => {
    throw new GatewayConfigError(`database_url: ${message}`, 'databaseUrl');
  };
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    // The URL carries the password: describe it, never quote it.
    return fail('is not a valid postgres:// URL');
  }

  const given = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    if (given.has(name)) fail(`parameter \`${name}\` is given twice; give it once`);
    if (!known.has(name)) {
      const hint = unsupportedParameters[name];
      if (hint !== undefined) fail(`parameter \`${name}\` is not supported by tablegate: ${hint}`);
      const guess = nearestName(name, known.keys());
      fail(`unknown parameter \`${name}\`; ${guess !== undefined ? `did you mean \`${guess}\`?` : 'the accepted parameters are listed in docs/configuration.md'}`);
    }
    given.set(name, value);
  }
  // libpq's environment variables apply where the URL is silent, as they do for psql.
  const raw = (name: string): string | undefined => {
    if (given.has(name)) return given.get(name);
    const envName = known.get(name)?.env;
    const value = envName === undefined ? undefined : env[envName];
    return value === undefined || value === '' ? undefined : value;
  };
  const where = (name: string): string => (given.has(name) ? `parameter \`${name}\`` : `env ${known.get(name)?.env ?? name} (for \`${name}\`)`);
  const oneOf = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
    const value = raw(name);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) fail(`${where(name)} must be one of ${allowed.join(', ')} (got ${show(value)})`);
    return value as T;
  };
  const bool = (name: string): boolean | undefined => {
    const value = raw(name);
    if (value === undefined) return undefined;
    const parsed = booleans[value.toLowerCase()];
    if (parsed === undefined) fail(`${where(name)} must be a boolean: true, false, 1, 0, yes, no, on or off (got ${show(value)})`);
    return parsed;
  };
  const int = (name: string, min: number, max: number): number | undefined => {
    const value = raw(name);
    if (value === undefined) return undefined;
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) fail(`${where(name)} must be an integer from ${min} to ${max} (got ${show(value)})`);
    return n;
  };
  const text = (name: string): string | undefined => raw(name);

  if (raw('auth_mode') === 'compat') {
    fail('auth_mode=compat was removed in 2.0; use auth_mode=default, its successor (also what applies when auth_mode is not given)');
  }
  const clientEncoding = text('client_encoding');
  if (clientEncoding !== undefined && !/^utf-?8$/i.test(clientEncoding)) fail(`parameter \`client_encoding\` must be UTF8: the gateway reads and writes JSON as UTF-8 (got ${show(clientEncoding)})`);
  oneOf('gssencmode', ['disable'] as const);

  const host = text('host') ?? (url.hostname === '' ? undefined : decodeURIComponent(url.hostname).replace(/^\[(.*)\]$/, '$1'));
  const unixSocket = host !== undefined && host.startsWith('/');
  const port = int('port', 1, 65535) ?? (url.port === '' ? undefined : Number(url.port));

  const tls = readTlsSettings(
    {
      sslmode: oneOf<SslMode>('sslmode', ['disable', 'prefer', 'require', 'verify-ca', 'verify-full']),
      sslrootcert: text('sslrootcert'),
      sslcert: text('sslcert'),
      sslkey: text('sslkey'),
      sslpassword: text('sslpassword'),
      sslnegotiation: oneOf('sslnegotiation', ['postgres', 'direct'] as const),
    },
    unixSocket,
    'database_url',
    options.home,
  );
  const channelBinding = oneOf<ChannelBinding>('channel_binding', ['disable', 'prefer', 'require']) ?? 'prefer';

  const mode = oneOf<AuthMode>('auth_mode', authModes) ?? 'default';
  const toggles: Partial<Record<AuthMechanism, boolean>> = {};
  for (const mechanism of authMechanisms) {
    const value = bool(`auth_${mechanism}`);
    if (value !== undefined) toggles[mechanism] = value;
  }
  const auth = resolveAuthPolicy(mode, toggles);
  if (auth.allowed.size === 0) fail(`auth_mode=${mode} with these auth_* toggles allows no authentication mechanism at all; allow at least one`);

  const gss = gssSettings(oneOf<GssProviderName>('gss_provider', gssProviderNames), options.gssOptionProvider, text, int, host ?? env['PGHOST'] ?? 'localhost', fail);

  if (channelBinding === 'require') {
    if (!tls.enabled) fail(`channel_binding=require needs TLS, but sslmode is ${tls.mode}${unixSocket ? ' over a Unix socket' : ''}; use sslmode=require or verify-full`);
    if (!auth.allowed.has('scram')) fail(`channel_binding=require works only with SCRAM (SCRAM-SHA-256-PLUS), which the auth policy does not allow (allowed: ${describeAllowed(auth)})`);
  }
  if (mode === 'gssapi_only' && gss.provider === undefined) {
    fail('auth_mode=gssapi_only needs a GSS provider: set gss_provider=linux_krb5 (system Kerberos), or pass the gss option (provider callback or custom)');
  }

  const user = text('user') ?? (url.username === '' ? undefined : decodeURIComponent(url.username));
  const database = text('dbname') ?? (url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : undefined);
  const connectTimeout = int('connect_timeout', 0, MAX_INT4 / 1000);
  const keepalives = raw('keepalives');
  if (keepalives !== undefined && keepalives !== '0' && keepalives !== '1') fail(`parameter \`keepalives\` must be 1 or 0 (got ${show(keepalives)})`);
  const keepAliveIdle = int('keepalives_idle', 0, MAX_INT4 / 1000);

  const settings = {
    host,
    port,
    user,
    database,
    applicationName: text('application_name'),
    fallbackApplicationName: text('fallback_application_name'),
    options: text('options'),
    // libpq: "a value of less than 2 is treated as 2"; 0 means no timeout of its own.
    connectTimeoutMs: connectTimeout === undefined || connectTimeout === 0 ? undefined : Math.max(2, connectTimeout) * 1000,
    keepAlive: keepalives === undefined ? undefined : keepalives === '1',
    keepAliveIdleMs: keepAliveIdle === undefined ? undefined : keepAliveIdle * 1000,
    tls,
    channelBinding,
    auth,
    gss,
  } as ConnectionSettings;
  const password = text('password') ?? (url.password === '' ? undefined : decodeURIComponent(url.password));
  Object.defineProperty(settings, 'password', { value: password, enumerable: false });
  return Object.freeze(settings);
}

function gssSettings(
  fromUrl: GssProviderName | undefined,
  fromOption: 'callback' | 'custom' | undefined,
  text: (name: string) => string | undefined,
  int: (name: string, min: number, max: number) => number | undefined,
  host: string,
  fail: (message: string) => never,
): GssSettings {
  if (fromOption !== undefined && fromUrl !== undefined && fromUrl !== fromOption) {
    fail(`gss_provider=${fromUrl}, but the gss option is for provider ${fromOption}; make them agree (or drop gss_provider from the URL)`);
  }
  if ((fromUrl === 'callback' || fromUrl === 'custom') && fromOption === undefined) {
    fail(fromUrl === 'callback'
      ? "gss_provider=callback needs the gss option: createGateway({ gss: { provider: 'callback', token: async (target, challenge) => response } })"
      : "gss_provider=custom needs the gss option: createGateway({ gss: { provider: 'custom', createContext: (target, mechanism) => context } })");
  }
  const service = text('gss_service') ?? 'postgres';
  if (!/^[^@\s/]+$/.test(service)) fail(`parameter \`gss_service\` must be a Kerberos service name such as postgres, without @, / or spaces (got ${show(service)})`);
  const target = text('gss_target') ?? `${service}@${host}`;
  if (!/^[^@\s]+@[^@\s]+$/.test(target)) fail(`parameter \`gss_target\` must be a host-based service name service@host, e.g. postgres@db.example.com (got ${show(target)})`);
  return Object.freeze({
    provider: fromUrl ?? fromOption,
    service,
    target,
    connectRetries: int('gss_connect_retries', 0, 10) ?? 2,
    retryBaseMs: int('gss_retry_base_ms', 0, 60000) ?? 150,
    circuitThreshold: int('gss_circuit_threshold', 1, 1000000) ?? 8,
    circuitWindowMs: int('gss_circuit_window_ms', 1, MAX_INT4) ?? 30000,
    circuitCooldownMs: int('gss_circuit_cooldown_ms', 1, MAX_INT4) ?? 15000,
  });
}

const booleans: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false, yes: true, no: false, on: true, off: false };

function show(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
}
