#!/usr/bin/env node
// The read benchmark of issue 22, in ONE run: a page of 20 orders (`list`), one order by key
// (`get`) and 20 orders with each one's user and items (`expanded`), against
//   - `hand-written`: Express + pg, the routes of bench/run.js (list, get) and bench/relations.js
//     (expanded: one statement building the body in PostgreSQL);
//   - `tablegate`: the current build (TABLEGATE_DIST, default dist/cjs);
//   - `ref`: the pinned reference build (TABLEGATE_REF_DIST, default
//     node_modules/.cache/tg-5bd9cb5, made by `node bench/build-reference.js 5bd9cb5`);
//   - `postgrest`: the current build with `dialect: 'postgrest'`, on PostgREST's URLs for the
//     same three reads;
//   - `ceiling`: the HTTP floor, Express + the same token check as hand-written + the bytes
//     tablegate answered for the same URL, from memory. What a gateway spends above it is its own
//     code (plus the database client).
//   - `ceiling-db` (opt-in, BENCH_SERVERS): the ceiling plus one round trip to PostgreSQL per
//     request (a pooled client, one prepared `SELECT $1::text`), then the same bytes from memory:
//     the floor of any server that asks the database once per request. What a gateway spends
//     above it is its own code, not the socket writes and reads a database answer needs.
// Load: wrk (BENCH_WRK, default `wrk` on the PATH), 32 connections, one thread, the URLs in
// rotation (a Lua script). Per server and scenario: req/s, latency, server CPU per request
// (process.cpuUsage of the server process / requests), PostgreSQL backends' CPU per request.
// See bench/README.md; results in docs/performance.md ("Reads against 5bd9cb5 and the HTTP ceiling").
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { wrkScript, wrk: wrkWith, DIST, DIST_B, envNumber, startDatabase, withDatabase, dropFixtureDatabase, serverMain, spawnServer, TENANTS, STATUSES, startTablegate, asTenant, HttpError, createAuthenticate, errorHandler, fetchJson, median, backendCpu, backendCpuDelta, fmtCpu, runScript } = require('./lib');
const { loadFixture, BASELINE_SQL: EXPANDED_SQL, DB_NAME, APP_ROLE } = require('./relations');

const REF_DIST = path.resolve(process.env.TABLEGATE_REF_DIST || path.join(__dirname, '..', 'node_modules', '.cache', 'tg-5bd9cb5'));
const COLUMNS = ['id', 'tenant_id', 'user_id', 'status', 'total', 'placed_at', 'notes'];
const LIST_LIMIT = 20;
const GET_IDS = 500;
const CONNECTIONS = 32;
const wrk = (base, scriptFile, seconds) => wrkWith(base, scriptFile, seconds, CONNECTIONS);

// ---------------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------------

/** bench/run.js's list and get routes and bench/relations.js's expanded route, on one pool. */
async function startHandWritten(app, { appUrl, jwtSecret }) {
  const pg = require('pg');
  const pool = new pg.Pool({ connectionString: appUrl, max: 10, application_name: 'baseline' });
  const authenticate = createAuthenticate(jwtSecret);
  const LIST_SQL = `SELECT ${COLUMNS.join(', ')} FROM bench.orders WHERE status = $1 ORDER BY id LIMIT $2 OFFSET $3`;
  const GET_SQL = `SELECT ${COLUMNS.join(', ')} FROM bench.orders WHERE id = $1`;
  app.get('/api/orders', async (req, res) => {
    const claims = authenticate(req);
    const raw = typeof req.query.status === 'string' ? req.query.status : undefined;
    if (raw === undefined) throw new HttpError(400, 'status is required');
    const status = raw.startsWith('eq.') ? raw.slice(3) : raw;
    const limit = Math.min(Number(req.query.limit ?? 100) || 100, 1000);
    const offset = Number(req.query.offset ?? 0) || 0;
    if (req.query.expand !== undefined) {
      const { rows } = await asTenant(pool, claims, true, (client) => client.query(EXPANDED_SQL, [status, limit, offset]));
      const text = rows[0].body;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(text));
      return void res.end(text);
    }
    const { rows } = await asTenant(pool, claims, true, (client) => client.query(LIST_SQL, [status, limit, offset]));
    res.json({ data: rows, count: rows.length, limit, offset });
  });
  app.get('/api/orders/:id', async (req, res) => {
    const claims = authenticate(req);
    const { rows } = await asTenant(pool, claims, true, (client) => client.query(GET_SQL, [req.params.id]));
    if (rows.length === 0) throw new HttpError(404, 'not found');
    res.json({ data: rows[0] });
  });
  app.use(errorHandler);
  return () => pool.end();
}

/**
 * The HTTP ceiling: Express, the hand-written routes' token check, and for each URL the status,
 * content type and body tablegate answered (collected before the load), written from memory.
 */
async function startCeiling(app, { jwtSecret, answers }) {
  const authenticate = createAuthenticate(jwtSecret);
  const byUrl = new Map(answers.map((a) => [a.url, { type: a.type, body: Buffer.from(a.body, 'utf8') }]));
  app.use((req, res) => {
    authenticate(req);
    const a = byUrl.get(req.originalUrl);
    if (a === undefined) return void res.status(404).end();
    res.setHeader('Content-Type', a.type);
    res.setHeader('Content-Length', a.body.length);
    res.end(a.body);
  });
  app.use(errorHandler);
  return async () => undefined;
}

/**
 * The ceiling plus one database round trip: what a server that asks PostgreSQL anything once per
 * request cannot avoid (pool check-out, one batch written, one answer read and parsed).
 */
async function startCeilingDb(app, { appUrl, jwtSecret, answers }) {
  const pg = require('pg');
  const pool = new pg.Pool({ connectionString: appUrl, max: 10, application_name: 'ceiling-db' });
  const authenticate = createAuthenticate(jwtSecret);
  const byUrl = new Map(answers.map((a) => [a.url, { type: a.type, body: Buffer.from(a.body, 'utf8') }]));
  const statement = { name: 'ceiling_db', text: 'SELECT $1::text AS t', values: [''] };
  app.use(async (req, res) => {
    const claims = authenticate(req);
    const a = byUrl.get(req.originalUrl);
    if (a === undefined) return void res.status(404).end();
    await pool.query({ ...statement, values: [String(claims.tenant_id)] });
    res.setHeader('Content-Type', a.type);
    res.setHeader('Content-Length', a.body.length);
    res.end(a.body);
  });
  app.use(errorHandler);
  return () => pool.end();
}

const starters = {
  'hand-written': startHandWritten,
  tablegate: startTablegate,
  ref: (app, config) => startTablegate(app, { ...config, dist: REF_DIST }),
  postgrest: (app, config) => startTablegate(app, config, { dialect: 'postgrest' }),
  ceiling: startCeiling,
  'ceiling-db': startCeilingDb,
  // TABLEGATE_DIST_B: a second current build (before/after a change, in the same run).
  'tablegate-b': (app, config) => startTablegate(app, { ...config, dist: DIST_B }),
  // The PostgREST dialect of TABLEGATE_DIST_B (on PostgREST's URLs), beside `postgrest`.
  'postgrest-b': (app, config) => startTablegate(app, { ...config, dist: DIST_B }, { dialect: 'postgrest' }),
};

/** Servers that take PostgREST's URLs. */
const onPostgrestUrls = (kind) => kind === 'postgrest' || kind === 'postgrest-b';

// ---------------------------------------------------------------------------------------------
// Load: wrk with a Lua script that rotates the URLs and prints its summary as JSON
// ---------------------------------------------------------------------------------------------



// ---------------------------------------------------------------------------------------------
// Checks: every server answers every URL of a scenario with 200 and the same rows
// ---------------------------------------------------------------------------------------------

const num2 = (v) => (v === null || v === undefined ? null : Number(v).toFixed(2));
function normalizeOrder(row) {
  const base = [String(row.id), row.tenant_id, row.user_id === null ? null : Number(row.user_id), row.status, num2(row.total), new Date(row.placed_at).getTime(), row.notes];
  if (!('order_items' in row)) return base;
  const user = row.user !== undefined ? row.user : row.users;
  const u = user === null ? null : [String(user.id), user.tenant_id, user.email, user.name];
  const items = row.order_items.map((i) => [String(i.id), i.tenant_id, String(i.order_id), i.product, i.qty, num2(i.price)]);
  return [...base, u, items];
}
const rowsOf = (body) => (Array.isArray(body) ? body : Array.isArray(body.data) ? body.data : [body.data]);

async function check(scenario, servers, token) {
  const answers = [];
  for (let i = 0; i < scenario.paths.length; i++) {
    const expected = [];
    for (const s of servers) {
      const urlPath = onPostgrestUrls(s.kind) ? scenario.postgrestPaths[i] : scenario.paths[i];
      const res = await fetch(s.base + urlPath, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${s.kind} GET ${urlPath}: ${res.status} ${text.slice(0, 300)}`);
      const rows = rowsOf(JSON.parse(text)).map(normalizeOrder);
      if (rows.length === 0 || rows.some((r) => r[1] !== TENANTS[0])) throw new Error(`${s.kind} GET ${urlPath}: no rows, or another tenant's`);
      expected.push(JSON.stringify(rows));
      if (s.kind === 'tablegate' || s.kind === 'postgrest') answers.push({ url: urlPath, type: res.headers.get('content-type'), body: text });
    }
    if (new Set(expected).size !== 1) throw new Error(`${scenario.name} #${i}: the servers returned different rows\n${expected.map((e, k) => `${servers[k].kind}: ${e.slice(0, 300)}`).join('\n')}`);
  }
  return answers;
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main() {
  const duration = envNumber('BENCH_DURATION', 8, 1);
  const warmup = envNumber('BENCH_WARMUP', 2, 0);
  const rounds = Math.floor(envNumber('BENCH_ROUNDS', 1, 1));
  const rowCount = Math.floor(envNumber('BENCH_ROWS', 100000, 1000));
  const only = (process.env.BENCH_SCENARIOS || 'list,get,expanded').split(',');
  const kindsWanted = (process.env.BENCH_SERVERS || 'hand-written,tablegate,ref,postgrest,ceiling').split(',');
  if (DIST_B && !kindsWanted.includes('tablegate-b')) kindsWanted.push('tablegate-b');
  if (kindsWanted.includes('ref') && !fs.existsSync(path.join(REF_DIST, 'index.js'))) {
    throw new Error(`no reference build in ${REF_DIST}: run \`node bench/build-reference.js 5bd9cb5\` first (or set TABLEGATE_REF_DIST)`);
  }
  const jwt = require('jsonwebtoken');
  const loadBefore = os.loadavg();
  const database = await startDatabase();
  const servers = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-reads-'));
  let failed = false;
  let monitor;
  try {
    const fixture = await loadFixture(database.adminUrl, rowCount);
    monitor = new (require('pg').Client)({ connectionString: withDatabase(database.adminUrl, DB_NAME), application_name: 'bench-monitor' });
    await monitor.connect();
    const ids = (await monitor.query(`SELECT id::text FROM bench.orders WHERE tenant_id = $1 AND id % 97 = 0 ORDER BY id LIMIT ${GET_IDS}`, [TENANTS[0]])).rows.map((r) => r.id);
    console.log(`fixture: ${fixture.orders} orders, ${fixture.items} items over ${TENANTS.length} tenants, RLS forced`);

    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = jwt.sign({ tenant_id: TENANTS[0], user_id: '42', sub: 'user-42', role: 'member' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    const config = { appUrl: fixture.appUrl, jwtSecret };
    const scenarios = [
      {
        name: 'list',
        paths: STATUSES.map((s) => `/api/orders?status=eq.${s}&limit=${LIST_LIMIT}`),
        postgrestPaths: STATUSES.map((s) => `/api/orders?status=eq.${s}&order=id&limit=${LIST_LIMIT}`),
      },
      { name: 'get', paths: ids.map((id) => `/api/orders/${id}`), postgrestPaths: ids.map((id) => `/api/orders?id=eq.${id}`) },
      {
        name: 'expanded',
        paths: [0, 40, 200].flatMap((o) => STATUSES.map((s) => `/api/orders?status=eq.${s}&limit=${LIST_LIMIT}&offset=${o}&expand=user,nested:order_items`)),
        postgrestPaths: [0, 40, 200].flatMap((o) => STATUSES.map((s) => `/api/orders?select=*,users(*),order_items(*)&status=eq.${s}&order=id&limit=${LIST_LIMIT}&offset=${o}`)),
      },
    ].filter((s) => only.includes(s.name));

    const dbServers = [];
    const ceilings = ['ceiling', 'ceiling-db'];
    for (const kind of kindsWanted.filter((k) => !ceilings.includes(k))) dbServers.push(await spawnServer(__filename, kind, config));
    servers.push(...dbServers);
    const answers = [];
    for (const scenario of scenarios) answers.push(...(await check(scenario, dbServers, token)));
    console.log(`check: ${dbServers.map((s) => s.kind).join(', ')} return 200 and the same rows of the token's tenant for every URL`);
    for (const kind of ceilings) if (kindsWanted.includes(kind)) servers.push(await spawnServer(__filename, kind, { appUrl: fixture.appUrl, jwtSecret, answers }));

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      for (const [index, scenario] of scenarios.entries()) {
        const order = servers.map((_, i) => servers[(i + round + index) % servers.length]);
        for (const server of order) {
          const paths = onPostgrestUrls(server.kind) ? scenario.postgrestPaths : scenario.paths;
          const scriptFile = path.join(tmp, `${scenario.name}-${server.kind}.lua`);
          fs.writeFileSync(scriptFile, wrkScript(paths, token));
          if (warmup > 0) await wrk(server.base, scriptFile, warmup);
          const cpu0 = { server: await server.cpuMicros(), postgres: server.kind === 'ceiling' ? null : await backendCpu(monitor, DB_NAME) };
          const raw = await wrk(server.base, scriptFile, duration);
          const cpu1 = { server: await server.cpuMicros(), postgres: server.kind === 'ceiling' ? null : await backendCpu(monitor, DB_NAME) };
          const n = raw.requests || 1;
          const pgCpu = backendCpuDelta(cpu0.postgres, cpu1.postgres);
          const run = {
            round: round + 1,
            scenario: scenario.name,
            server: server.kind,
            reqPerSec: raw.requests / (raw.duration_us / 1e6),
            p50: raw.p50_us / 1000,
            p99: raw.p99_us / 1000,
            serverCpuUsPerReq: (cpu1.server - cpu0.server) / n,
            postgresCpuUsPerReq: pgCpu === null ? null : pgCpu / n,
            non2xx: raw.non2xx,
            errors: raw.errors,
            loadavg: Number(os.loadavg()[0].toFixed(2)),
          };
          runs.push(run);
          console.log(
            `round ${run.round} ${scenario.name.padEnd(8)} ${server.kind.padEnd(12)} ${run.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${run.p50.toFixed(2)} ms  p99 ${run.p99.toFixed(2)} ms` +
              `  CPU/req: server ${run.serverCpuUsPerReq.toFixed(0)} us, postgres ${run.postgresCpuUsPerReq === null ? 'n/a' : run.postgresCpuUsPerReq.toFixed(0)} us  load ${run.loadavg}  (non-2xx ${run.non2xx}, errors ${run.errors})`,
          );
          if (run.non2xx || run.errors) failed = true;
        }
      }
    }

    const kinds = servers.map((s) => s.kind);
    const table = scenarios.map((scenario) => {
      const of = (kind) => runs.filter((r) => r.scenario === scenario.name && r.server === kind);
      const row = { scenario: scenario.name };
      for (const kind of kinds) {
        const rs = of(kind);
        row[kind] = {
          reqPerSec: median(rs.map((r) => r.reqPerSec)),
          p50: median(rs.map((r) => r.p50)),
          p99: median(rs.map((r) => r.p99)),
          serverCpuUsPerReq: median(rs.map((r) => r.serverCpuUsPerReq)),
          postgresCpuUsPerReq: rs.some((r) => r.postgresCpuUsPerReq === null) ? null : median(rs.map((r) => r.postgresCpuUsPerReq)),
        };
      }
      // Ratios within each round (the closest machine state), then their median.
      const perRound = (a, b) => median(Array.from({ length: rounds }, (_, i) => {
        const x = runs.find((r) => r.round === i + 1 && r.scenario === scenario.name && r.server === a);
        const y = runs.find((r) => r.round === i + 1 && r.scenario === scenario.name && r.server === b);
        return x && y ? x.reqPerSec / y.reqPerSec : NaN;
      }));
      row.ratios = {};
      for (const kind of kinds) if (kind !== 'hand-written' && row['hand-written']) row.ratios[kind] = perRound(kind, 'hand-written');
      if (row.postgrest && row.tablegate) row.ratios.postgrestToDefault = perRound('postgrest', 'tablegate');
      return row;
    });

    console.log('');
    console.log(`node ${process.version}, PostgreSQL ${fixture.serverVersion}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}); load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`wrk, ${CONNECTIONS} connections, ${warmup} s warm-up + ${duration} s measured, ${rounds} round(s)${rounds > 1 ? ' (medians; ratios are medians of per-round ratios)' : ''}; ref = ${path.relative(process.cwd(), REF_DIST)}`);
    console.log('');
    console.log('| scenario | server | req/s | x hand-written | p50 ms | p99 ms | server CPU us/req | over ceiling us/req | over ceiling-db us/req | postgres CPU us/req |');
    console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const row of table) {
      for (const kind of kinds) {
        const r = row[kind];
        const ratio = row.ratios[kind] === undefined ? '' : `${row.ratios[kind].toFixed(2)}x`;
        const overOf = (floor) => (row[floor] && !ceilings.includes(kind) && kind !== 'hand-written' ? (r.serverCpuUsPerReq - row[floor].serverCpuUsPerReq).toFixed(0) : '');
        console.log(`| ${row.scenario} | ${kind} | ${r.reqPerSec.toFixed(0)} | ${ratio} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.serverCpuUsPerReq.toFixed(0)} | ${overOf('ceiling')} | ${overOf('ceiling-db')} | ${r.postgresCpuUsPerReq === null ? 'n/a' : r.postgresCpuUsPerReq.toFixed(0)} |`);
      }
    }
    console.log('');
    for (const row of table) if (row.ratios.postgrestToDefault !== undefined) console.log(`${row.scenario}: postgrest / tablegate dialect req/s ${row.ratios.postgrestToDefault.toFixed(2)}x`);

    const outDir = path.join(__dirname, 'results');
    fs.mkdirSync(outDir, { recursive: true });
    const report = {
      date: new Date().toISOString(),
      settings: { tool: 'wrk', connections: CONNECTIONS, warmupSeconds: warmup, durationSeconds: duration, rounds, orders: fixture.orders, dist: path.relative(process.cwd(), DIST), ref: path.relative(process.cwd(), REF_DIST) },
      machine: { node: process.version, postgres: fixture.serverVersion, cores: os.cpus().length, loadavgBefore: loadBefore.map((x) => Number(x.toFixed(2))), loadavgAfter: os.loadavg().map((x) => Number(x.toFixed(2))) },
      scenarios: table,
      runs,
    };
    fs.writeFileSync(path.join(outDir, 'reads-latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`written: ${path.relative(process.cwd(), path.join(outDir, 'reads-latest.json'))}`);
    if (failed) console.error('FAILED: some requests were errors or non-2xx responses during the load');
  } finally {
    if (monitor) await monitor.end().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
    if (!database.embedded) await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch((e) => console.error(`cleanup: ${e.message}`));
    await database.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

runScript(main, (kind) => serverMain(kind, starters));
