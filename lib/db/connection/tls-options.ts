/**
 * sslmode, sslrootcert, sslcert, sslkey -> the TLS settings, with every file read at start-up, and
 * per connection the options node-postgres hands to tls.connect. Never weaker than libpq's
 * meaning of the word the user wrote (docs/security.md, "Database connection policy"):
 *
 * - `prefer` / `require` without a CA: encrypted, certificate not checked;
 * - with a CA (`sslrootcert`, or ~/.postgresql/root.crt when it exists, as libpq does), any mode
 *   but disable checks the chain; `verify-ca` requires a CA and checks the chain only;
 * - `verify-full` checks the chain and the host name; `sslrootcert=system` requires verify-full.
 */
import { createSecureContext, type ConnectionOptions } from 'node:tls';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import type { ServerVerification, SslMode, TlsSettings } from './connection-settings';

export interface TlsParameters {
  readonly sslmode: SslMode | undefined;
  readonly sslrootcert: string | undefined;
  readonly sslcert: string | undefined;
  readonly sslkey: string | undefined;
  readonly sslpassword: string | undefined;
  readonly sslnegotiation: 'postgres' | 'direct' | undefined;
}

/** `key` is the configuration key the URL came from, for GatewayConfigError. */
export function readTlsSettings(params: TlsParameters, unixSocket: boolean, key: string, home: string = os.homedir()): TlsSettings {
  const fail = (message: string): never => {
    throw new GatewayConfigError(`${key}: ${message}`, key);
  };
  const rootIsSystem = params.sslrootcert === 'system';
  // libpq 16: sslrootcert=system makes verify-full the default and refuses anything weaker.
  const mode: SslMode = params.sslmode ?? (rootIsSystem ? 'verify-full' : 'prefer');
  if (rootIsSystem && mode !== 'verify-full') {
    fail(`sslmode=${mode} may not be used with sslrootcert=system (any public CA would vouch for a host it never saw); use sslmode=verify-full`);
  }
  if ((params.sslcert === undefined) !== (params.sslkey === undefined)) {
    const [given, missing] = params.sslcert === undefined ? ['sslkey', 'sslcert'] : ['sslcert', 'sslkey'];
    fail(`configuration invalid: ${given} is set but ${missing} is not; a client certificate needs both sslcert and sslkey`);
  }
  const negotiation = params.sslnegotiation ?? 'postgres';
  if (negotiation === 'direct' && (mode === 'disable' || mode === 'prefer')) {
    fail(`sslnegotiation=direct needs sslmode=require, verify-ca or verify-full (direct TLS cannot fall back to plain text); sslmode is ${mode}`);
  }
  if (unixSocket && mode !== 'disable' && mode !== 'prefer') {
    fail(`sslmode=${mode}, but the host is a Unix socket directory and PostgreSQL never offers TLS over Unix sockets; use a TCP host or sslmode=disable`);
  }

  const cert = params.sslcert === undefined ? undefined : readPem(params.sslcert, 'sslcert', 'CERTIFICATE', fail);
  let keyPem = params.sslkey === undefined ? undefined : readKey(params.sslkey, fail);
  if (cert !== undefined && keyPem !== undefined) {
    try {
      // Decrypted once here, so no passphrase has to travel with every connection.
      if (params.sslpassword !== undefined) keyPem = createPrivateKey({ key: keyPem, passphrase: params.sslpassword }).export({ type: 'pkcs8', format: 'pem' }).toString();
      createSecureContext({ cert, key: keyPem });
    } catch (err) {
      fail(`sslcert ${params.sslcert} and sslkey ${params.sslkey} cannot be used together (${reason(err)}); the key must be the certificate's, and an encrypted key needs the right sslpassword`);
    }
  }

  let ca: string | undefined;
  let caSource: string | undefined;
  if (rootIsSystem) {
    caSource = 'system';
  } else if (params.sslrootcert !== undefined) {
    ca = readPem(params.sslrootcert, 'sslrootcert', 'CERTIFICATE', fail);
    caSource = params.sslrootcert;
  } else {
    const defaultRoot = path.join(home, '.postgresql', 'root.crt');
    if (mode !== 'disable' && fs.existsSync(defaultRoot)) {
      ca = readPem(defaultRoot, 'sslrootcert (libpq default file)', 'CERTIFICATE', fail);
      caSource = defaultRoot;
    } else if (mode === 'verify-ca' || mode === 'verify-full') {
      fail(`sslmode=${mode} verifies the server certificate, which needs a CA: set sslrootcert=<CA bundle file> (or sslrootcert=system with verify-full); ${defaultRoot} does not exist`);
    }
  }

  const enabled = mode !== 'disable' && !unixSocket;
  const verification: ServerVerification = !enabled || caSource === undefined ? 'none' : mode === 'verify-full' ? 'chain-and-host' : 'chain';
  const settings = { mode, enabled, verification, ca, caSource, cert, negotiation } as TlsSettings;
  hide(settings, 'key', keyPem);
  return Object.freeze(settings);
}

/**
 * A fresh tls.connect options object for one connection, or false for no TLS. Fresh because
 * node-postgres redefines properties of the object it is given (it hides `key`).
 */
export function tlsConnectionOptions(tls: TlsSettings): ConnectionOptions | false {
  if (!tls.enabled) return false;
  const options: ConnectionOptions = { rejectUnauthorized: tls.verification !== 'none' };
  if (tls.ca !== undefined) options.ca = tls.ca;
  // `chain`: the chain is checked against the CA, the name in the certificate is not.
  if (tls.verification === 'chain') options.checkServerIdentity = () => undefined;
  if (tls.cert !== undefined) options.cert = tls.cert;
  // node-postgres copies `key` explicitly (it is non-enumerable so that logs never show it).
  hide(options as Record<string, unknown>, 'key', tls.key);
  return options;
}

function readPem(file: string, name: string, label: string, fail: (m: string) => never): string {
  const text = readFile(file, name, fail);
  if (!text.includes(`-----BEGIN ${label}-----`)) fail(`${name} ${file} is not a PEM file with a ${label.toLowerCase()} (-----BEGIN ${label}-----)`);
  if (label === 'CERTIFICATE') {
    try {
      new X509Certificate(text);
    } catch (err) {
      fail(`${name} ${file} holds no readable certificate (${reason(err)})`);
    }
  }
  return text;
}

/** libpq's rule for the private key: no group or world access (0640 at most when root owns it). */
function readKey(file: string, fail: (m: string) => never): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    return fail(`sslkey ${file} cannot be read (${reason(err)}); give the path of the client's private key file`);
  }
  const euid = process.geteuid?.();
  if (process.platform !== 'win32' && ((stat.uid === euid && (stat.mode & 0o077) !== 0) || (stat.uid === 0 && (stat.mode & 0o037) !== 0))) {
    fail(`sslkey ${file} has group or world access (mode ${(stat.mode & 0o777).toString(8)}); restrict it with chmod 600 (0640 at most when root owns it), as libpq requires`);
  }
  const text = readFile(file, 'sslkey', fail);
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) fail(`sslkey ${file} is not a PEM private key file (-----BEGIN PRIVATE KEY-----)`);
  return text;
}

function readFile(file: string, name: string, fail: (m: string) => never): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    return fail(`${name} ${file} cannot be read (${reason(err)}); paths are relative to the working directory`);
  }
}

function hide(target: object, key: string, value: string | undefined): void {
  if (value === undefined) return;
  Object.defineProperty(target, key, { value, enumerable: false, writable: false, configurable: true });
}

function reason(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string' && e.code.startsWith('E') && e.code.length <= 8) return e.code;
  return typeof e.message === 'string' ? e.message.split('\n')[0]! : String(err);
}
