// Scaffolding shared by the benchmarks (run.js, relations.js, writes.js, rpc.js): which build of
// lib/ to load, the PostgreSQL server, the fixture database and its RLS-bound role, server child
// processes that report their CPU time, the pieces every tablegate server and hand-written
// baseline server is made of, and small helpers. Each benchmark keeps its own fixture schema,
// SQL and load shape.
'use strict';
const { execFile, fork } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/**
 * The build of lib/ to measure: dist/cjs, or TABLEGATE_DIST (e.g. an older commit built with
 * `npx tsc -p tsconfig.build.json --outDir node_modules/.cache/tg-old`; the directory must be
 * inside the repository so that its dependencies resolve).
 */
const DIST = path.resolve(process.env.TABLEGATE_DIST || path.join(__dirname, '..', 'dist', 'cjs'));

/**
 * A second build of lib/ to measure in the same run as DIST (TABLEGATE_DIST_B, same rules as
 * TABLEGATE_DIST), or null. On a shared machine the load changes from minute to minute, so a
 * before/after comparison is only fair when both builds face the same baseline in one run; the
 * benchmarks that support it add a server `tablegate-b` running this build.
 */
const DIST_B = process.env.TABLEGATE_DIST_B ? path.resolve(process.env.TABLEGATE_DIST_B) : null;

function envNumber(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}, got ${JSON.stringify(raw)}`);
  return n;
}

/** An embedded PostgreSQL, or the superuser URL in TABLEGATE_BENCH_DATABASE_URL. */
async function startDatabase() {
  if (process.env.TABLEGATE_BENCH_DATABASE_URL) {
    return { adminUrl: process.env.TABLEGATE_BENCH_DATABASE_URL, stop: async () => undefined, embedded: false };
  }
  const { startEmbeddedPostgres } = require(path.join(DIST, 'cli', 'embedded-postgres.js'));
  const server = await startEmbeddedPostgres({ onLog: () => undefined });
  return { adminUrl: server.adminUrl, stop: () => server.stop(), embedded: true };
}

/** `url` with another database name and, optionally, other credentials. */
function withDatabase(url, database, user, password) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  if (user) {
    u.username = user;
    u.password = password;
  }
  return u.toString();
}

/**
 * The end of every fixture that holds tenant rows: row-level security enabled and forced with the
 * tenant policy the gateway's context statement serves, read access for `role`, and ANALYZE.
 */
function tenantTableSql(table, database, role) {
  return `
      ALTER TABLE ${SCHEMA}.${table} ENABLE ROW LEVEL SECURITY;
      ALTER TABLE ${SCHEMA}.${table} FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON ${SCHEMA}.${table}
        USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
      GRANT CONNECT ON DATABASE ${database} TO ${role};
      GRANT USAGE ON SCHEMA ${SCHEMA} TO ${role};
      GRANT SELECT ON ${SCHEMA}.${table} TO ${role};
      ANALYZE ${SCHEMA}.${table};`;
}

/**
 * (Re)creates `database` and a login role for the servers that row-level security applies to
 * (NOSUPERUSER NOBYPASSRLS), with a fresh random password. The caller creates the schema in it
 * (as the superuser, through `adminDbUrl`) and grants the role what it needs.
 */
async function createFixtureDatabase(adminUrl, database, role) {
  const { Client } = require('pg');
  const password = crypto.randomBytes(18).toString('hex');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${database}`);
    const exists = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
    await admin.query(`${exists.rowCount ? 'ALTER' : 'CREATE'} ROLE ${role} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD '${password}'`);
  } finally {
    await admin.end();
  }
  return { adminDbUrl: withDatabase(adminUrl, database), appUrl: withDatabase(adminUrl, database, role, password) };
}

async function dropFixtureDatabase(adminUrl, database, role) {
  const { Client } = require('pg');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
  } finally {
    await admin.end();
  }
}

/**
 * The body of a server child process: `starters[kind](app, config)` mounts a server on an Express
 * app and returns its close function. Reports `{ port }` when listening, answers 'cpu' with its
 * CPU usage, and exits normally on 'stop' (so that --cpu-prof writes its profile).
 */
async function serverMain(kind, starters) {
  const express = require('express');
  const app = express();
  const config = await new Promise((resolve) => process.once('message', resolve));
  const close = await starters[kind](app, config);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const allocations = process.env.BENCH_ALLOC_PROF ? await startAllocationSampling() : undefined;
  process.on('message', async (msg) => {
    if (msg === 'cpu') return void process.send({ cpu: process.cpuUsage() });
    if (msg !== 'stop') return;
    if (allocations) await allocations.write(path.join(process.env.BENCH_ALLOC_PROF, `${kind}-${Date.now()}.heapprofile`));
    server.closeAllConnections?.();
    server.close();
    await close().catch(() => undefined);
    process.exit(0);
  });
  process.send({ port: server.address().port });
}

/**
 * BENCH_ALLOC_PROF=<dir>: V8's sampling heap profiler with the objects the garbage collector
 * already freed kept in the profile (what `--heap-prof` leaves out), so the profile shows where a
 * request's garbage is allocated. Open the .heapprofile in Chrome DevTools (Memory tab).
 */
async function startAllocationSampling() {
  const inspector = require('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: process.env.BENCH_ALLOC_LIVE !== '1', includeObjectsCollectedByMinorGC: process.env.BENCH_ALLOC_LIVE !== '1' });
  return {
    async write(file) {
      const { profile } = await post('HeapProfiler.stopSampling');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(profile));
    },
  };
}

/**
 * Forks `script --server kind` (which calls serverMain) and resolves when it listens, with its
 * base URL, its CPU time so far, and stop(). BENCH_CPU_PROF=<dir> writes a CPU profile per server,
 * BENCH_HEAP_PROF=<dir> a sampled allocation profile (where the garbage comes from).
 */
function spawnServer(script, kind, config) {
  // BENCH_NODE_FLAGS: extra flags for the server processes (e.g. `--trace-gc-nvp`).
  const execArgv = (process.env.BENCH_NODE_FLAGS || '').split(' ').filter(Boolean);
  if (process.env.BENCH_CPU_PROF) {
    fs.mkdirSync(process.env.BENCH_CPU_PROF, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`, `--cpu-prof-name=${kind}-${Date.now()}.cpuprofile`);
  }
  if (process.env.BENCH_HEAP_PROF) {
    fs.mkdirSync(process.env.BENCH_HEAP_PROF, { recursive: true });
    execArgv.push('--heap-prof', '--heap-prof-interval=4096', `--heap-prof-dir=${path.resolve(process.env.BENCH_HEAP_PROF)}`, `--heap-prof-name=${kind}-${Date.now()}.heapprofile`);
  }
  const child = fork(script, ['--server', kind], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    const onExit = (code) => reject(new Error(`${kind} server exited with code ${code} before listening`));
    child.once('exit', onExit);
    child.once('message', (msg) => {
      child.removeListener('exit', onExit);
      resolve({
        kind,
        base: `http://127.0.0.1:${msg.port}`,
        /** CPU time (user + system, microseconds) the server process has used so far. */
        cpuMicros: () =>
          new Promise((done) => {
            const onMessage = (m) => {
              if (!m || !m.cpu) return;
              child.removeListener('message', onMessage);
              done(m.cpu.user + m.cpu.system);
            };
            child.on('message', onMessage);
            child.send('cpu');
          }),
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
            child.once('exit', () => (clearTimeout(timer), done()));
            child.send('stop');
          }),
      });
    });
    child.send(config);
  });
}

// ---------------------------------------------------------------------------------------------
// What both servers of every benchmark share. A baseline must do per request exactly what
// tablegate does (the same tenants and schema, the same token check, the same tenant-context
// statement and statement_timeout in the same transaction), or the comparison measures the
// difference between two workloads rather than two implementations. So these pieces live here
// once, and the benchmarks cannot drift apart from each other or from tablegate.
// ---------------------------------------------------------------------------------------------

/** The schema of every fixture and the one tablegate exposes (startTablegate). */
const SCHEMA = 'bench';

/**
 * The fixtures' tenants; the tokens carry TENANTS[0]. One list so that every fixture spreads its
 * rows over the same tenants and every RLS check looks for the same foreign tenant.
 */
const TENANTS = [1, 2, 3, 4].map((n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`);

/** The order statuses of the order fixtures; shared so that their data and queries line up. */
const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'];

/**
 * tablegate's default statement_timeout_ms, which it sets in every transaction; the baselines set
 * the same value the same way (tenantContext), so both pay for the same setting.
 */
const STATEMENT_TIMEOUT_MS = 30000;

/**
 * Server A of every benchmark: tablegate as a host application mounts it, createGateway over the
 * bench schema at /api, after `gateway.ready`. `options` adds gateway options (writes.js: body and
 * batch limits). `dist` is the build to load (default DIST; DIST_B for the server `tablegate-b`).
 * Resolves with the close function serverMain expects.
 */
async function startTablegate(app, { appUrl, jwtSecret, dist = DIST }, options = {}) {
  const { createGateway } = require(path.join(dist, 'index.js'));
  // BENCH_TG_OPTIONS: createGateway options (JSON) for every tablegate server, e.g. '{"serverTiming":false}'.
  const extra = process.env.BENCH_TG_OPTIONS ? JSON.parse(process.env.BENCH_TG_OPTIONS) : {};
  const gateway = createGateway({ databaseUrl: appUrl, jwtSecret, schemas: [SCHEMA], ...extra, ...options });
  await gateway.ready;
  app.use('/api', gateway);
  return () => gateway.close();
}

/**
 * The tenant-context statement tablegate sends in every transaction (lib/db/pipelined-transaction.ts,
 * without its read-only setting, which the baselines express as BEGIN READ ONLY); the baselines
 * send it with tenantContext(claims) as its parameters.
 */
const CONTEXT_SQL =
  "SELECT set_config('app.current_tenant_id', $1, true), set_config('app.current_user_id', $2, true), " +
  "set_config('app.current_agent_id', $3, true), set_config('app.is_super_admin', 'false', true), " +
  "set_config('statement_timeout', $4, true)";

/**
 * CONTEXT_SQL's parameters for verified claims, as tablegate derives them (claims-to-identity.ts):
 * tenant, user (user_id, else sub), agent, each '' when absent; then STATEMENT_TIMEOUT_MS.
 */
function tenantContext(claims) {
  return [String(claims.tenant_id ?? ''), String(claims.user_id ?? claims.sub ?? ''), String(claims.agent_id ?? ''), String(STATEMENT_TIMEOUT_MS)];
}

/**
 * A baseline's per-request transaction: one pooled client, BEGIN (READ ONLY when `readOnly`),
 * CONTEXT_SQL, `work(client)`, COMMIT: the four round trips a hand-written route needs for what
 * tablegate pipelines. Rolls back and rethrows when anything fails; resolves with work's result.
 */
async function asTenant(pool, claims, readOnly, work) {
  const client = await pool.connect();
  try {
    await client.query(readOnly ? 'BEGIN READ ONLY' : 'BEGIN');
    await client.query(CONTEXT_SQL, tenantContext(claims));
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** An error with the HTTP status a baseline answers with (errorHandler). */
class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * A baseline's token check: `authenticate(req)` verifies the HS256 bearer token with jsonwebtoken
 * and returns its claims, or throws a 401 HttpError. The secret is a KeyObject, made once (a
 * string secret would be re-parsed on every verify), so that the baselines' token check costs
 * what a careful developer's does, in every benchmark alike.
 */
function createAuthenticate(jwtSecret) {
  const jwt = require('jsonwebtoken');
  const key = crypto.createSecretKey(Buffer.from(jwtSecret, 'utf8'));
  return function authenticate(req) {
    const header = req.headers.authorization || '';
    if (!header.startsWith('Bearer ')) throw new HttpError(401, 'missing bearer token');
    try {
      return jwt.verify(header.slice(7), key, { algorithms: ['HS256'] });
    } catch {
      throw new HttpError(401, 'invalid token');
    }
  };
}

/**
 * A baseline's Express error handler (the last app.use): an HttpError's status and message, any
 * other error a 500 without details. Express knows it by its four parameters.
 */
function errorHandler(err, _req, res, _next) {
  res.status(err.status || 500).json({ error: err.status ? err.message : 'internal error' });
}

/** GET with a bearer token; the body parsed as JSON when it is JSON. */
async function fetchJson(url, token) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * CPU time (user + system, microseconds) used so far by each backend connected to `database`, by
 * pid (Linux /proc). Null when /proc is unavailable or the server is not local. Shared so that the
 * benchmarks measure PostgreSQL's share of a request the same way.
 */
async function backendCpu(monitor, database) {
  const { rows } = await monitor.query(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
    [database],
  );
  const tick = 1e6 / 100; // USER_HZ is 100 on Linux
  const cpu = new Map();
  for (const { pid } of rows) {
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return null;
    }
    const close = stat.lastIndexOf(')');
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') return null;
    const fields = stat.slice(close + 2).split(' ');
    cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * tick); // utime, stime
  }
  return cpu;
}

/** CPU used by the backends between two backendCpu() samples (a backend new in `after` counts whole). */
function backendCpuDelta(before, after) {
  if (before === null || after === null) return null;
  let total = 0;
  for (const [pid, micros] of after) total += micros - (before.get(pid) ?? 0);
  return total;
}

/** A CPU time in ms per request for the tables; 'n/a' when it could not be measured. */
const fmtCpu = (ms) => (ms === null ? 'n/a' : ms.toFixed(3));

/**
 * The entry point of a benchmark script: `--server <kind>` (a child forked by spawnServer or by the
 * script itself) runs `server(kind)`, anything else `main()`; an error is printed and exits 1.
 */
function runScript(main, server) {
  const run = process.argv[2] === '--server' ? () => server(process.argv[3]) : main;
  run().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

/**
 * wrk's Lua script for a list of GET paths in rotation, with the bearer token, printing its
 * summary as one BENCH_JSON line (bench/reads.js, bench/citus-reads.js).
 */
function wrkScript(paths, token) {
  return `
local paths = { ${paths.map((p) => JSON.stringify(p)).join(', ')} }
local n = 0
wrk.headers["Authorization"] = "Bearer ${token}"
request = function()
  n = n + 1
  return wrk.format("GET", paths[(n % #paths) + 1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nBENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"non2xx":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))
end
`;
}

/** One wrk run (BENCH_WRK, default `wrk` on the PATH): one thread, `connections`, the script above; its summary. */
function wrk(base, scriptFile, seconds, connections) {
  const bin = process.env.BENCH_WRK || 'wrk';
  return new Promise((resolve, reject) => {
    execFile(bin, ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', scriptFile, base], { maxBuffer: 1 << 20 }, (err, stdout) => {
      if (err) return reject(err);
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
      if (!line) return reject(new Error(`wrk printed no summary:\n${stdout}`));
      resolve(JSON.parse(line.slice('BENCH_JSON '.length)));
    });
  });
}

module.exports = {
  wrkScript, wrk,
  // Scaffolding
  DIST, DIST_B, envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, serverMain, spawnServer,
  // What both servers of every benchmark share
  SCHEMA, TENANTS, STATUSES, STATEMENT_TIMEOUT_MS, startTablegate, CONTEXT_SQL, tenantContext, asTenant, HttpError, createAuthenticate, errorHandler,
  // Helpers
  fetchJson, median, backendCpu, backendCpuDelta, fmtCpu, runScript,
};
