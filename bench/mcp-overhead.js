#!/usr/bin/env node
// The agents' door's overhead (docs/performance.md, "MCP tool calls"): a `query_rows` tool call
// against the same list over REST, in one run, beside the pinned reference build.
//
// Three server processes, each tablegate as a host mounts it:
//   - `ref`:  the pinned reference build (TABLEGATE_REF_DIST, default node_modules/.cache/tg-5bd9cb5,
//             made by `node bench/build-reference.js 5bd9cb5`), REST only (it has no MCP door);
//   - `rest`: the current build (dist/cjs), `GET /api/orders?status=eq.paid&limit=20`;
//   - `mcp`:  the current build, the same page as a `query_rows` tool call: one POST /mcp with a
//             JSON-RPC `tools/call` (a stateless MCP request as a client sends it after
//             initialize), `{ table: "orders", filters: [{ column: "status", op: "eq", value: "paid" }], limit: 20 }`.
// The REST and MCP servers are the same configuration (mcp enabled in both); only the load differs.
// Measured per request: server CPU (the process's own cpuUsage), PostgreSQL backend CPU, latency
// p50/p99 and req/s under autocannon; the rounds alternate the servers, and medians are reported.
//
// Run after `npm run build`: `node bench/mcp-overhead.js`. BENCH_DURATION (s, default 5),
// BENCH_WARMUP (s, default 2), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 10),
// BENCH_ROWS (default 20000); TABLEGATE_BENCH_DATABASE_URL as for run.js (bench/README.md).
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, serverMain, spawnServer, SCHEMA, TENANTS, STATUSES, startTablegate, median, backendCpu, backendCpuDelta, runScript } = require('./lib');

const DB_NAME = 'tablegate_bench_mcp';
const APP_ROLE = 'tablegate_bench_mcp_app';
const REF_DIST = path.resolve(process.env.TABLEGATE_REF_DIST || path.join(__dirname, '..', 'node_modules', '.cache', 'tg-5bd9cb5'));
const LIMIT = 20;
const REST_PATH = `/api/orders?status=eq.paid&limit=${LIMIT}`;
const MCP_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'query_rows', arguments: { table: 'orders', filters: [{ column: 'status', op: 'eq', value: 'paid' }], limit: LIMIT } },
});

const starters = {
  ref: (app, config) => startTablegate(app, { ...config, dist: REF_DIST }),
  rest: (app, config) => startCurrent(app, config),
  mcp: (app, config) => startCurrent(app, config),
};

/** The current build with the REST routes at /api and the MCP endpoint at /mcp. */
async function startCurrent(app, { appUrl, jwtSecret }) {
  const { createGateway } = require(path.join(__dirname, '..', 'dist', 'cjs', 'index.js'));
  const gateway = createGateway({ databaseUrl: appUrl, jwtSecret, schemas: [SCHEMA], mcp: { enabled: true } });
  await gateway.ready;
  app.use('/api', gateway);
  app.use('/mcp', gateway.mcp);
  return () => gateway.close();
}

async function loadFixture(adminUrl, rows) {
  const { Client } = require('pg');
  const { adminDbUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);
  const db = new Client({ connectionString: adminDbUrl });
  await db.connect();
  try {
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, user_id integer, status text NOT NULL, total numeric(12,2), placed_at timestamptz NOT NULL DEFAULT now(), notes text);
      INSERT INTO ${SCHEMA}.orders (tenant_id, user_id, status, total, notes)
      SELECT (ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}])[(i % ${TENANTS.length}) + 1], i % 100,
             (ARRAY[${STATUSES.map((s) => `'${s}'`).join(', ')}])[(i / ${TENANTS.length}) % ${STATUSES.length} + 1], (i % 1000) / 10.0, 'note ' || i
      FROM generate_series(1, ${rows}) AS i;
      CREATE INDEX ON ${SCHEMA}.orders (tenant_id, status, id);
      ${tenantTableSql('orders', DB_NAME, APP_ROLE)}
    `);
    const version = await db.query('SHOW server_version');
    return { appUrl, adminDbUrl, serverVersion: version.rows[0].server_version };
  } finally {
    await db.end();
  }
}

function load(server, token, seconds, connections) {
  const autocannon = require('autocannon');
  const mcp = server.kind === 'mcp';
  return autocannon({
    url: server.base,
    connections,
    duration: seconds,
    requests: [
      mcp
        ? { method: 'POST', path: '/mcp', body: MCP_BODY, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }
        : { method: 'GET', path: REST_PATH, headers: { authorization: `Bearer ${token}` } },
    ],
  });
}

/** One request of each server, checked: the same 20 rows of the caller's tenant. */
async function check(servers, token) {
  const pages = {};
  for (const server of servers) {
    if (server.kind === 'mcp') {
      const res = await fetch(`${server.base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: MCP_BODY });
      const body = await res.json();
      if (res.status !== 200 || body.result?.isError) throw new Error(`mcp check failed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      pages[server.kind] = body.result.structuredContent.rows;
    } else {
      const res = await fetch(`${server.base}${REST_PATH}`, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(`${server.kind} check failed: ${res.status}`);
      pages[server.kind] = (await res.json()).data;
    }
  }
  const texts = Object.values(pages).map((p) => JSON.stringify(p));
  if (pages.rest.length !== LIMIT || new Set(texts).size !== 1 || pages.rest.some((r) => r.tenant_id !== TENANTS[0])) {
    throw new Error(`the servers disagree: ${Object.entries(pages).map(([k, p]) => `${k}: ${p.length} rows`).join(', ')}`);
  }
}

async function main() {
  if (!fs.existsSync(path.join(REF_DIST, 'index.js'))) throw new Error(`no reference build at ${REF_DIST}: run node bench/build-reference.js 5bd9cb5`);
  const duration = envNumber('BENCH_DURATION', 5, 1);
  const warmup = envNumber('BENCH_WARMUP', 2, 0);
  const rounds = Math.floor(envNumber('BENCH_ROUNDS', 3, 1));
  const connections = Math.floor(envNumber('BENCH_CONNECTIONS', 10, 1));
  const rowCount = Math.floor(envNumber('BENCH_ROWS', 20000, 1000));
  const jwt = require('jsonwebtoken');

  const loadBefore = os.loadavg();
  const database = await startDatabase();
  const servers = [];
  let monitor;
  const results = [];
  try {
    const fixture = await loadFixture(database.adminUrl, rowCount);
    monitor = new (require('pg').Client)({ connectionString: withDatabase(database.adminUrl, DB_NAME), application_name: 'bench-monitor' });
    await monitor.connect();
    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = jwt.sign({ tenant_id: TENANTS[0], user_id: '1', role: 'member', agent_id: 'bench-agent' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    const config = { appUrl: fixture.appUrl, jwtSecret };
    for (const kind of Object.keys(starters)) servers.push(await spawnServer(__filename, kind, config));
    await check(servers, token);

    for (let round = 1; round <= rounds; round++) {
      for (const server of servers) {
        if (warmup > 0) await load(server, token, warmup, connections);
        const cpu0 = await server.cpuMicros();
        const pg0 = await backendCpu(monitor, DB_NAME);
        const r = await load(server, token, duration, connections);
        const cpu1 = await server.cpuMicros();
        const pgDelta = backendCpuDelta(pg0, await backendCpu(monitor, DB_NAME));
        const requests = r.requests.total;
        const row = {
          round,
          server: server.kind,
          requests,
          errors: r.errors + r.non2xx,
          reqPerS: r.requests.average,
          p50: r.latency.p50,
          p99: r.latency.p99,
          serverCpuMs: (cpu1 - cpu0) / 1000 / requests,
          pgCpuMs: pgDelta === null ? null : pgDelta / 1000 / requests,
        };
        results.push(row);
        console.log(`round ${round} ${server.kind}: ${requests} requests, ${row.errors} errors, ${row.reqPerS.toFixed(0)} req/s, p50 ${row.p50} ms, server CPU ${row.serverCpuMs.toFixed(3)} ms/req`);
      }
    }
    const by = (kind, key) => median(results.filter((r) => r.server === kind).map((r) => r[key]));
    console.log('');
    console.log(`${rounds} round(s) of ${duration} s, ${connections} connections, PostgreSQL ${fixture.serverVersion}, load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} before`);
    console.log('');
    console.log('| server | request | req/s | p50 ms | p99 ms | server CPU ms/req | PostgreSQL CPU ms/req |');
    console.log('|---|---|---|---|---|---|---|');
    const label = { ref: 'reference 5bd9cb5, REST list', rest: 'current, REST list', mcp: 'current, MCP query_rows' };
    for (const kind of Object.keys(starters)) {
      const pg = results.filter((r) => r.server === kind).some((r) => r.pgCpuMs === null) ? 'n/a' : by(kind, 'pgCpuMs').toFixed(3);
      console.log(`| ${kind} | ${label[kind]} | ${by(kind, 'reqPerS').toFixed(0)} | ${by(kind, 'p50')} | ${by(kind, 'p99')} | ${by(kind, 'serverCpuMs').toFixed(3)} | ${pg} |`);
    }
    fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    fs.writeFileSync(path.join(__dirname, 'results', 'mcp-overhead-latest.json'), JSON.stringify({ results, loadBefore, loadAfter: os.loadavg(), node: process.version, postgres: fixture.serverVersion }, null, 2));
  } finally {
    for (const server of servers) await server.stop();
    await monitor?.end().catch(() => undefined);
    await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch(() => undefined);
    await database.stop();
  }
}

runScript(main, (kind) => serverMain(kind, starters));
