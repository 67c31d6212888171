#!/usr/bin/env node
// Memory per request (docs/performance.md, "Memory per request"): the gateway's peak RSS while N
// clients at once ask for the largest pages one request can make it build, sampled from
// /proc/<pid>/status every 20 ms as bench/export.js does; the gateway runs in a child process of
// its own. With TABLEGATE_DIST_B, the same scenarios against a second build (the pinned reference
// 5bd9cb5) in the same run.
//
// Scenarios, each with BENCH_SIZE_CONCURRENCY clients at once (default "1,4,8,16"):
//   under  GET /api/docs?limit=<n>&select=id,body: a page just under the default
//          max_response_bytes (64 MiB): the largest body the current build still builds;
//   over   the same for a page of ~100 MB: over the bound (400 from the current build);
//   crash  (one request, BENCH_SIZE_CRASH=0 skips it) 600 rows of 1 MB (~600 MB, over V8's string
//          limit): the reproduction of issue 20. Reported as whether the process survived.
// Run after `npm run build`: `node bench/response-size.js`; with the reference build:
//   git worktree add /tmp/ref-5bd9cb5 5bd9cb5 && (cd /tmp/ref-5bd9cb5 && npx tsc -p tsconfig.build.json --outDir "$PWD/node_modules/.cache/tg-5bd9cb5")
//   TABLEGATE_DIST_B=node_modules/.cache/tg-5bd9cb5 node bench/response-size.js
'use strict';
const { fork } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const { DIST, DIST_B, startDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, SCHEMA, TENANTS } = require('./lib');
const DB_NAME = 'tablegate_bench_size';
const APP_ROLE = 'tablegate_bench_size_app';
const CONCURRENCY = (process.env.BENCH_SIZE_CONCURRENCY || '1,4,8,16').split(',').map(Number);
const CRASH = process.env.BENCH_SIZE_CRASH !== '0';

// ---- The gateway, in a child process of its own (its RSS is what is sampled).
if (process.argv[2] === '--server') {
  process.once('message', async ({ appUrl, jwtSecret, dist }) => {
    const express = require('express');
    const { createGateway } = require(path.join(dist, 'index.js'));
    // Defaults for everything else: the reference build has no max_response_bytes.
    const gateway = createGateway({ databaseUrl: appUrl, jwtSecret, schemas: [SCHEMA], statementTimeoutMs: 0 });
    await gateway.ready;
    const app = express().use('/api', gateway);
    const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  });
  return;
}

function rssKb(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0; // the process is gone
  }
}

/** Samples the RSS of `pid` every 20 ms until stopped; returns the peak in MB. */
function sampleRss(pid) {
  let peak = rssKb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssKb(pid))), 20);
  return () => (clearInterval(timer), peak / 1024);
}

/** One GET, counting the body's bytes; resolves with the status and size, or the error (a crashed server). */
function get(port, pathName, token) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathName, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode, bytes }));
      res.on('error', (err) => resolve({ status: 'error', error: err.code ?? err.message, bytes }));
    });
    req.on('error', (err) => resolve({ status: 'error', error: err.code ?? err.message, bytes: 0 }));
  });
}

function token(secret, tenant) {
  const jwt = require('jsonwebtoken');
  return jwt.sign({ tenant_id: tenant, user_id: 'bench', role: 'member' }, secret, { algorithm: 'HS256' });
}

async function startGateway(dist, appUrl, jwtSecret) {
  const child = fork(__filename, ['--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const port = await new Promise((resolve) => (child.once('message', (m) => resolve(m.port)), child.send({ appUrl, jwtSecret, dist })));
  return { child, port, exited };
}

async function main() {
  const database = await startDatabase();
  const { Client } = require('pg');
  let admin;
  const results = [];
  try {
    const { adminDbUrl, appUrl } = await createFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE);
    admin = new Client({ connectionString: adminDbUrl });
    admin.on('error', () => undefined);
    await admin.connect();
    // Tenant A: 1,000 rows of 60,000 characters (a 60 MB page), 1,000 of 100,000 (100 MB) and 600
    // of 1,000,000 (600 MB). Tenant B: a few small rows. The bodies compress on disk.
    await admin.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.docs (id integer PRIMARY KEY, tenant_id uuid NOT NULL, kind text NOT NULL, body text NOT NULL);
      INSERT INTO ${SCHEMA}.docs SELECT i, '${TENANTS[0]}', 'under', repeat('u', 60000) FROM generate_series(1, 1000) AS i;
      INSERT INTO ${SCHEMA}.docs SELECT 1000 + i, '${TENANTS[0]}', 'over', repeat('o', 100000) FROM generate_series(1, 1000) AS i;
      INSERT INTO ${SCHEMA}.docs SELECT 2000 + i, '${TENANTS[0]}', 'crash', repeat('c', 1000000) FROM generate_series(1, 600) AS i;
      INSERT INTO ${SCHEMA}.docs SELECT 3000 + i, '${TENANTS[1]}', 'b', 'b' FROM generate_series(1, 3) AS i;
      ${tenantTableSql('docs', DB_NAME, APP_ROLE)}`);
    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const tokenA = token(jwtSecret, TENANTS[0]);
    const tokenB = token(jwtSecret, TENANTS[1]);
    const builds = [['current', DIST], ...(DIST_B ? [['reference', DIST_B]] : [])];
    const scenarios = [
      ['under', '/api/docs?kind=eq.under&limit=1000&select=id,body'],
      ['over', '/api/docs?kind=eq.over&limit=1000&select=id,body'],
    ];
    for (const [build, dist] of builds) {
      const gw = await startGateway(dist, appUrl, jwtSecret);
      const idle = rssKb(gw.child.pid) / 1024;
      await get(gw.port, '/api/docs?select=id&limit=10', tokenA); // warm-up
      for (const [scenario, url] of scenarios) {
        for (const n of CONCURRENCY) {
          const stop = sampleRss(gw.child.pid);
          const started = Date.now();
          const answers = await Promise.all(Array.from({ length: n }, () => get(gw.port, url, tokenA)));
          const peak = stop();
          const statuses = [...new Set(answers.map((a) => (a.error ? `${a.status} (${a.error})` : a.status)))].join('/');
          const alive = gw.child.exitCode === null && gw.child.signalCode === null;
          const row = { build, scenario, clients: n, statuses, alive, bodyMb: +(Math.max(...answers.map((a) => a.bytes)) / 1e6).toFixed(1), idleRssMb: Math.round(idle), peakRssMb: Math.round(peak), seconds: +((Date.now() - started) / 1000).toFixed(1) };
          results.push(row);
          console.log(JSON.stringify(row));
          if (!alive) break;
          await new Promise((resolve) => setTimeout(resolve, 1000)); // let the heap shrink between runs
        }
      }
      if (CRASH) {
        const stop = sampleRss(gw.child.pid);
        const started = Date.now();
        const answer = await get(gw.port, '/api/docs?kind=eq.crash&limit=600&select=id,body', tokenA);
        const peak = stop();
        const after = await Promise.race([gw.exited.then(() => ({ status: 'exited' })), new Promise((resolve) => setTimeout(resolve, 2000)).then(() => get(gw.port, '/api/docs?select=id', tokenB))]);
        const row = { build, scenario: 'crash', clients: 1, statuses: String(answer.status) + (answer.error ? ` (${answer.error})` : ''), peakRssMb: Math.round(peak), seconds: +((Date.now() - started) / 1000).toFixed(1), alive: gw.child.exitCode === null && gw.child.signalCode === null, tenantBAfter: after.status };
        results.push(row);
        console.log(JSON.stringify(row));
      }
      gw.child.kill('SIGKILL');
      await gw.exited;
    }
    const out = path.join(__dirname, 'results', 'response-size-latest.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify({ node: process.version, cores: os.cpus().length, memGb: +(os.totalmem() / 2 ** 30).toFixed(1), loadavg: os.loadavg(), results }, null, 2));
    console.log(`\n| build | scenario | clients | status | body MB | peak RSS MB | s |\n|---|---|---|---|---|---|---|`);
    for (const r of results) console.log(`| ${r.build} | ${r.scenario} | ${r.clients} | ${r.statuses}${r.scenario === 'crash' ? `, alive: ${r.alive}, tenant B after: ${r.tenantBAfter}` : ''} | ${r.bodyMb ?? '-'} | ${r.peakRssMb} | ${r.seconds} |`);
  } finally {
    await admin?.end().catch(() => undefined);
    await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch(() => undefined);
    await database.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
