/**
 * database_url parameters are validated at createGateway, fail closed: unknown names, bad values,
 * half a client certificate, unreadable files, removed presets and contradictions are
 * GatewayConfigErrors that name the parameter and the fix, and never quote the password.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import path from 'node:path';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { parseConnectionUrl, type ParseOptions } from '../../../lib/db/connection/parse-connection-url';
import { connectionParameters } from '../../../lib/db/connection/connection-parameters';
import { useTempFiles } from '../support/temp-files';
import { thrown } from '../support/thrown';

const files = useTempFiles('tablegate-conn-');
const BASE = 'postgres://app:s3cret-pw@db.example.test:5433/appdb';
const home = '/nonexistent-home';
const parse = (query: string, options: ParseOptions = {}) => parseConnectionUrl(`${BASE}${query ? `?${query}` : ''}`, { env: {}, home, ...options });
const error = (query: string, options: ParseOptions = {}) => {
  const e = thrown(() => parse(query, options), GatewayConfigError);
  expect(e.message).not.toContain('s3cret-pw');
  return e.message;
};

let haveOpenssl = true;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  haveOpenssl = false;
  console.log('SKIPPED parse-connection-url "TLS files": needs the openssl command');
}

let caFile = '';
let certFile = '';
let keyFile = '';
beforeAll(() => {
  if (!haveOpenssl) return;
  const dir = files.dir();
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=ca');
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'client.key', '-out', 'client.crt', '-days', '2', '-subj', '/CN=app');
  caFile = path.join(dir, 'ca.crt');
  certFile = path.join(dir, 'client.crt');
  keyFile = path.join(dir, 'client.key');
  chmodSync(keyFile, 0o600);
});

describe('names', () => {
  it('takes the URL parts and the libpq parameters node-postgres honours', () => {
    const s = parse('application_name=shop&fallback_application_name=fb&options=-c%20search_path%3Dapp&client_encoding=UTF8&connect_timeout=1&keepalives=1&keepalives_idle=30&gssencmode=disable');
    expect([s.host, s.port, s.user, s.database]).toEqual(['db.example.test', 5433, 'app', 'appdb']);
    expect(s.password).toBe('s3cret-pw');
    expect(Object.keys(s)).not.toContain('password');
    expect([s.applicationName, s.fallbackApplicationName, s.options]).toEqual(['shop', 'fb', '-c search_path=app']);
    expect(s.connectTimeoutMs).toBe(2000); // libpq: below 2 s counts as 2 s
    expect([s.keepAlive, s.keepAliveIdleMs]).toEqual([true, 30000]);
  });

  it('lets host, port, user, password and dbname parameters override the URL parts', () => {
    const s = parse('host=%2Fvar%2Frun%2Fpostgresql&port=6000&user=other&password=pw2&dbname=db2');
    expect([s.host, s.port, s.user, s.password, s.database]).toEqual(['/var/run/postgresql', 6000, 'other', 'pw2', 'db2']);
    expect(s.tls.enabled).toBe(false); // prefer over a Unix socket: PostgreSQL offers no TLS there
  });

  it('rejects an unknown or misspelled parameter with the nearest valid name', () => {
    expect(error('sslmdoe=require')).toMatch(/unknown parameter `sslmdoe`; did you mean `sslmode`\?/);
    expect(error('chanel_binding=require')).toMatch(/did you mean `channel_binding`/);
    expect(error('auth_scarm=true')).toMatch(/did you mean `auth_scram`/);
    expect(error('totally_unrelated=1')).toMatch(/unknown parameter `totally_unrelated`; the accepted parameters are listed in docs\/configuration\.md/);
  });

  it('names the replacement of libpq and node-postgres parameters it does not support', () => {
    expect(error('ssl=true')).toMatch(/`ssl` is not supported by tablegate: use sslmode=require/);
    expect(error('krbsrvname=pg')).toMatch(/use gss_service/);
    expect(error('require_auth=scram-sha-256')).toMatch(/use auth_mode and the auth_\* toggles/);
    expect(error('statement_timeout=10')).toMatch(/statement_timeout_ms/);
  });

  it('refuses a parameter given twice', () => {
    expect(error('sslmode=disable&sslmode=require')).toMatch(/`sslmode` is given twice/);
  });

  it('lists only parameters it parses', () => {
    // Every row of the table is accepted with a valid value (the docs test checks the other way).
    const sample: Record<string, string> = {
      sslmode: 'require', sslrootcert: '', sslcert: '', sslkey: '', sslpassword: '', sslnegotiation: 'postgres', channel_binding: 'prefer',
      auth_mode: 'default', gss_provider: '', gss_service: 'postgres', gss_target: 'postgres@db', host: 'db', port: '5432', user: 'u',
      password: 'p', dbname: 'd', application_name: 'a', fallback_application_name: 'f', options: '-c x=1', client_encoding: 'utf8',
      connect_timeout: '5', keepalives: '0', keepalives_idle: '1', gssencmode: 'disable', gss_connect_retries: '1', gss_retry_base_ms: '10',
      gss_circuit_threshold: '2', gss_circuit_window_ms: '100', gss_circuit_cooldown_ms: '100',
    };
    for (const p of connectionParameters) {
      if (p.name.startsWith('auth_') && p.name !== 'auth_mode') sample[p.name] = 'true';
      const value = sample[p.name];
      expect([p.name, value !== undefined]).toEqual([p.name, true]);
      if (value === '') continue; // files and providers: tested below
      expect(() => parse(`${p.name}=${encodeURIComponent(value!)}`)).not.toThrow();
    }
  });
});

describe('values', () => {
  it('names the parameter and the accepted values', () => {
    expect(error('sslmode=allow')).toMatch(/parameter `sslmode` must be one of disable, prefer, require, verify-ca, verify-full \(got "allow"\)/);
    expect(error('channel_binding=maybe')).toMatch(/`channel_binding` must be one of disable, prefer, require/);
    expect(error('gss_provider=heimdal')).toMatch(/`gss_provider` must be one of linux_krb5, callback, custom/);
    expect(error('gss_connect_retries=-1')).toMatch(/`gss_connect_retries` must be an integer from 0 to 10/);
    expect(error('gss_circuit_threshold=0')).toMatch(/`gss_circuit_threshold` must be an integer from 1/);
    expect(error('port=99999')).toMatch(/`port` must be an integer from 1 to 65535/);
    expect(error('client_encoding=LATIN1')).toMatch(/`client_encoding` must be UTF8/);
    expect(error('gssencmode=require')).toMatch(/`gssencmode` must be one of disable/);
    expect(error('keepalives=2')).toMatch(/`keepalives` must be 1 or 0/);
  });

  it('accepts true/false/1/0/yes/no/on/off for booleans, in any case', () => {
    for (const [word, value] of [['true', true], ['FALSE', false], ['1', true], ['0', false], ['yes', true], ['No', false], ['on', true], ['off', false]] as const) {
      expect(parse(`auth_md5=${word}`).auth.allowed.has('md5')).toBe(value);
    }
    expect(error('auth_md5=maybe')).toMatch(/`auth_md5` must be a boolean: true, false, 1, 0, yes, no, on or off \(got "maybe"\)/);
  });

  it('refuses auth_mode=compat, removed in 2.0, naming default as its successor', () => {
    expect(error('auth_mode=compat')).toMatch(/auth_mode=compat was removed in 2\.0; use auth_mode=default, its successor/);
  });

  it('has the documented defaults', () => {
    const s = parse('');
    expect(s.tls).toMatchObject({ mode: 'prefer', enabled: true, verification: 'none', negotiation: 'postgres' });
    expect(s.channelBinding).toBe('prefer');
    expect(s.auth.mode).toBe('default');
    expect(s.gss).toEqual({ provider: undefined, service: 'postgres', target: 'postgres@db.example.test', connectRetries: 2, retryBaseMs: 150, circuitThreshold: 8, circuitWindowMs: 30000, circuitCooldownMs: 15000 });
    expect(parse('gss_service=pg').gss.target).toBe('pg@db.example.test');
    expect(parse('gss_target=postgres@other.example').gss.target).toBe('postgres@other.example');
    expect(error('gss_target=postgres')).toMatch(/`gss_target` must be a host-based service name service@host/);
  });

  it('applies libpq environment variables where the URL is silent, naming them in errors', () => {
    expect(parse('', { env: { PGSSLMODE: 'disable' } }).tls.mode).toBe('disable');
    expect(parse('sslmode=require', { env: { PGSSLMODE: 'disable' } }).tls.mode).toBe('require');
    expect(parse('', { env: { PGCHANNELBINDING: 'disable' } }).channelBinding).toBe('disable');
    expect(error('', { env: { PGSSLMODE: 'bogus' } })).toMatch(/env PGSSLMODE \(for `sslmode`\) must be one of/);
  });
});

(haveOpenssl ? describe : describe.skip)('TLS files', () => {
  it('reads sslrootcert, sslcert and sslkey at start-up', () => {
    const s = parse(`sslmode=verify-full&sslrootcert=${caFile}&sslcert=${certFile}&sslkey=${keyFile}`);
    expect(s.tls).toMatchObject({ verification: 'chain-and-host', caSource: caFile });
    expect(s.tls.ca).toContain('BEGIN CERTIFICATE');
    expect(s.tls.key).toContain('PRIVATE KEY');
    expect(Object.keys(s.tls)).not.toContain('key');
  });

  it('says what each sslmode checks', () => {
    expect(parse('sslmode=disable').tls).toMatchObject({ enabled: false, verification: 'none' });
    expect(parse('sslmode=require').tls.verification).toBe('none');
    expect(parse(`sslmode=require&sslrootcert=${caFile}`).tls.verification).toBe('chain');
    expect(parse(`sslmode=prefer&sslrootcert=${caFile}`).tls.verification).toBe('chain');
    expect(parse(`sslmode=verify-ca&sslrootcert=${caFile}`).tls.verification).toBe('chain');
    expect(parse(`sslmode=verify-full&sslrootcert=${caFile}`).tls.verification).toBe('chain-and-host');
    expect(parse('sslrootcert=system').tls).toMatchObject({ mode: 'verify-full', verification: 'chain-and-host', ca: undefined, caSource: 'system' });
  });

  it('uses ~/.postgresql/root.crt when it exists, as libpq does', () => {
    const dir = files.dir();
    execFileSync('mkdir', ['-p', path.join(dir, 'home', '.postgresql')]);
    execFileSync('cp', [caFile, path.join(dir, 'home', '.postgresql', 'root.crt')]);
    expect(parse('sslmode=require', { home: path.join(dir, 'home') }).tls).toMatchObject({ verification: 'chain', caSource: path.join(dir, 'home', '.postgresql', 'root.crt') });
  });

  it('needs a CA for verify-ca and verify-full, and verify-full for sslrootcert=system', () => {
    expect(error('sslmode=verify-ca')).toMatch(/sslmode=verify-ca verifies the server certificate, which needs a CA: set sslrootcert=/);
    expect(error('sslmode=verify-full')).toMatch(/needs a CA/);
    expect(error('sslmode=require&sslrootcert=system')).toMatch(/sslmode=require may not be used with sslrootcert=system.*use sslmode=verify-full/);
  });

  it('refuses sslcert without sslkey and sslkey without sslcert (configuration invalid)', () => {
    expect(error(`sslcert=${certFile}`)).toMatch(/configuration invalid: sslcert is set but sslkey is not; a client certificate needs both sslcert and sslkey/);
    expect(error(`sslkey=${keyFile}`)).toMatch(/configuration invalid: sslkey is set but sslcert is not/);
  });

  it('names an unreadable or wrong file', () => {
    expect(error('sslrootcert=/nonexistent/ca.pem')).toMatch(/sslrootcert \/nonexistent\/ca\.pem cannot be read \(ENOENT\)/);
    expect(error(`sslrootcert=${keyFile}`)).toMatch(/is not a PEM file with a certificate/);
    expect(error(`sslcert=${certFile}&sslkey=${caFile}`)).toMatch(/sslkey .*ca\.crt.*(group or world access|not a PEM private key)/);
    const otherKey = files.write('other.key', execFileSync('openssl', ['genpkey', '-algorithm', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'], { encoding: 'utf8' }));
    chmodSync(otherKey, 0o600);
    expect(error(`sslcert=${certFile}&sslkey=${otherKey}`)).toMatch(/sslcert .* and sslkey .* cannot be used together/);
  });

  it('refuses a private key others can read, as libpq does', () => {
    const loose = files.write('loose.key', execFileSync('cat', [keyFile], { encoding: 'utf8' }));
    chmodSync(loose, 0o644);
    expect(error(`sslcert=${certFile}&sslkey=${loose}`)).toMatch(/sslkey .*loose\.key has group or world access \(mode 644\); restrict it with chmod 600/);
  });

  it('decrypts an encrypted key with sslpassword, and says when it is missing or wrong', () => {
    const encrypted = path.join(files.dir(), 'encrypted.key');
    execFileSync('openssl', ['pkey', '-in', keyFile, '-out', encrypted, '-aes256', '-passout', 'pass:key-pass']);
    chmodSync(encrypted, 0o600);
    const s = parse(`sslcert=${certFile}&sslkey=${encrypted}&sslpassword=key-pass`);
    expect(s.tls.key).toMatch(/BEGIN PRIVATE KEY/);
    const message = error(`sslcert=${certFile}&sslkey=${encrypted}&sslpassword=wrong-pass`);
    expect(message).toMatch(/cannot be used together.*sslpassword/);
    expect(message).not.toContain('wrong-pass');
  });

  it('refuses TLS modes that cannot hold', () => {
    expect(error('sslnegotiation=direct')).toMatch(/sslnegotiation=direct needs sslmode=require, verify-ca or verify-full/);
    expect(error('host=%2Ftmp&sslmode=require')).toMatch(/Unix socket directory and PostgreSQL never offers TLS over Unix sockets/);
  });
});

describe('contradictions', () => {
  it('channel_binding=require needs TLS and SCRAM', () => {
    expect(error('sslmode=disable&channel_binding=require')).toMatch(/channel_binding=require needs TLS, but sslmode is disable/);
    expect(error('auth_scram=false&channel_binding=require')).toMatch(/channel_binding=require works only with SCRAM/);
  });

  it('gssapi_only needs a provider; callback and custom need the gss option, and it must agree', () => {
    expect(error('auth_mode=gssapi_only')).toMatch(/auth_mode=gssapi_only needs a GSS provider: set gss_provider=linux_krb5/);
    expect(error('gss_provider=callback')).toMatch(/gss_provider=callback needs the gss option/);
    expect(error('gss_provider=custom')).toMatch(/gss_provider=custom needs the gss option/);
    expect(error('gss_provider=linux_krb5', { gssOptionProvider: 'callback' })).toMatch(/gss_provider=linux_krb5, but the gss option is for provider callback/);
    expect(parse('auth_mode=gssapi_only', { gssOptionProvider: 'callback' }).gss.provider).toBe('callback');
  });

  it('refuses a policy that allows nothing', () => {
    expect(error('auth_mode=scram_only&auth_scram=false')).toMatch(/allows no authentication mechanism at all/);
  });
});
