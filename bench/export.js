#!/usr/bin/env node
// Export benchmark (docs/performance.md, "Exports"): 1,000,000 rows of bench.orders (6 columns,
// row-level security on, the app role) streamed by tablegate as NDJSON and CSV, against
// `psql -c "\copy (the same SELECT) to stdout with csv"` as the same role with the same tenant
// setting, on the same machine; the gateway's RSS sampled from /proc/<pid>/status throughout;
// and how long after a disconnect at 10 % the backend is idle again.
// Run after `npm run build`: `node bench/export.js`. BENCH_EXPORT_ROWS (default 1000000),
// BENCH_EXPORT_ROUNDS (default 3; medians shown), PSQL (default `psql` on PATH),
// BENCH_EXPORT_NODE_FLAGS (V8 flags for the gateway process only).
'use strict';
const { fork, spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const { DIST, envNumber, startDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, SCHEMA, TENANTS, STATUSES, median } = require('./lib');
const DB_NAME = 'tablegate_bench_export';
const APP_ROLE = 'tablegate_bench_export_app';
const ROWS = envNumber('BENCH_EXPORT_ROWS', 1000000, 1);
const ROUNDS = envNumber('BENCH_EXPORT_ROUNDS', 3, 1);
const COLUMNS = ['id', 'tenant_id', 'user_id', 'status', 'total', 'placed_at'];

// ---- The gateway, in a child process of its own (its RSS is what is sampled).
if (process.argv[2] === '--server') {
  process.once('message', async ({ appUrl, jwtSecret }) => {
    const express = require('express');
    const { createGateway } = require(path.join(DIST, 'index.js'));
    const gateway = createGateway({ databaseUrl: appUrl, jwtSecret, schemas: [SCHEMA], maxExportRows: 10000000, exportStatementTimeoutMs: 0 });
    await gateway.ready;
    const app = express().use('/api', gateway);
    const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
    // The largest V8 heap and external memory seen since the last 'cpu' message: where the RSS goes.
    let mem = { heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
    setInterval(() => {
      const m = process.memoryUsage();
      for (const k of Object.keys(mem)) mem[k] = Math.max(mem[k], m[k]);
    }, 20).unref();
    process.on('message', async (msg) => {
      if (msg === 'cpu') {
        process.send({ cpu: process.cpuUsage(), mem });
        mem = { heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
        return;
      }
      if (msg !== 'stop') return;
      server.closeAllConnections?.();
      server.close();
      await gateway.close().catch(() => undefined);
      process.exit(0);
    });
  });
  return;
}

/** The gateway's largest heap and external memory (bytes) between the last two cpuSeconds calls. */
let lastMem;

/** The gateway process's CPU time so far, in seconds. */
function cpuSeconds(child) {
  return new Promise((resolve) => {
    const onMessage = (m) => {
      if (!m || !m.cpu) return;
      child.removeListener('message', onMessage);
      lastMem = m.mem;
      resolve((m.cpu.user + m.cpu.system) / 1e6);
    };
    child.on('message', onMessage);
    child.send('cpu');
  });
}

const mb = (bytes) => (bytes / 1048576).toFixed(0);

function rssKb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/** Samples the RSS of `pid` every 20 ms until stopped; returns the peak in MB. */
function sampleRss(pid) {
  let peak = rssKb(pid);
  const samples = [];
  const timer = setInterval(() => {
    const kb = rssKb(pid);
    samples.push(kb);
    if (kb > peak) peak = kb;
  }, 20);
  return () => (clearInterval(timer), { peakMb: peak / 1024, samples: samples.length });
}

/** Reads a whole response, counting bytes; `abortAt` (bytes) hangs up early. */
function download(port, pathName, accept, token, abortAt) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let bytes = 0;
    const req = http.get({ host: '127.0.0.1', port, path: pathName, headers: { Accept: accept, Authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`${pathName}: ${res.statusCode}`));
      res.on('data', (chunk) => {
        bytes += chunk.length;
        if (abortAt !== undefined && bytes >= abortAt && !req.destroyed) {
          req.destroy();
          resolve({ bytes, seconds: Number(process.hrtime.bigint() - started) / 1e9, complete: false, abortedAt: process.hrtime.bigint() });
        }
      });
      res.on('end', () => resolve({ bytes, seconds: Number(process.hrtime.bigint() - started) / 1e9, complete: res.complete }));
      res.on('error', () => undefined);
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
  });
}

/** psql's \copy of the same SELECT, as the app role with the same tenant setting; stdout counted in this process. */
function psqlCopy(appUrl, select) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const psql = spawn(process.env.PSQL || 'psql', [appUrl, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-o', '/dev/null', '-c', `SELECT set_config('app.current_tenant_id', '${TENANTS[0]}', false)`, '-c', `\\copy (${select}) to pstdout with csv`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    psql.stdout.on('data', (c) => (bytes += c.length));
    psql.on('error', reject);
    psql.on('exit', (code) => (code === 0 ? resolve({ bytes, seconds: Number(process.hrtime.bigint() - started) / 1e9 }) : reject(new Error(`psql exited with ${code}`))));
  });
}

function token(secret) {
  const jwt = require('jsonwebtoken');
  return jwt.sign({ tenant_id: TENANTS[0], user_id: 'bench', role: 'member' }, secret, { algorithm: 'HS256' });
}

async function main() {
  const database = await startDatabase();
  const { Client } = require('pg');
  let child;
  let admin;
  try {
    const { adminDbUrl, appUrl } = await createFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE);
    admin = new Client({ connectionString: adminDbUrl });
    admin.on('error', () => undefined);
    await admin.connect();
    const loaded = Date.now();
    // ROWS rows of the token's tenant, and a tenth as many of another (row-level security filters them).
    await admin.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (id bigint PRIMARY KEY, tenant_id uuid NOT NULL, user_id int, status text NOT NULL, total numeric(12,2), placed_at timestamptz);
      INSERT INTO ${SCHEMA}.orders
        SELECT i, CASE WHEN i % 11 = 0 THEN '${TENANTS[1]}'::uuid ELSE '${TENANTS[0]}'::uuid END, i % 1000,
               (ARRAY['${STATUSES.join("','")}'])[1 + i % 5], (i % 10000) / 100.0, timestamptz '2024-01-01' + i * interval '1 second'
        FROM generate_series(1, ${Math.ceil(ROWS * 1.1) + 1}) AS i;
      ${tenantTableSql('orders', DB_NAME, APP_ROLE)}`);
    console.log(`fixture: ${ROWS} rows of tenant A (+ ${Math.ceil(ROWS * 0.1)} of tenant B) loaded in ${((Date.now() - loaded) / 1000).toFixed(1)} s`);

    const jwtSecret = crypto.randomBytes(32).toString('hex');
    // BENCH_EXPORT_NODE_FLAGS: V8 flags for the gateway process only, e.g. --max-semi-space-size=4.
    const nodeFlags = (process.env.BENCH_EXPORT_NODE_FLAGS || '').split(' ').filter(Boolean);
    child = fork(__filename, ['--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...process.execArgv, ...nodeFlags] });
    const port = await new Promise((resolve) => (child.once('message', (m) => resolve(m.port)), child.send({ appUrl, jwtSecret })));
    const bearer = token(jwtSecret);
    const query = `/api/orders?select=${COLUMNS.join(',')}&limit=${ROWS}`;
    const select = `SELECT ${COLUMNS.join(', ')} FROM ${SCHEMA}.orders ORDER BY id LIMIT ${ROWS}`;
    const rssIdle = rssKb(child.pid) / 1024;

    // Warm-up: one small export of each kind and one psql run.
    await download(port, `/api/orders?limit=10000`, 'application/x-ndjson', bearer);
    await download(port, `/api/orders?limit=10000`, 'text/csv', bearer);
    await psqlCopy(appUrl, `SELECT ${COLUMNS.join(', ')} FROM ${SCHEMA}.orders ORDER BY id LIMIT 10000`);

    const load = [os.loadavg()[0]];
    const runs = { ndjson: [], csv: [], psql: [] };
    let peakMb = 0;
    let samples = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of ['psql', 'ndjson', 'csv']) {
        const cpuBefore = await cpuSeconds(child);
        const stop = sampleRss(child.pid);
        const r = kind === 'psql' ? await psqlCopy(appUrl, select) : await download(port, query, kind === 'csv' ? 'text/csv' : 'application/x-ndjson', bearer);
        const rss = stop();
        r.gatewayCpu = (await cpuSeconds(child)) - cpuBefore;
        if (kind !== 'psql') {
          peakMb = Math.max(peakMb, rss.peakMb);
          samples += rss.samples;
          if (!r.complete) throw new Error(`${kind} export incomplete`);
        }
        runs[kind].push(r);
        console.log(`round ${round + 1} ${kind}: ${(r.bytes / 1e6).toFixed(1)} MB in ${r.seconds.toFixed(2)} s (${(ROWS / r.seconds / 1000).toFixed(0)}k rows/s)${kind === 'psql' ? '' : `, gateway RSS peak ${rss.peakMb.toFixed(0)} MB, gateway CPU ${r.gatewayCpu.toFixed(2)} s, heap total/used ${mb(lastMem.heapTotal)}/${mb(lastMem.heapUsed)} MB, external ${mb(lastMem.external)} MB`}`);
      }
    }
    load.push(os.loadavg()[0]);

    // Disconnect at 10 %: hang up, then poll pg_stat_activity until the app role's backend is idle.
    const csvBytes = runs.csv[0].bytes;
    const releases = [];
    for (let i = 0; i < ROUNDS; i++) {
      const cut = await download(port, query, 'text/csv', bearer, Math.floor(csvBytes / 10));
      const cutAt = cut.abortedAt;
      for (;;) {
        const { rows } = await admin.query(`SELECT count(*)::int AS busy FROM pg_stat_activity WHERE datname = current_database() AND usename = $1 AND state <> 'idle'`, [APP_ROLE]);
        const ms = Number(process.hrtime.bigint() - cutAt) / 1e6;
        if (rows[0].busy === 0 || ms > 10000) {
          releases.push(ms);
          break;
        }
      }
    }

    const med = (kind) => median(runs[kind].map((r) => r.seconds));
    const result = {
      rows: ROWS,
      rounds: ROUNDS,
      gatewayNodeFlags: nodeFlags,
      cores: os.cpus().length,
      loadAverage1m: load,
      gatewayRssIdleMb: Number(rssIdle.toFixed(1)),
      gatewayRssPeakMb: Number(peakMb.toFixed(1)),
      rssSamples: samples,
      seconds: { psql: med('psql'), ndjson: med('ndjson'), csv: med('csv') },
      megabytes: { psql: runs.psql[0].bytes / 1e6, ndjson: runs.ndjson[0].bytes / 1e6, csv: runs.csv[0].bytes / 1e6 },
      gatewayCpuSeconds: { ndjson: median(runs.ndjson.map((r) => r.gatewayCpu)), csv: median(runs.csv.map((r) => r.gatewayCpu)) },
      throughputVsPsql: { ndjson: med('psql') / med('ndjson'), csv: med('psql') / med('csv') },
      releaseAfterDisconnectMs: releases.map((x) => Number(x.toFixed(0))),
    };
    console.log(JSON.stringify(result, null, 2));
    const out = path.join(__dirname, 'results', 'export-latest.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`written to ${path.relative(process.cwd(), out)}`);
  } finally {
    await admin?.end().catch(() => undefined);
    if (child && child.exitCode === null) {
      child.send('stop');
      await new Promise((r) => child.once('exit', r));
    }
    await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch(() => undefined);
    await database.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
