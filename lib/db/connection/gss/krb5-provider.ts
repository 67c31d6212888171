/**
 * gss_provider=linux_krb5: GSSAPI through the system's MIT Kerberos library, by way of the
 * optional `kerberos` package (a native addon built against libkrb5; docs/security.md lists the
 * system packages). In: the environment, checked by krb5-preflight at start-up. Out: a provider
 * whose contexts use the Kerberos V5 mechanism (SPNEGO for an SSPI request), with mutual
 * authentication. Never: acquires tickets; it uses the credential cache or client keytab it is given.
 */
import { GatewayConfigError } from '../../../errors/gateway-config-error';
import type { GssProvider } from './gss-provider';
import { krb5Preflight } from './krb5-preflight';

/** What tablegate uses of the `kerberos` package (typed here: it is an optional peer dependency). */
interface KerberosBinding {
  initializeClient(service: string, options: { mechOID?: number; gssFlag?: number }): Promise<KerberosClient>;
  readonly GSS_MECH_OID_KRB5: number;
  readonly GSS_MECH_OID_SPNEGO: number;
  readonly GSS_C_MUTUAL_FLAG: number;
  readonly GSS_C_SEQUENCE_FLAG: number;
}
interface KerberosClient {
  /** The base64 token to send; null (or empty) when there is nothing to send. */
  step(challenge: string): Promise<string | null>;
  readonly contextComplete: boolean;
}

export function createKrb5Provider(env: NodeJS.ProcessEnv, load: () => unknown = () => require('kerberos')): GssProvider {
  if (process.platform !== 'linux') {
    throw new GatewayConfigError(`database_url: gss_provider=linux_krb5 runs on Linux only (this is ${process.platform}); use gss_provider=callback or custom with the gss option`, 'databaseUrl');
  }
  let kerberos: KerberosBinding;
  try {
    kerberos = load() as KerberosBinding;
  } catch (err) {
    throw new GatewayConfigError(
      `database_url: gss_provider=linux_krb5 needs the optional \`kerberos\` package built against the system Kerberos library, which could not be loaded (${(err instanceof Error ? err.message : String(err)).split('\n')[0]}); ` +
        'install the build packages (Debian: apt-get install libkrb5-dev python3 make g++), allow its install script (npm 11: npm install-scripts approve kerberos), then npm install kerberos (or npm rebuild kerberos)',
      'databaseUrl',
    );
  }
  const problems = krb5Preflight(env);
  if (problems.length > 0) {
    throw new GatewayConfigError(`database_url: gss_provider=linux_krb5 preflight failed:\n  - ${problems.join('\n  - ')}`, 'databaseUrl');
  }
  return {
    name: 'linux_krb5',
    start: async (target, mechanism) => {
      const client = await kerberos.initializeClient(target, {
        mechOID: mechanism === 'sspi' ? kerberos.GSS_MECH_OID_SPNEGO : kerberos.GSS_MECH_OID_KRB5,
        // libpq asks for mutual authentication too: the server proves it holds the service key.
        gssFlag: kerberos.GSS_C_MUTUAL_FLAG | kerberos.GSS_C_SEQUENCE_FLAG,
      });
      return {
        step: async (challenge) => {
          const response = await client.step(challenge === undefined ? '' : Buffer.from(challenge).toString('base64'));
          return response ? Buffer.from(response, 'base64') : undefined;
        },
        get complete() {
          return client.contextComplete;
        },
      };
    },
  };
}
