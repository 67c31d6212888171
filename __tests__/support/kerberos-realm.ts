/**
 * A real MIT Kerberos realm for the GSSAPI tests: its own krb5.conf and kdc.conf in a temp dir, a
 * database made with kdb5_util, principals and keytabs from kadmin.local, a krb5kdc on a free
 * loopback port (stoppable, to test an unreachable KDC), and credential caches filled with
 * `kinit -k -t`. Nothing touches the system's /etc/krb5.conf.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../lib/cli/free-port';
import { isProgram } from './skips';

export const REALM = 'TABLEGATE.TEST';

export interface KerberosRealm {
  readonly dir: string;
  /** For KRB5_CONFIG. */
  readonly krb5Config: string;
  readonly serverKeytab: Buffer;
  readonly clientKeytab: string;
  /** A new credential cache file holding only the client's TGT (no service tickets yet). */
  freshCcache(): string;
  startKdc(): Promise<void>;
  stopKdc(): Promise<void>;
  remove(): Promise<void>;
}

const tools = ['krb5kdc', 'kdb5_util', 'kadmin.local', 'kinit'];

/** The Kerberos programs that are missing (Debian: krb5-kdc, krb5-admin-server, krb5-user). */
export function missingKerberosTools(): string[] {
  const dirs = (process.env['PATH'] ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin']);
  return tools.filter((tool) => !dirs.some((d) => isProgram(path.join(d, tool))));
}


/** `service` (e.g. postgres/localhost) and `client` principals, without the realm. */
export async function startKerberosRealm(principals: { service: string; client: string }): Promise<KerberosRealm> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-krb5-'));
  // The PostgreSQL server (another OS user when we are root) reads krb5.conf from here too.
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const file = (name: string): string => path.join(dir, name);
  fs.writeFileSync(
    file('krb5.conf'),
    `[libdefaults]
  default_realm = ${REALM}
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
  dns_canonicalize_hostname = false
  udp_preference_limit = 1
  kdc_timeout = 1000
  max_retries = 1
[realms]
  ${REALM} = {
    kdc = 127.0.0.1:${port}
  }
`,
  );
  fs.writeFileSync(
    file('kdc.conf'),
    `[kdcdefaults]
  kdc_ports = ${port}
  kdc_tcp_ports = ${port}
[realms]
  ${REALM} = {
    database_name = ${file('principal')}
    key_stash_file = ${file('stash')}
    acl_file = ${file('kadm5.acl')}
  }
[logging]
  kdc = FILE:${file('kdc.log')}
`,
  );
  const env = { ...process.env, KRB5_CONFIG: file('krb5.conf'), KRB5_KDC_PROFILE: file('kdc.conf') };
  const run = (tool: string, args: string[]): void => void execFileSync(tool, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  run('kdb5_util', ['create', '-s', '-r', REALM, '-P', 'tablegate-master-key']);
  for (const p of [principals.service, principals.client]) run('kadmin.local', ['-q', `addprinc -randkey ${p}`]);
  run('kadmin.local', ['-q', `ktadd -k ${file('server.keytab')} ${principals.service}`]);
  run('kadmin.local', ['-q', `ktadd -k ${file('client.keytab')} ${principals.client}`]);

  let kdc: ChildProcess | undefined;
  const startKdc = async (): Promise<void> => {
    if (kdc) return;
    kdc = spawn('krb5kdc', ['-n'], { env, stdio: 'ignore' });
    const started = kdc;
    started.once('exit', () => {
      if (kdc === started) kdc = undefined;
    });
    const deadline = Date.now() + 10000;
    while (!(await accepts(port))) {
      if (Date.now() > deadline || kdc === undefined) throw new Error(`krb5kdc did not start on 127.0.0.1:${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stopKdc = async (): Promise<void> => {
    const running = kdc;
    if (!running) return;
    const gone = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    await gone;
    kdc = undefined;
  };
  await startKdc();
  const pristine = file('pristine.ccache');
  run('kinit', ['-k', '-t', file('client.keytab'), '-c', `FILE:${pristine}`, `${principals.client}@${REALM}`]);
  let caches = 0;
  const stopOnExit = (): void => void kdc?.kill('SIGKILL');
  process.on('exit', stopOnExit);
  return {
    dir,
    krb5Config: file('krb5.conf'),
    serverKeytab: fs.readFileSync(file('server.keytab')),
    clientKeytab: file('client.keytab'),
    freshCcache: () => {
      const copy = file(`ccache-${++caches}`);
      fs.copyFileSync(pristine, copy);
      return copy;
    },
    startKdc,
    stopKdc,
    remove: async () => {
      process.removeListener('exit', stopOnExit);
      await stopKdc();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Sets (or, with undefined, removes) an environment variable for this test file's code AND for
 * native code: jest hands each test file a copy of process.env, while the Kerberos library reads
 * the real environment of the process (getenv). vm.runInThisContext reaches the real `process`.
 */
export function setNativeEnv(name: string, value: string | undefined): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const real = (require('node:vm') as typeof import('node:vm')).runInThisContext('process') as NodeJS.Process;
  for (const env of [process.env, real.env]) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
}
