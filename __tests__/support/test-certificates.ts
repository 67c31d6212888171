/**
 * TLS material for the connection-policy tests, made with the openssl CLI in a temp directory:
 * a CA, a server certificate for DNS:localhost only (so verify-full to 127.0.0.1 must fail while
 * verify-ca passes), a client certificate for CN=cert_user (mTLS), and a second, unrelated
 * "rogue" CA with a server certificate for both names (a man in the middle).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCertificates {
  readonly dir: string;
  /** File paths. */
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  /** 0600, as libpq (and tablegate) require of a private key. */
  readonly clientKey: string;
  readonly rogueCaCert: string;
  readonly rogueServerCert: string;
  readonly rogueServerKey: string;
  remove(): void;
}

export function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function makeTestCertificates(): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-certs-'));
  const file = (name: string): string => path.join(dir, name);
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

  const ca = (name: string, cn: string): void => {
    openssl('req', '-x509', ...key, '-keyout', file(`${name}.key`), '-out', file(`${name}.crt`), '-days', '3', '-subj', `/CN=${cn}`,
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  };
  const leaf = (name: string, caName: string, cn: string, extensions: string): void => {
    openssl('req', ...key, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${cn}`);
    fs.writeFileSync(file(`${name}.ext`), extensions);
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file(`${caName}.crt`), '-CAkey', file(`${caName}.key`), '-CAcreateserial',
      '-out', file(`${name}.crt`), '-days', '3', '-extfile', file(`${name}.ext`));
    fs.chmodSync(file(`${name}.key`), 0o600);
  };
  ca('ca', 'tablegate test CA');
  leaf('server', 'ca', 'localhost', 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'ca', 'cert_user', 'extendedKeyUsage=clientAuth\n');
  ca('rogue-ca', 'rogue CA');
  leaf('rogue-server', 'rogue-ca', 'localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  return {
    dir,
    caCert: file('ca.crt'),
    serverCert: file('server.crt'),
    serverKey: file('server.key'),
    clientCert: file('client.crt'),
    clientKey: file('client.key'),
    rogueCaCert: file('rogue-ca.crt'),
    rogueServerCert: file('rogue-server.crt'),
    rogueServerKey: file('rogue-server.key'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
