// Scaffolding shared by the benchmarks (run.js, relations.js, writes.js): which build of lib/ to
// load, the PostgreSQL server, the fixture database and its RLS-bound role, server child
// processes that report their CPU time, and small helpers. Each benchmark keeps its own fixture
// schema, servers and load shape.
'use strict';
const { fork } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/**
 * The build of lib/ to measure: dist/cjs, or TABLEGATE_DIST (e.g. an older commit built with
 * `npx tsc -p tsconfig.build.json --outDir node_modules/.cache/tg-old`; the directory must be
 * inside the repository so that its dependencies resolve).
 */
const DIST = path.resolve(process.env.TABLEGATE_DIST || path.join(__dirname, '..', 'dist', 'cjs'));

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
  process.on('message', async (msg) => {
    if (msg === 'cpu') return void process.send({ cpu: process.cpuUsage() });
    if (msg !== 'stop') return;
    server.closeAllConnections?.();
    server.close();
    await close().catch(() => undefined);
    process.exit(0);
  });
  process.send({ port: server.address().port });
}

/**
 * Forks `script --server kind` (which calls serverMain) and resolves when it listens, with its
 * base URL, its CPU time so far, and stop(). BENCH_CPU_PROF=<dir> writes a CPU profile per server.
 */
function spawnServer(script, kind, config) {
  const execArgv = [];
  if (process.env.BENCH_CPU_PROF) {
    fs.mkdirSync(process.env.BENCH_CPU_PROF, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`, `--cpu-prof-name=${kind}-${Date.now()}.cpuprofile`);
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

module.exports = { DIST, envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, serverMain, spawnServer, fetchJson, median };
