/**
 * GSS pieces without a KDC: the linux_krb5 preflight diagnostics (each with its fix), the
 * retries of the first token, and the checks of the `gss` option. The real Kerberos runs are in
 * __tests__/integration/connection-kerberos.test.ts.
 */
import path from 'node:path';
import { createConnectionPolicy } from '../../../lib/db/connection/create-connection-policy';
import { GssExchange } from '../../../lib/db/connection/gss/gss-exchange';
import { krb5Preflight } from '../../../lib/db/connection/gss/krb5-preflight';
import { createKrb5Provider } from '../../../lib/db/connection/gss/krb5-provider';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { useTempFiles } from '../support/temp-files';
import { thrown } from '../support/thrown';

const files = useTempFiles('tablegate-krb5-');

describe('krb5 preflight', () => {
  it('asks for an explicit credential cache or client keytab', () => {
    expect(krb5Preflight({})).toEqual([expect.stringMatching(/neither KRB5CCNAME .* nor KRB5_CLIENT_KTNAME .* is set, and the gateway never acquires tickets itself: set KRB5CCNAME=FILE:.*kinit -k -t/)]);
  });

  it('reports a missing credential cache with the kinit that fills it, unless a client keytab is given', () => {
    const missing = path.join(files.dir(), 'no-such-ccache');
    expect(krb5Preflight({ KRB5CCNAME: `FILE:${missing}` })).toEqual([
      expect.stringMatching(new RegExp(`KRB5CCNAME names FILE:${missing}, which does not exist.*KRB5CCNAME=FILE:${missing} kinit -k -t <keytab> <principal>`)),
    ]);
    expect(krb5Preflight({ KRB5CCNAME: missing })).toHaveLength(1); // a bare path is a FILE cache
    const keytab = files.write('client.keytab', 'x');
    expect(krb5Preflight({ KRB5CCNAME: `FILE:${missing}`, KRB5_CLIENT_KTNAME: keytab })).toEqual([]);
    expect(krb5Preflight({ KRB5CCNAME: 'KEYRING:persistent:0' })).toEqual([]); // not checkable from here
    expect(krb5Preflight({ KRB5CCNAME: `FILE:${files.write('ccache', 'x')}` })).toEqual([]);
  });

  it('reports an unreadable client keytab and an unreadable or invalid KRB5_CONFIG', () => {
    expect(krb5Preflight({ KRB5_CLIENT_KTNAME: 'FILE:/nonexistent/client.keytab' })).toEqual([
      expect.stringMatching(/KRB5_CLIENT_KTNAME names \/nonexistent\/client\.keytab, which cannot be read \(ENOENT\)/),
    ]);
    const ccache = files.write('cc', 'x');
    expect(krb5Preflight({ KRB5CCNAME: ccache, KRB5_CONFIG: '/nonexistent/krb5.conf' })).toEqual([
      expect.stringMatching(/KRB5_CONFIG names \/nonexistent\/krb5\.conf, which cannot be read \(ENOENT\); point KRB5_CONFIG at a readable krb5\.conf/),
    ]);
    expect(krb5Preflight({ KRB5CCNAME: ccache, KRB5_CONFIG: files.write('bad.conf', 'hello') })).toEqual([expect.stringMatching(/which is not a krb5\.conf/)]);
    expect(krb5Preflight({ KRB5CCNAME: ccache, KRB5_CONFIG: files.write('krb5.conf', '[libdefaults]\n default_realm = X\n') })).toEqual([]);
  });

  it('makes createGateway-time errors out of the diagnostics and of a missing kerberos package', () => {
    const preflight = thrown(() => createKrb5Provider({}, () => ({})), GatewayConfigError);
    expect(preflight.message).toMatch(/gss_provider=linux_krb5 preflight failed:\n {2}- neither KRB5CCNAME/);
    const noModule = thrown(() => createKrb5Provider({}, () => { throw new Error("Cannot find module 'kerberos'"); }), GatewayConfigError);
    expect(noModule.message).toMatch(/needs the optional `kerberos` package .*apt-get install libkrb5-dev .*npm install-scripts approve kerberos/);
  });
});

describe('GssExchange', () => {
  it('retries the first token gss_connect_retries times with growing delays, then fails naming the target', async () => {
    const delays: number[] = [];
    let starts = 0;
    let retries = 0;
    const exchange = new GssExchange(
      { name: 'callback', start: async () => ((starts++, { step: async () => Promise.reject(new Error('Cannot contact any KDC')) })) },
      'postgres@db',
      'gssapi',
      { retries: 2, baseMs: 150, onRetry: () => void retries++, sleep: async (ms) => void delays.push(ms) },
    );
    await expect(exchange.first()).rejects.toThrow(/GSSAPI \(gss_provider=callback\) could not make a token for postgres@db after 3 attempts: Cannot contact any KDC/);
    expect([starts, retries]).toEqual([3, 2]);
    expect(delays[0]).toBeGreaterThanOrEqual(150);
    expect(delays[0]).toBeLessThan(165);
    expect(delays[1]).toBeGreaterThanOrEqual(300);
    expect(delays[1]).toBeLessThan(330);
  });

  it('succeeds on a retry, and never retries a later step', async () => {
    let attempt = 0;
    const exchange = new GssExchange(
      { name: 'custom', start: async () => ({ step: async (c) => (c === undefined ? (attempt++ === 0 ? Promise.reject(new Error('transient')) : Buffer.from('t1')) : Promise.reject(new Error('bad mutual token'))) }) },
      'postgres@db',
      'gssapi',
      { retries: 2, baseMs: 0, onRetry: () => undefined, sleep: async () => undefined },
    );
    expect((await exchange.first())?.toString()).toBe('t1');
    await expect(exchange.next(Buffer.from('x'))).rejects.toThrow(/rejected the server's token for postgres@db: bad mutual token/);
  });
});

describe('the gss option', () => {
  const url = 'postgres://u@db/app';
  it('must match its provider shape', () => {
    expect(thrown(() => createConnectionPolicy(url, { provider: 'callback' } as never, {}), GatewayConfigError).message).toMatch(/option `gss` must be \{ provider: 'callback', token:/);
    expect(thrown(() => createConnectionPolicy(url, { provider: 'linux_krb5' } as never, {}), GatewayConfigError).message).toMatch(/linux_krb5 needs no option; set gss_provider=linux_krb5 in database_url/);
    expect(createConnectionPolicy(url, { provider: 'callback', token: () => undefined }, {}).settings.gss.provider).toBe('callback');
    expect(createConnectionPolicy(url, { provider: 'custom', createContext: () => ({ step: async () => undefined }) }, {}).settings.gss.provider).toBe('custom');
  });
});
