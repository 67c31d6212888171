#!/usr/bin/env node
// Relations benchmark: a page of 20 orders, each with its user (many-to-one) and its items
// (one-to-many), through tablegate (`expand=user,nested:order_items`) against a hand-written
// Express + pg route that fetches the same thing with one SQL statement, in the same run.
// Results and method: docs/performance.md ("Relations"). Run after `npm run build`:
//   node bench/relations.js
// TABLEGATE_DIST=<dir> runs it against another build of lib/ (default dist/cjs); the directory
// must hold index.js and cli/embedded-postgres.js.
//
// Process layout as bench/run.js: this process loads the fixture, checks both servers and drives
// autocannon; each server runs in its own child process (this file with `--server`).
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { DIST_B, envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, serverMain, spawnServer, SCHEMA, TENANTS, STATUSES, startTablegate, asTenant, HttpError, createAuthenticate, errorHandler, fetchJson, median, backendCpu, backendCpuDelta, fmtCpu, runScript } = require('./lib');
const DB_NAME = 'tablegate_bench_relations';
const APP_ROLE = 'tablegate_bench_app';
const LIST_LIMIT = 20;
const USERS = 4000;

// ---------------------------------------------------------------------------------------------
// Server processes
// ---------------------------------------------------------------------------------------------

// Server A: tablegate as a host application would mount it (startTablegate in bench/lib.js).

/**
 * Server B: the best a careful developer writes by hand. No N+1, and no rows in Node: one
 * statement builds the whole response body as JSON text in PostgreSQL (the page limited first,
 * each order's user by a correlated `to_json` subquery, its items by a correlated `json_agg`, the
 * envelope by `json_build_object`), inside BEGIN READ ONLY + the same set_config context + COMMIT
 * (four round trips). pg returns the text column as a string (no JSON.parse) and the route writes
 * it as is, as tablegate's sendJson does (no res.json(), no ETag).
 */
async function startBaseline(app, { appUrl, jwtSecret }) {
  const pg = require('pg');
  const pool = new pg.Pool({ connectionString: appUrl, max: 10, application_name: 'baseline' });
  const authenticate = createAuthenticate(jwtSecret);

  app.get('/api/orders', async (req, res) => {
    const claims = authenticate(req);
    const raw = typeof req.query.status === 'string' ? req.query.status : undefined;
    if (raw === undefined) throw new HttpError(400, 'status is required');
    const status = raw.startsWith('eq.') ? raw.slice(3) : raw;
    const limit = Math.min(Number(req.query.limit ?? 100) || 100, 1000);
    const offset = Number(req.query.offset ?? 0) || 0;
    const { rows } = await asTenant(pool, claims, true, (client) => client.query(BASELINE_SQL, [status, limit, offset]));
    const text = rows[0].body;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
  });

  app.use(errorHandler);
  return () => pool.end();
}

/**
 * The baseline's statement. The page is limited first, then each of its 20 orders gets its user
 * and items: correlated subqueries in the select list of the outer query only run for the page
 * rows (in the select list of the limited query they would also run for every row skipped by
 * OFFSET). The envelope (data, count, limit, offset) is built around the page in the same
 * statement, so Node only forwards one text value.
 */
const BASELINE_SQL = `
    SELECT json_build_object('data', coalesce(json_agg(p ORDER BY p.id), '[]'), 'count', count(*), 'limit', $2::int, 'offset', $3::int)::text AS body
    FROM (SELECT o.id, o.tenant_id, o.user_id, o.status, o.total, o.placed_at, o.notes,
                 (SELECT to_json(u) FROM (SELECT u.id, u.tenant_id, u.email, u.name FROM ${SCHEMA}.users u WHERE u.id = o.user_id) u) AS "user",
                 (SELECT coalesce(json_agg(i ORDER BY i.id), '[]') FROM (SELECT i.id, i.tenant_id, i.order_id, i.product, i.qty, i.price
                    FROM ${SCHEMA}.order_items i WHERE i.order_id = o.id) i) AS order_items
          FROM (SELECT id, tenant_id, user_id, status, total, placed_at, notes FROM ${SCHEMA}.orders
                WHERE status = $1 ORDER BY id LIMIT $2 OFFSET $3) o) p`;

// ---------------------------------------------------------------------------------------------
// Database
// ---------------------------------------------------------------------------------------------

/**
 * users (4,000, tenant = id % 4), orders (`rows`, tenant = i % 4, user of the same tenant, every
 * 50th without a user), order_items (order o has (o / 4) % 4 items: 0 to 3 in every tenant). RLS forced on all three.
 */
async function loadFixture(adminUrl, rows) {
  const { Client } = require('pg');
  const { adminDbUrl: dbAdminUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);
  const db = new Client({ connectionString: dbAdminUrl });
  await db.connect();
  const t0 = performance.now();
  try {
    const tenants = `ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}]`;
    const statuses = `ARRAY[${STATUSES.map((s) => `'${s}'`).join(', ')}]`;
    const rls = (table) => `
      ALTER TABLE ${SCHEMA}.${table} ENABLE ROW LEVEL SECURITY;
      ALTER TABLE ${SCHEMA}.${table} FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON ${SCHEMA}.${table} USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
      GRANT SELECT ON ${SCHEMA}.${table} TO ${APP_ROLE};`;
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.users (id int PRIMARY KEY, tenant_id uuid NOT NULL, email text NOT NULL, name text NOT NULL);
      INSERT INTO ${SCHEMA}.users SELECT u, (${tenants})[(u % 4) + 1], 'user' || u || '@example.com', 'User ' || u FROM generate_series(0, ${USERS - 1}) AS u;
      CREATE TABLE ${SCHEMA}.orders (
        id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, user_id int REFERENCES ${SCHEMA}.users (id),
        status text, total numeric(12,2), placed_at timestamptz, notes text);
      INSERT INTO ${SCHEMA}.orders (tenant_id, user_id, status, total, placed_at, notes)
      SELECT (${tenants})[(i % 4) + 1], CASE WHEN i % 50 = 0 THEN NULL ELSE 4 * ((i * 7) % ${USERS / 4}) + (i % 4) END,
             (${statuses})[(i % 5) + 1], ((i * 7919) % 100000) / 100.0,
             timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute',
             CASE WHEN i % 7 = 0 THEN NULL ELSE 'order ' || i END
      FROM generate_series(1, ${rows}) AS i ORDER BY i;
      CREATE TABLE ${SCHEMA}.order_items (
        id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, order_id bigint NOT NULL REFERENCES ${SCHEMA}.orders (id),
        product text NOT NULL, qty int NOT NULL, price numeric(10,2) NOT NULL);
      INSERT INTO ${SCHEMA}.order_items (tenant_id, order_id, product, qty, price)
      SELECT o.tenant_id, o.id, 'product ' || (o.id * n % 500), n, ((o.id * n * 31) % 10000) / 100.0
      FROM ${SCHEMA}.orders o CROSS JOIN LATERAL generate_series(1, ((o.id / 4) % 4)::int) AS n ORDER BY o.id, n;
      CREATE INDEX orders_tenant_status_id ON ${SCHEMA}.orders (tenant_id, status, id);
      CREATE INDEX order_items_order_id ON ${SCHEMA}.order_items (order_id);
      GRANT CONNECT ON DATABASE ${DB_NAME} TO ${APP_ROLE};
      GRANT USAGE ON SCHEMA ${SCHEMA} TO ${APP_ROLE};
      ${rls('users')} ${rls('orders')} ${rls('order_items')}
      ANALYZE ${SCHEMA}.users; ANALYZE ${SCHEMA}.orders; ANALYZE ${SCHEMA}.order_items;
    `);
    const counts = await db.query(`SELECT (SELECT count(*) FROM ${SCHEMA}.orders)::int AS orders, (SELECT count(*) FROM ${SCHEMA}.order_items)::int AS items`);
    const version = await db.query('SHOW server_version');
    return { appUrl, ...counts.rows[0], serverVersion: version.rows[0].server_version, loadMs: performance.now() - t0 };
  } finally {
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Check and load
// ---------------------------------------------------------------------------------------------

/** One order with its user and items, as comparable text (pg gives numeric/bigint as strings). */
function normalizeOrder(row) {
  const num = (v) => (v === null || v === undefined ? null : Number(v).toFixed(2));
  const user = row.user === null ? null : [String(row.user.id), row.user.tenant_id, row.user.email, row.user.name];
  if (!Array.isArray(row.order_items)) throw new Error(`order ${row.id}: order_items is not an array`);
  const items = row.order_items.map((i) => [String(i.id), i.tenant_id, String(i.order_id), i.product, i.qty, num(i.price)]);
  return [String(row.id), row.tenant_id, row.user_id === null ? null : Number(row.user_id), row.status, num(row.total), new Date(row.placed_at).getTime(), row.notes, user, items];
}

async function verify(servers, paths, token) {
  for (const urlPath of paths) {
    const answers = await Promise.all(servers.map((s) => fetchJson(s.base + urlPath, token)));
    const offset = Number(new URL(urlPath, 'http://x').searchParams.get('offset'));
    servers.forEach((s, i) => {
      const r = answers[i];
      if (r.status !== 200) throw new Error(`${s.kind} GET ${urlPath}: status ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
      if (r.body.data.length !== LIST_LIMIT) throw new Error(`${s.kind} GET ${urlPath}: ${r.body.data.length} rows`);
      if (r.body.count !== LIST_LIMIT || r.body.limit !== LIST_LIMIT || r.body.offset !== offset) throw new Error(`${s.kind} GET ${urlPath}: wrong envelope`);
    });
    const [ra, ...others] = answers.map((r) => r.body.data.map(normalizeOrder));
    others.forEach((rb, i) => {
      if (JSON.stringify(ra) !== JSON.stringify(rb)) {
        throw new Error(`GET ${urlPath}: the servers returned different rows\n ${servers[0].kind}: ${JSON.stringify(ra).slice(0, 600)}\n ${servers[i + 1].kind}:  ${JSON.stringify(rb).slice(0, 600)}`);
      }
    });
    const tenants = new Set(ra.flatMap((r) => [r[1], r[7]?.[1], ...r[8].map((i) => i[1])]).filter((t) => t !== undefined && t !== null));
    if (tenants.size !== 1 || !tenants.has(TENANTS[0])) throw new Error(`GET ${urlPath}: rows of another tenant came back`);
    if (!ra.some((r) => r[8].length > 1) || !ra.some((r) => r[8].length === 0) || !ra.some((r) => r[7] !== null)) {
      throw new Error(`GET ${urlPath}: the page does not exercise users and items`);
    }
  }
}

function load(base, paths, token, seconds) {
  const autocannon = require('autocannon');
  let next = 0;
  return autocannon({
    url: base,
    connections: 20,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
    requests: [{ setupRequest: (req) => ((req.path = paths[next++ % paths.length]), req) }],
  });
}

async function main() {
  const duration = envNumber('BENCH_DURATION', 10, 1);
  const warmup = envNumber('BENCH_WARMUP', 3, 0);
  const rounds = Math.floor(envNumber('BENCH_ROUNDS', 1, 1));
  const rowCount = Math.floor(envNumber('BENCH_ROWS', 100000, 1000));
  const jwt = require('jsonwebtoken');
  const loadBefore = os.loadavg();
  const database = await startDatabase();
  const servers = [];
  let failed = false;
  let monitor;
  try {
    const fixture = await loadFixture(database.adminUrl, rowCount);
    // Sees the servers' backends in pg_stat_activity (as a superuser) to measure their CPU.
    monitor = new (require('pg').Client)({ connectionString: withDatabase(database.adminUrl, DB_NAME), application_name: 'bench-monitor' });
    await monitor.connect();
    console.log(`fixture: ${fixture.orders} orders, ${fixture.items} items, ${USERS} users over ${TENANTS.length} tenants, RLS forced (${Math.round(fixture.loadMs)} ms)`);
    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = jwt.sign({ tenant_id: TENANTS[0], user_id: '42', role: 'member' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    const config = { appUrl: fixture.appUrl, jwtSecret };
    servers.push(await spawnServer(__filename, 'tablegate', config), await spawnServer(__filename, 'baseline', config));
    if (DIST_B) servers.push(await spawnServer(__filename, 'tablegate-b', { ...config, dist: DIST_B }));
    const kinds = servers.map((s) => s.kind);

    // Offsets spread the pages over the table; the same sequence goes to every server.
    const paths = [];
    for (const offset of [0, 40, 200]) for (const s of STATUSES) paths.push(`/api/orders?status=eq.${s}&limit=${LIST_LIMIT}&offset=${offset}&expand=user,nested:order_items`);
    await verify(servers, paths, token);
    console.log('check: every server returns 200 and the same 20 orders with the same users and items, all of the token\'s tenant');

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      // Rotate which server goes first, per round, to reduce order bias.
      const order = servers.map((_, i) => servers[(i + round) % servers.length]);
      for (const server of order) {
        if (warmup > 0) await load(server.base, paths, token, warmup);
        const cpu0 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
        const raw = await load(server.base, paths, token, duration);
        const cpu1 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
        const requests = raw.requests.total || 1;
        const postgres = backendCpuDelta(cpu0.postgres, cpu1.postgres);
        const result = {
          round: round + 1,
          server: server.kind,
          reqPerSec: raw.requests.average,
          p50: raw.latency.p50,
          p99: raw.latency.p99,
          serverCpuMsPerReq: (cpu1.server - cpu0.server) / 1000 / requests,
          postgresCpuMsPerReq: postgres === null ? null : postgres / 1000 / requests,
          loadavg: Number(os.loadavg()[0].toFixed(2)),
          non2xx: raw.non2xx,
          errors: raw.errors,
        };
        runs.push(result);
        console.log(
          `round ${result.round} ${server.kind.padEnd(11)} ${result.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${result.p50} ms  p99 ${result.p99} ms` +
            `  CPU/req: server ${result.serverCpuMsPerReq.toFixed(3)} ms, postgres ${fmtCpu(result.postgresCpuMsPerReq)} ms  load ${result.loadavg}  (non-2xx ${result.non2xx}, errors ${result.errors})`,
        );
        if (raw.non2xx || raw.errors || raw.timeouts) failed = true;
      }
    }
    const agg = (kind) => {
      const rs = runs.filter((r) => r.server === kind);
      const pgCpu = rs.some((r) => r.postgresCpuMsPerReq === null) ? null : median(rs.map((r) => r.postgresCpuMsPerReq));
      return { reqPerSec: median(rs.map((r) => r.reqPerSec)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), serverCpuMsPerReq: median(rs.map((r) => r.serverCpuMsPerReq)), postgresCpuMsPerReq: pgCpu };
    };
    const results = Object.fromEntries(kinds.map((k) => [k, agg(k)]));
    // Ratios per round (same round = closest machine state), and their median.
    const perRound = (kind) =>
      Array.from({ length: rounds }, (_, i) => {
        const ra = runs.find((r) => r.round === i + 1 && r.server === kind);
        const rb = runs.find((r) => r.round === i + 1 && r.server === 'baseline');
        return ra.reqPerSec / rb.reqPerSec;
      });
    const ratios = Object.fromEntries(kinds.filter((k) => k !== 'baseline').map((k) => [k, { median: results[k].reqPerSec / results.baseline.reqPerSec, perRound: perRound(k) }]));
    console.log('');
    console.log(`node ${process.version}, PostgreSQL ${fixture.serverVersion}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}); load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`20 connections, ${warmup} s warm-up + ${duration} s measured, ${rounds} round(s)${rounds > 1 ? ' (medians)' : ''}${DIST_B ? `; tablegate-b = ${path.relative(process.cwd(), DIST_B)}` : ''}`);
    console.log('| server | req/s | p50 ms | p99 ms | server CPU ms/req | postgres CPU ms/req | /baseline req/s |');
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const kind of kinds) {
      const r = results[kind];
      const ratio = ratios[kind] ? `**${ratios[kind].median.toFixed(2)}x**` : '';
      console.log(`| ${kind} | ${r.reqPerSec.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.serverCpuMsPerReq.toFixed(3)} | ${fmtCpu(r.postgresCpuMsPerReq)} | ${ratio} |`);
    }
    for (const [kind, r] of Object.entries(ratios)) {
      console.log(`\n${kind}/baseline req/s: ${r.median.toFixed(2)}x (per round: ${r.perRound.map((x) => `${x.toFixed(2)}x`).join(', ')}; target >= 1.5x)`);
    }

    const outDir = path.join(__dirname, 'results');
    fs.mkdirSync(outDir, { recursive: true });
    const report = {
      date: new Date().toISOString(),
      settings: { connections: 20, warmupSeconds: warmup, durationSeconds: duration, rounds, orders: fixture.orders, items: fixture.items, users: USERS, listLimit: LIST_LIMIT, distB: DIST_B && path.relative(process.cwd(), DIST_B) },
      machine: { node: process.version, postgres: fixture.serverVersion, cores: os.cpus().length, loadavgBefore: loadBefore.map((x) => Number(x.toFixed(2))), loadavgAfter: os.loadavg().map((x) => Number(x.toFixed(2))) },
      results,
      ratios,
      runs,
    };
    fs.writeFileSync(path.join(outDir, 'relations-latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    if (failed) console.error('FAILED: some requests were errors or non-2xx responses during the load');
  } finally {
    if (monitor) await monitor.end().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
    if (!database.embedded) await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch((e) => console.error(`cleanup: ${e.message}`));
    await database.stop();
  }
  process.exitCode = failed ? 1 : 0;
}

// Required by a script of its own (e.g. to hold the fixture for EXPLAIN), it only exports.
if (require.main === module) runScript(main, (kind) => serverMain(kind, { tablegate: startTablegate, 'tablegate-b': startTablegate, baseline: startBaseline }));

module.exports = { loadFixture, BASELINE_SQL, DB_NAME, APP_ROLE };
