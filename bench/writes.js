#!/usr/bin/env node
// Write benchmark (issue "Writes"), two parts, in one run against one database:
//
//  1. Batch insert: POST /api/items with 1,000 rows in one request, tablegate vs a hand-written
//     Express route that parses the body with express.json() and runs a multi-row
//     INSERT ... VALUES ($1, ...), ... RETURNING * through pg in the same tenant context (four
//     round trips: BEGIN, set_config, INSERT, COMMIT). Both return the inserted rows. Prints
//     rows/s and latency for each and the ratio tablegate / hand-written (target >= 1.0x).
//  2. Oversized body: a 50 MB body POSTed to tablegate (max_request_body_bytes = 1 MB) once with
//     Content-Length and once chunked; both must be refused with 413 while the server's RSS stays
//     flat. Prints the server's RSS before and after.
//  3. Failing batch: the same 1,000 rows with the last one breaking a check constraint, POSTed to
//     tablegate one at a time; prints the median time to the 400 that names the row (details.row,
//     found by rolled-back prefix probes) next to the median time of a successful batch.
//
// Run after a build: `npm run build && node bench/writes.js`. TABLEGATE_DIST=<dir> uses another
// build of lib/ (see bench/lib.js); TABLEGATE_BENCH_DATABASE_URL=<superuser url> uses an
// existing server instead of an embedded one.
// BENCH_SECONDS (default 8) is the duration of each load phase; BENCH_ROUNDS (default 2) how many
// times the pair is alternated.
'use strict';
const { fork } = require('node:child_process');
const crypto = require('node:crypto');
const http = require('node:http');

const { startDatabase, createFixtureDatabase, dropFixtureDatabase, SCHEMA, TENANTS, startTablegate, asTenant, createAuthenticate, errorHandler, runScript } = require('./lib');
const DB_NAME = 'tablegate_bench_writes';
const APP_ROLE = 'tablegate_bench_writes_app';
const TENANT = TENANTS[0];
const BATCH = 1000;
const COLUMNS = ['sku', 'name', 'qty', 'price', 'big', 'note'];
const SECONDS = Number(process.env.BENCH_SECONDS || 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 2);
const HUGE_BYTES = 50 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Server process: both servers, one Express app each, on two ports.
// ---------------------------------------------------------------------------------------------

async function serverMain() {
  const express = require('express');
  const pg = require('pg');
  const config = await new Promise((resolve) => process.once('message', resolve));

  // tablegate (startTablegate in bench/lib.js) with a 1 MB body limit and 1,000-row batches.
  const tg = express();
  const closeGateway = await startTablegate(tg, config, { maxRequestBodyBytes: 1048576, maxBatchSize: BATCH });

  // The hand-written route: the token check and tenant transaction of every baseline (bench/lib.js)
  // around one multi-row INSERT ... RETURNING *; a failed INSERT is a 400 with its message.
  const pool = new pg.Pool({ connectionString: config.appUrl, max: 10 });
  const authenticate = createAuthenticate(config.jwtSecret);
  const base = express();
  base.use(express.json({ limit: '1mb' }));
  base.post('/api/items', async (req, res) => {
    const claims = authenticate(req);
    const rows = Array.isArray(req.body) ? req.body : [req.body];
    const values = [];
    const tuples = rows.map((row) => `(${COLUMNS.map((c) => (values.push(row[c] ?? null), `$${values.length}`)).join(', ')})`);
    let result;
    try {
      result = await asTenant(pool, claims, false, (client) => client.query(`INSERT INTO ${SCHEMA}.items (${COLUMNS.join(', ')}) VALUES ${tuples.join(', ')} RETURNING *`, values));
    } catch (err) {
      return void res.status(400).json({ error: String(err.message) });
    }
    res.status(201).json({ data: result.rows, count: result.rowCount });
  });
  base.use(errorHandler);

  const listen = (app) =>
    new Promise((resolve, reject) => {
      const server = app.listen(0, '127.0.0.1');
      server.once('listening', () => resolve(server)).once('error', reject);
    });
  const servers = [await listen(tg), await listen(base)];
  let peak = 0;
  let sampler;
  process.on('message', async (msg) => {
    if (msg === 'rss') return void process.send({ rss: process.memoryUsage().rss });
    // Peak RSS while the oversized bodies arrive, sampled every 10 ms.
    if (msg === 'peak-start') {
      peak = process.memoryUsage().rss;
      sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
      return void process.send({ started: true });
    }
    if (msg === 'peak-stop') {
      clearInterval(sampler);
      return void process.send({ peak: Math.max(peak, process.memoryUsage().rss) });
    }
    if (msg === 'gc') {
      global.gc?.();
      return void process.send({ gc: true });
    }
    if (msg !== 'stop') return;
    for (const s of servers) {
      s.closeAllConnections?.();
      s.close();
    }
    await closeGateway().catch(() => undefined);
    await pool.end().catch(() => undefined);
    process.exit(0);
  });
  process.send({ ports: servers.map((s) => s.address().port) });
}

// ---------------------------------------------------------------------------------------------
// Database
// ---------------------------------------------------------------------------------------------

async function loadFixture(adminUrl) {
  const { Client } = require('pg');
  const { adminDbUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);
  const db = new Client({ connectionString: adminDbUrl });
  await db.connect();
  try {
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.items (
        id bigserial PRIMARY KEY,
        tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid,
        sku text NOT NULL,
        name text NOT NULL,
        qty integer NOT NULL CHECK (qty >= 0),
        price numeric(12,2),
        big bigint,
        note text
      );
      ALTER TABLE ${SCHEMA}.items ENABLE ROW LEVEL SECURITY;
      ALTER TABLE ${SCHEMA}.items FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON ${SCHEMA}.items
        USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid)
        WITH CHECK (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
      GRANT CONNECT ON DATABASE ${DB_NAME} TO ${APP_ROLE};
      GRANT USAGE ON SCHEMA ${SCHEMA} TO ${APP_ROLE};
      GRANT SELECT, INSERT ON ${SCHEMA}.items TO ${APP_ROLE};
      GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${SCHEMA} TO ${APP_ROLE};
    `);
    const version = await db.query('SHOW server_version');
    return { appUrl, adminDbUrl, serverVersion: version.rows[0].server_version };
  } finally {
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------------------------

function batchBody() {
  const rows = [];
  for (let i = 0; i < BATCH; i++) {
    rows.push({ sku: `sku-${i}`, name: `Item number ${i}`, qty: i % 50, price: ((i * 7919) % 100000) / 100, big: 1000000 + i, note: i % 3 ? `note ${i}` : null });
  }
  return JSON.stringify(rows);
}

async function post(base, token, body) {
  const res = await fetch(`${base}/api/items`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
  return { status: res.status, body: await res.text() };
}

function load(base, token, body) {
  const autocannon = require('autocannon');
  return autocannon({
    url: `${base}/api/items`,
    method: 'POST',
    connections: 4,
    duration: SECONDS,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });
}

/**
 * Sends `bytes` of a JSON-looking body in 64 kB chunks. Resolves with the response status and, if
 * the server closed the connection while the body was still being written (it answers 413 and
 * sends `Connection: close` rather than read 50 MB), the client's write error (EPIPE/ECONNRESET).
 */
function sendHuge(port, token, bytes, chunked) {
  return new Promise((resolve) => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = String(bytes);
    let status = null;
    let error = null;
    let sent = 0;
    const done = () => resolve({ status, error, sentMb: sent / 1024 / 1024 });
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/items', headers }, (res) => {
      status = res.statusCode;
      res.resume();
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', (err) => {
      error = err.code;
      // The 413 may already be parsed; give the response a moment to complete.
      setTimeout(done, 200);
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    chunk[0] = 0x5b; // '['
    const pump = () => {
      while (sent < bytes && error === null) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (error === null) req.end();
    };
    pump();
  });
}

async function main() {
  const database = await startDatabase();
  const child = fork(__filename, ['--server'], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = (msg, field) =>
    new Promise((resolve) => {
      const on = (m) => {
        if (m && m[field] !== undefined) {
          child.removeListener('message', on);
          resolve(m[field]);
        }
      };
      child.on('message', on);
      child.send(msg);
    });
  try {
    const fixture = await loadFixture(database.adminUrl);
    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = require('jsonwebtoken').sign({ tenant_id: TENANT, user_id: 'bench' }, jwtSecret, { algorithm: 'HS256' });
    const portsPromise = new Promise((resolve) => child.once('message', (m) => resolve(m.ports)));
    child.send({ appUrl: fixture.appUrl, jwtSecret });
    const [tgPort, basePort] = await portsPromise;
    const servers = [
      { kind: 'tablegate', base: `http://127.0.0.1:${tgPort}` },
      { kind: 'hand-written pg', base: `http://127.0.0.1:${basePort}` },
    ];
    const body = batchBody();
    console.log(`PostgreSQL ${fixture.serverVersion}, Node ${process.version}, ${require('node:os').cpus().length} CPUs; batch of ${BATCH} rows (${body.length} bytes), ${SECONDS}s x ${ROUNDS} rounds per server, 4 connections`);

    // Correctness first: both insert 1,000 rows of the tenant and return them.
    for (const s of servers) {
      const r = await post(s.base, token, body);
      if (r.status !== 201) throw new Error(`${s.kind}: status ${r.status}: ${r.body.slice(0, 300)}`);
      const parsed = JSON.parse(r.body);
      if (parsed.count !== BATCH || parsed.data.length !== BATCH || parsed.data.some((row) => row.tenant_id !== TENANT)) throw new Error(`${s.kind}: wrong rows returned`);
    }

    const totals = new Map(servers.map((s) => [s.kind, { requests: 0, seconds: 0, p50: [], p99: [] }]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        const result = await load(s.base, token, body);
        if (result.non2xx || result.errors) throw new Error(`${s.kind}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        const t = totals.get(s.kind);
        t.requests += result.requests.total;
        t.seconds += result.duration;
        t.p50.push(result.latency.p50);
        t.p99.push(result.latency.p99);
      }
    }
    const rate = (kind) => totals.get(kind).requests / totals.get(kind).seconds;
    for (const s of servers) {
      const t = totals.get(s.kind);
      console.log(`${s.kind.padEnd(16)} ${rate(s.kind).toFixed(1).padStart(7)} batches/s  ${(rate(s.kind) * BATCH).toFixed(0).padStart(8)} rows/s  p50 ${Math.max(...t.p50)} ms  p99 ${Math.max(...t.p99)} ms`);
    }
    console.log(`ratio tablegate / hand-written: ${(rate('tablegate') / rate('hand-written pg')).toFixed(2)}x`);

    // A failing batch: the cost of naming the failing row (probing, failure path only).
    const failingBody = JSON.stringify(JSON.parse(body).map((row, i) => (i === BATCH - 1 ? { ...row, qty: -1 } : row)));
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const timed = async (payload, expectStatus) => {
      const times = [];
      for (let i = 0; i < 15; i++) {
        const started = process.hrtime.bigint();
        const r = await post(servers[0].base, token, payload);
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (r.status !== expectStatus) throw new Error(`tablegate: status ${r.status}: ${r.body.slice(0, 300)}`);
        if (expectStatus === 400 && JSON.parse(r.body).details?.row !== BATCH - 1) throw new Error(`tablegate: wrong row: ${r.body.slice(0, 300)}`);
      }
      return median(times);
    };
    const okMs = await timed(body, 201);
    const failMs = await timed(failingBody, 400);
    console.log(`failing batch (row ${BATCH - 1} of ${BATCH} breaks a check): 400 naming the row in ${failMs.toFixed(1)} ms median; a successful batch ${okMs.toFixed(1)} ms`);

    // Oversized bodies: refused with 413, RSS flat.
    await ask('gc', 'gc');
    const rssBefore = await ask('rss', 'rss');
    await ask('peak-start', 'started');
    const declared = await sendHuge(tgPort, token, HUGE_BYTES, false);
    const streamed = await sendHuge(tgPort, token, HUGE_BYTES, true);
    const rssPeak = await ask('peak-stop', 'peak');
    await ask('gc', 'gc');
    const rssAfter = await ask('rss', 'rss');
    const mb = (n) => (n / 1024 / 1024).toFixed(1);
    const show = (r) => `${r.status}${r.error ? ` (client stopped after ${r.sentMb.toFixed(1)} MB: ${r.error})` : ''}`;
    console.log(`50 MB body with Content-Length: ${show(declared)}; chunked: ${show(streamed)}`);
    console.log(`server RSS before ${mb(rssBefore)} MB, peak while receiving ${mb(rssPeak)} MB, after ${mb(rssAfter)} MB (delta ${mb(rssAfter - rssBefore)} MB)`);
    if (declared.status !== 413 || streamed.status !== 413) process.exitCode = 1;
  } finally {
    child.send('stop');
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch(() => undefined);
    await database.stop();
  }
}

runScript(main, serverMain);
