// A private PgBouncer for the tests and the benchmark (plain CommonJS: global-setup.js and
// bench/pgbouncer.js require it too).
//
// findPgBouncer() -> { path, version, versionNum } or { missing: '<why>' }: the Debian package
// installs /usr/sbin/pgbouncer, which is not on a non-root PATH.
// startPgBouncer(options) -> { port, host, version, rewrite(url), stop() }: a pgbouncer process of
// our own (own config, port, pidfile and log in a temporary directory; the Debian service is not
// touched), in front of one PostgreSQL server, with a wildcard [databases] entry so that every
// per-file test database is reachable through it. As root it runs as the OS user `postgres`
// (pgbouncer refuses to run as root).
//
// Authentication is what a production set-up uses: SCRAM between client and PgBouncer, the app
// role's password in the auth_file, and every other role looked up with auth_query as the
// superuser (`auth_user`), so tests that connect as another role still can.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer', '/usr/local/sbin/pgbouncer'];

/** The installed pgbouncer and its version, or why there is none. */
function findPgBouncer() {
  const fromPath = (process.env.PATH || '').split(path.delimiter).map((d) => path.join(d, 'pgbouncer'));
  const file = [...fromPath, ...CANDIDATES].find((f) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (!file) return { missing: 'pgbouncer is not installed (Debian: apt-get install pgbouncer)' };
  let out;
  try {
    out = execFileSync(file, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    return { missing: `${file} --version failed: ${String(err.message).split('\n')[0]}` };
  }
  const m = /PgBouncer (\d+)\.(\d+)\.(\d+)/.exec(out);
  if (!m) return { missing: `${file} --version printed no version` };
  if (process.getuid?.() === 0 && !osUserExists('postgres')) {
    return { missing: 'running as root and there is no OS user `postgres` to run pgbouncer as (pgbouncer refuses root)' };
  }
  const [major, minor, patch] = m.slice(1).map(Number);
  return { path: file, version: `${major}.${minor}.${patch}`, versionNum: major * 10000 + minor * 100 + patch };
}

/** pgbouncer 1.21 added max_prepared_statements (protocol-level prepared statements in transaction mode). */
const PREPARED_STATEMENTS_SINCE = 12100;

function osUserExists(name) {
  try {
    return fs.readFileSync('/etc/passwd', 'utf8').split('\n').some((line) => line.startsWith(`${name}:`));
  } catch {
    return false;
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** A userlist.txt line: both fields double-quoted, a `"` doubled. */
const userLine = (user, password) => `"${user.replace(/"/g, '""')}" "${password.replace(/"/g, '""')}"`;

/**
 * Starts pgbouncer in front of the server of `adminUrl` (a superuser URL: its user becomes
 * auth_user). Options:
 *   users: [{ user, password }]       more auth_file entries (the app role)
 *   poolMode: 'transaction'           pool_mode
 *   defaultPoolSize: 20               server connections per database and user
 *   maxPreparedStatements: undefined  set only when given (pgbouncer >= 1.21)
 *   settings: {}                      any other [pgbouncer] settings
 */
async function startPgBouncer(adminUrl, options = {}) {
  const found = findPgBouncer();
  if (found.missing) throw new Error(found.missing);
  const server = new URL(adminUrl);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-pgbouncer-'));
  const asRoot = process.getuid?.() === 0;
  const users = [{ user: decodeURIComponent(server.username), password: decodeURIComponent(server.password) }, ...(options.users || [])];
  fs.writeFileSync(path.join(dir, 'userlist.txt'), `${users.map((u) => userLine(u.user, u.password)).join('\n')}\n`, { mode: 0o600 });
  const settings = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    unix_socket_dir: '',
    pidfile: path.join(dir, 'pgbouncer.pid'),
    logfile: path.join(dir, 'pgbouncer.log'),
    auth_type: 'scram-sha-256',
    auth_file: path.join(dir, 'userlist.txt'),
    auth_user: decodeURIComponent(server.username),
    pool_mode: options.poolMode || 'transaction',
    default_pool_size: options.defaultPoolSize ?? 20,
    max_client_conn: 2000,
    // The test server's per-file databases come and go; an idle autodb entry is dropped soon.
    autodb_idle_timeout: 60,
    // JDBC and others send it; node-postgres does not, but a documented set-up should work for both.
    ignore_startup_parameters: 'extra_float_digits',
    ...(options.maxPreparedStatements !== undefined ? { max_prepared_statements: options.maxPreparedStatements } : {}),
    ...(options.settings || {}),
  };
  const ini =
    `[databases]\n* = host=${server.hostname} port=${server.port || 5432}\n\n[pgbouncer]\n` +
    Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'pgbouncer.ini'), ini);
  if (asRoot) execFileSync('chown', ['-R', 'postgres:', dir]);

  // Foreground, so the child is pgbouncer itself (after -u it drops root) and stop() signals it.
  const args = [...(asRoot ? ['-u', 'postgres'] : []), path.join(dir, 'pgbouncer.ini')];
  const child = spawn(found.path, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const logTail = () => {
    try {
      return fs.readFileSync(settings.logfile, 'utf8').split('\n').slice(-15).join('\n');
    } catch {
      return stderr;
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT'); // immediate shutdown
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPort(port, exited, 10000);
  } catch (err) {
    const tail = logTail();
    await stop();
    throw new Error(`pgbouncer did not start: ${err.message}\n${tail}`);
  }
  return {
    host: '127.0.0.1',
    port,
    /** The pgbouncer process (it runs in the foreground, so this is pgbouncer itself). */
    pid: child.pid,
    version: found.version,
    versionNum: found.versionNum,
    dir,
    /** `url` (any database and user on the same server) pointed at this pgbouncer instead. */
    rewrite(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    log: logTail,
    stop,
  };
}

async function waitForPort(port, exited, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let gone = null;
  exited.then((e) => (gone = e));
  while (Date.now() < deadline) {
    if (gone) throw new Error(`pgbouncer exited (code ${gone.code}, signal ${gone.signal})`);
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

module.exports = { findPgBouncer, startPgBouncer, PREPARED_STATEMENTS_SINCE };
