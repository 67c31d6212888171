#!/usr/bin/env node
// Function-call (RPC) benchmark: POST /api/rpc/{function} through tablegate against a
// hand-written Express + pg route that calls the same function in the same tenant context, in the
// same run. Three workloads, one per result shape:
//   read   orders_by_status(p_status, p_limit): SETOF bench.orders, STABLE, 20 rows per call
//   scalar order_total(p_status): numeric, STABLE, a sum over the tenant's orders of one status
//   write  touch_order(p_id, p_note): bench.orders, VOLATILE, an UPDATE ... RETURNING *
// Results and method: docs/performance.md ("Function calls (RPC)"). Run after `npm run build`:
//   node bench/rpc.js
// TABLEGATE_DIST=<dir> runs it against another build of lib/ (default dist/cjs); the directory
// must hold index.js and cli/embedded-postgres.js. TABLEGATE_BENCH_DATABASE_URL=<superuser url>
// uses an existing server (the database tablegate_bench_rpc and the role tablegate_bench_app are
// dropped and recreated there, and dropped at the end).
//
// Process layout as bench/run.js: this process loads the fixture, checks both servers and drives
// autocannon; each server runs in its own child process (this file with `--server`).
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, serverMain, spawnServer, SCHEMA, TENANTS, STATUSES, startTablegate, asTenant, HttpError, createAuthenticate, errorHandler, median, backendCpu, backendCpuDelta, fmtCpu, runScript } = require('./lib');
const DB_NAME = 'tablegate_bench_rpc';
const APP_ROLE = 'tablegate_bench_app';
const COLUMNS = ['id', 'tenant_id', 'status', 'total', 'placed_at', 'notes'];
const LIST_LIMIT = 20;
const WRITE_IDS = 1000;

// ---------------------------------------------------------------------------------------------
// Server processes
// ---------------------------------------------------------------------------------------------

// Server A: tablegate as a host application would mount it (startTablegate in bench/lib.js).

/**
 * Server B: what a careful developer writes by hand for the three calls. express.json() parses
 * the body, jsonwebtoken verifies the HS256 token (a KeyObject, as in bench/run.js), then on one
 * pooled client: BEGIN (READ ONLY for the STABLE functions), the same set_config(...) context
 * statement tablegate sends, `SELECT ... FROM bench.fn($1, $2)`, COMMIT: four round trips,
 * unnamed statements as pg sends them by default. pg parses the rows into objects (numeric and
 * bigint as strings, timestamptz as a Date) and res.json() serialises them, in tablegate's
 * shapes: an array of rows for SETOF, the bare value for a scalar, one object for a row.
 */
async function startBaseline(app, { appUrl, jwtSecret }) {
  const express = require('express');
  const pg = require('pg');
  const pool = new pg.Pool({ connectionString: appUrl, max: 10, application_name: 'baseline' });
  const authenticate = createAuthenticate(jwtSecret);
  /** The rows of `text` with `values`, in the claims' tenant context (asTenant in bench/lib.js). */
  const call = async (claims, readOnly, text, values) => (await asTenant(pool, claims, readOnly, (client) => client.query(text, values))).rows;

  const body = (req) => {
    if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) throw new HttpError(400, 'a JSON object is required');
    return req.body;
  };
  const text = (v, name) => {
    if (typeof v !== 'string') throw new HttpError(400, `${name} must be a string`);
    return v;
  };

  app.use(express.json());

  app.post('/api/rpc/orders_by_status', async (req, res) => {
    const claims = authenticate(req);
    const { p_status, p_limit } = body(req);
    const rows = await call(claims, true, `SELECT ${COLUMNS.join(', ')} FROM ${SCHEMA}.orders_by_status($1, $2)`, [text(p_status, 'p_status'), p_limit ?? 20]);
    res.json({ data: rows });
  });

  app.post('/api/rpc/order_total', async (req, res) => {
    const claims = authenticate(req);
    const { p_status } = body(req);
    const rows = await call(claims, true, `SELECT v FROM ${SCHEMA}.order_total($1) AS v`, [text(p_status, 'p_status')]);
    res.json({ data: rows[0].v });
  });

  app.post('/api/rpc/touch_order', async (req, res) => {
    const claims = authenticate(req);
    const { p_id, p_note } = body(req);
    if (p_id === undefined) throw new HttpError(400, 'p_id is required');
    const rows = await call(claims, false, `SELECT ${COLUMNS.join(', ')} FROM ${SCHEMA}.touch_order($1, $2)`, [p_id, p_note ?? null]);
    res.json({ data: rows[0] ?? null });
  });

  app.use(errorHandler);
  return () => pool.end();
}

// ---------------------------------------------------------------------------------------------
// Database
// ---------------------------------------------------------------------------------------------

/**
 * bench.orders (`rows`, tenant = i % 4, status = i % 5), RLS enabled and forced, index
 * (tenant_id, status, id), and the three SECURITY INVOKER functions; the role may SELECT and
 * UPDATE the table.
 */
async function loadFixture(adminUrl, rows) {
  const { Client } = require('pg');
  const { adminDbUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);
  const db = new Client({ connectionString: adminDbUrl });
  await db.connect();
  const t0 = performance.now();
  try {
    const tenants = `ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}]`;
    const statuses = `ARRAY[${STATUSES.map((s) => `'${s}'`).join(', ')}]`;
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (
        id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, status text, total numeric(12,2),
        placed_at timestamptz, notes text);
      INSERT INTO ${SCHEMA}.orders (tenant_id, status, total, placed_at, notes)
      SELECT (${tenants})[(i % 4) + 1], (${statuses})[(i % 5) + 1], ((i * 7919) % 100000) / 100.0,
             timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute',
             CASE WHEN i % 7 = 0 THEN NULL ELSE 'order ' || i END
      FROM generate_series(1, ${rows}) AS i ORDER BY i;
      CREATE INDEX orders_tenant_status_id ON ${SCHEMA}.orders (tenant_id, status, id);
      ALTER TABLE ${SCHEMA}.orders ENABLE ROW LEVEL SECURITY;
      ALTER TABLE ${SCHEMA}.orders FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON ${SCHEMA}.orders
        USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);

      CREATE FUNCTION ${SCHEMA}.orders_by_status(p_status text, p_limit integer DEFAULT 20)
        RETURNS SETOF ${SCHEMA}.orders LANGUAGE sql STABLE SECURITY INVOKER
        AS $$ SELECT * FROM ${SCHEMA}.orders WHERE status = p_status ORDER BY id LIMIT p_limit $$;
      CREATE FUNCTION ${SCHEMA}.order_total(p_status text)
        RETURNS numeric LANGUAGE sql STABLE SECURITY INVOKER
        AS $$ SELECT sum(total) FROM ${SCHEMA}.orders WHERE status = p_status $$;
      CREATE FUNCTION ${SCHEMA}.touch_order(p_id bigint, p_note text)
        RETURNS ${SCHEMA}.orders LANGUAGE sql VOLATILE SECURITY INVOKER
        AS $$ UPDATE ${SCHEMA}.orders SET notes = p_note WHERE id = p_id RETURNING * $$;

      GRANT CONNECT ON DATABASE ${DB_NAME} TO ${APP_ROLE};
      GRANT USAGE ON SCHEMA ${SCHEMA} TO ${APP_ROLE};
      GRANT SELECT, UPDATE ON ${SCHEMA}.orders TO ${APP_ROLE};
      ANALYZE ${SCHEMA}.orders;
    `);
    const count = await db.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.orders`);
    // Ids of the token's tenant (TENANTS[0]) for the write workload, spread over the whole table.
    const ids = await db.query(
      `SELECT id::text FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM ${SCHEMA}.orders WHERE tenant_id = $1) s
       WHERE rn % greatest(1, (SELECT count(*) FROM ${SCHEMA}.orders WHERE tenant_id = $1) / ${WRITE_IDS}) = 0 ORDER BY id LIMIT ${WRITE_IDS}`,
      [TENANTS[0]],
    );
    const foreign = await db.query(`SELECT id::text FROM ${SCHEMA}.orders WHERE tenant_id = $1 ORDER BY id LIMIT 1`, [TENANTS[1]]);
    const version = await db.query('SHOW server_version');
    return {
      appUrl,
      adminDbUrl,
      rows: count.rows[0].n,
      tenantIds: ids.rows.map((r) => r.id),
      foreignId: foreign.rows[0].id,
      serverVersion: version.rows[0].server_version,
      loadMs: performance.now() - t0,
    };
  } finally {
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Correctness check and load
// ---------------------------------------------------------------------------------------------

/** POST a JSON body with a bearer token; the response body parsed as JSON when it is JSON. */
async function postJson(url, token, body) {
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/**
 * The servers encode the same values differently (tablegate's are PostgreSQL's to_json: bigint
 * and numeric as JSON numbers, timestamptz as "2024-01-01T00:16:40+00:00"; pg's defaults: bigint
 * and numeric as strings, timestamptz as a Date that Express prints in UTC), so each column is
 * compared by value.
 */
const num = (v) => (v === null || v === undefined ? null : Number(v).toFixed(2));
const normalizers = {
  id: (v) => (v === null ? null : String(v)),
  tenant_id: (v) => v,
  status: (v) => v,
  total: num,
  placed_at: (v) => (v === null ? null : new Date(v).getTime()),
  notes: (v) => v,
};

function normalizeRow(row) {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) throw new Error(`not a row: ${JSON.stringify(row)}`);
  const keys = Object.keys(row).sort();
  if (keys.join(',') !== [...COLUMNS].sort().join(',')) throw new Error(`unexpected columns ${keys.join(', ')}`);
  return COLUMNS.map((c) => normalizers[c](row[c]));
}

/** Calls `fn` with `args` on both servers, one after the other; both must answer 200. */
async function callBoth(servers, fn, args, token) {
  const out = [];
  for (const s of servers) {
    const r = await postJson(`${s.base}/api/rpc/${fn}`, token, args);
    if (r.status !== 200) throw new Error(`${s.kind} POST /api/rpc/${fn} ${JSON.stringify(args)}: status ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    if (!r.body || typeof r.body !== 'object' || !('data' in r.body)) throw new Error(`${s.kind} POST /api/rpc/${fn}: no data in ${JSON.stringify(r.body).slice(0, 300)}`);
    out.push(r.body.data);
  }
  return out;
}

function same(what, a, b) {
  if (JSON.stringify(a) !== JSON.stringify(b)) {
    throw new Error(`${what}: the servers returned different data\n tablegate: ${JSON.stringify(a).slice(0, 600)}\n baseline:  ${JSON.stringify(b).slice(0, 600)}`);
  }
}

async function verify(servers, token, fixture, admin) {
  // read: 20 rows of each status, the same on both, all of the token's tenant.
  for (const status of STATUSES) {
    const [a, b] = await callBoth(servers, 'orders_by_status', { p_status: status, p_limit: LIST_LIMIT }, token);
    if (!Array.isArray(a) || !Array.isArray(b)) throw new Error('orders_by_status: data is not an array');
    const ra = a.map(normalizeRow);
    same(`orders_by_status(${status})`, ra, b.map(normalizeRow));
    if (ra.length !== LIST_LIMIT) throw new Error(`orders_by_status(${status}): ${ra.length} rows`);
    if (ra.some((r) => r[1] !== TENANTS[0] || r[2] !== status)) throw new Error(`orders_by_status(${status}): a row of another tenant or status came back`);
  }
  // scalar: the sum over the tenant's orders, which is not the sum over all tenants.
  for (const status of STATUSES) {
    const [a, b] = await callBoth(servers, 'order_total', { p_status: status }, token);
    if (typeof a !== 'number') throw new Error(`order_total(${status}): tablegate's data is not a number: ${JSON.stringify(a)}`);
    same(`order_total(${status})`, num(a), num(b));
    const { rows } = await admin.query(
      `SELECT sum(total) FILTER (WHERE tenant_id = $1)::text AS tenant, sum(total)::text AS everyone FROM ${SCHEMA}.orders WHERE status = $2`,
      [TENANTS[0], status],
    );
    if (num(a) !== num(rows[0].tenant) || num(a) === num(rows[0].everyone)) throw new Error(`order_total(${status}) = ${a}, expected the tenant's ${rows[0].tenant}`);
  }
  // write: the same id and note on both give the same row, and the row holds the note.
  for (const id of [fixture.tenantIds[0], fixture.tenantIds[fixture.tenantIds.length - 1]]) {
    const note = `check ${id}`;
    const [a, b] = await callBoth(servers, 'touch_order', { p_id: Number(id), p_note: note }, token);
    const ra = normalizeRow(a);
    same(`touch_order(${id})`, ra, normalizeRow(b));
    if (ra[0] !== id || ra[1] !== TENANTS[0] || ra[5] !== note) throw new Error(`touch_order(${id}): wrong row ${JSON.stringify(a)}`);
    const { rows } = await admin.query(`SELECT notes FROM ${SCHEMA}.orders WHERE id = $1`, [id]);
    if (rows[0].notes !== note) throw new Error(`touch_order(${id}): the note was not written`);
  }
  // write, another tenant's order: RLS hides it from the UPDATE; both return no row (an all-null
  // row, as `SELECT * FROM f()` gives for a row function that returned nothing) and it is unchanged.
  const { rows: before } = await admin.query(`SELECT notes FROM ${SCHEMA}.orders WHERE id = $1`, [fixture.foreignId]);
  const [fa, fb] = await callBoth(servers, 'touch_order', { p_id: Number(fixture.foreignId), p_note: 'not mine' }, token);
  for (const [kind, d] of [['tablegate', fa], ['baseline', fb]]) {
    if (d !== null && !(typeof d === 'object' && Object.values(d).every((v) => v === null))) throw new Error(`touch_order of another tenant's order: ${kind} returned ${JSON.stringify(d)}`);
  }
  const { rows: after } = await admin.query(`SELECT notes FROM ${SCHEMA}.orders WHERE id = $1`, [fixture.foreignId]);
  if (after[0].notes !== before[0].notes) throw new Error("touch_order changed another tenant's order");
}

function load(base, workload, token, seconds) {
  const autocannon = require('autocannon');
  const bodies = workload.bodies;
  let next = 0;
  return autocannon({
    url: base,
    method: 'POST',
    connections: 20,
    duration: seconds,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ((req.path = workload.path), (req.body = bodies[next++ % bodies.length]), req) }],
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
    // Superuser connection to the bench database: the check's expected values, VACUUM, and the
    // servers' backends in pg_stat_activity for their CPU time.
    monitor = new (require('pg').Client)({ connectionString: withDatabase(database.adminUrl, DB_NAME), application_name: 'bench-monitor' });
    await monitor.connect();
    console.log(`fixture: ${fixture.rows} orders over ${TENANTS.length} tenants, RLS forced, 3 functions (${Math.round(fixture.loadMs)} ms)`);
    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = jwt.sign({ tenant_id: TENANTS[0], user_id: '42', role: 'member' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    const config = { appUrl: fixture.appUrl, jwtSecret };
    servers.push(await spawnServer(__filename, 'tablegate', config), await spawnServer(__filename, 'baseline', config));

    await verify(servers, token, fixture, monitor);
    console.log(
      "check: both servers return 200 and the same data for every workload, only the token's tenant's rows " +
        "(the sums are the tenant's, another tenant's order is not updated)",
    );

    // The same body sequence goes to both servers (the counter restarts with every load run).
    const workloads = [
      {
        name: 'read',
        description: `orders_by_status: SETOF bench.orders, STABLE, ${LIST_LIMIT} rows (5 statuses in rotation)`,
        path: '/api/rpc/orders_by_status',
        bodies: STATUSES.map((s) => JSON.stringify({ p_status: s, p_limit: LIST_LIMIT })),
      },
      {
        name: 'scalar',
        description: 'order_total: numeric, STABLE, sum over the tenant\'s orders of one status (5 statuses in rotation)',
        path: '/api/rpc/order_total',
        bodies: STATUSES.map((s) => JSON.stringify({ p_status: s })),
      },
      {
        name: 'write',
        description: `touch_order: bench.orders, VOLATILE, UPDATE ... RETURNING * (${fixture.tenantIds.length} ids of the token's tenant round-robin)`,
        path: '/api/rpc/touch_order',
        bodies: fixture.tenantIds.map((id, i) => JSON.stringify({ p_id: Number(id), p_note: `touched ${i}` })),
      },
    ];

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      for (const [index, workload] of workloads.entries()) {
        // Alternate which server goes first, per workload and per round.
        const order = (round + index) % 2 ? [servers[1], servers[0]] : [servers[0], servers[1]];
        for (const server of order) {
          // Every write run starts from a vacuumed table, whoever wrote before it.
          if (workload.name === 'write') await monitor.query(`VACUUM ${SCHEMA}.orders`);
          if (warmup > 0) await load(server.base, workload, token, warmup);
          const cpu0 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
          const raw = await load(server.base, workload, token, duration);
          const cpu1 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
          const requests = raw.requests.total || 1;
          const pgCpu = backendCpuDelta(cpu0.postgres, cpu1.postgres);
          const result = {
            round: round + 1,
            workload: workload.name,
            server: server.kind,
            reqPerSec: raw.requests.average,
            total: raw.requests.total,
            p50: raw.latency.p50,
            p99: raw.latency.p99,
            serverCpuMsPerReq: (cpu1.server - cpu0.server) / 1000 / requests,
            postgresCpuMsPerReq: pgCpu === null ? null : pgCpu / 1000 / requests,
            non2xx: raw.non2xx,
            errors: raw.errors,
            timeouts: raw.timeouts,
          };
          runs.push(result);
          console.log(
            `round ${result.round} ${workload.name.padEnd(6)} ${server.kind.padEnd(9)} ${result.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${result.p50} ms  p99 ${result.p99} ms` +
              `  CPU/req: server ${result.serverCpuMsPerReq.toFixed(3)} ms, postgres ${fmtCpu(result.postgresCpuMsPerReq)} ms  (non-2xx ${result.non2xx}, errors ${result.errors})`,
          );
          if (raw.non2xx || raw.errors || raw.timeouts) failed = true;
        }
      }
    }

    const table = workloads.map((workload) => {
      const agg = (kind) => {
        const rs = runs.filter((r) => r.workload === workload.name && r.server === kind);
        return {
          reqPerSec: median(rs.map((r) => r.reqPerSec)),
          p50: median(rs.map((r) => r.p50)),
          p99: median(rs.map((r) => r.p99)),
          serverCpuMsPerReq: median(rs.map((r) => r.serverCpuMsPerReq)),
          postgresCpuMsPerReq: rs.some((r) => r.postgresCpuMsPerReq === null) ? null : median(rs.map((r) => r.postgresCpuMsPerReq)),
        };
      };
      const perRound = Array.from({ length: rounds }, (_, i) => {
        const of = (kind) => runs.find((r) => r.round === i + 1 && r.workload === workload.name && r.server === kind);
        return of('tablegate').reqPerSec / of('baseline').reqPerSec;
      });
      const a = agg('tablegate');
      const b = agg('baseline');
      // ratio: the median of the per-round ratios; ratioOfMedians: median req/s over median req/s.
      return { workload: workload.name, description: workload.description, tablegate: a, baseline: b, ratio: median(perRound), ratioOfMedians: a.reqPerSec / b.reqPerSec, perRound };
    });

    const machine = {
      node: process.version,
      pg: require('pg/package.json').version,
      express: require('express/package.json').version,
      autocannon: require('autocannon/package.json').version,
      postgres: fixture.serverVersion,
      postgresSource: database.embedded ? 'embedded-postgres' : 'TABLEGATE_BENCH_DATABASE_URL',
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      loadavgBefore: loadBefore.map((x) => Number(x.toFixed(2))),
      loadavgAfter: os.loadavg().map((x) => Number(x.toFixed(2))),
    };
    console.log('');
    console.log(
      `node ${machine.node}, pg ${machine.pg}, express ${machine.express}, autocannon ${machine.autocannon}, PostgreSQL ${machine.postgres}, ` +
        `${machine.cores} cores (${machine.cpu}); load average before ${machine.loadavgBefore.join(' ')}, after ${machine.loadavgAfter.join(' ')}`,
    );
    console.log(`20 connections, ${warmup} s warm-up + ${duration} s measured, ${rounds} round(s)${rounds > 1 ? ' (medians)' : ''}`);
    const line = (cells) => `| ${cells.join(' | ')} |`;
    console.log(line(['workload', 'server', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'postgres CPU ms/req', 'tablegate/baseline req/s']));
    console.log(line(['---', '---', '---:', '---:', '---:', '---:', '---:', '---:']));
    for (const row of table) {
      for (const kind of ['tablegate', 'baseline']) {
        const r = row[kind];
        console.log(line([row.workload, kind, r.reqPerSec.toFixed(0), r.p50, r.p99, r.serverCpuMsPerReq.toFixed(3), fmtCpu(r.postgresCpuMsPerReq), kind === 'tablegate' ? `${row.ratio.toFixed(2)}x` : '']));
      }
    }
    console.log('');
    for (const row of table) {
      console.log(`${row.workload}: tablegate/baseline req/s ${row.ratio.toFixed(2)}x (per round: ${row.perRound.map((x) => `${x.toFixed(2)}x`).join(', ')}; target >= 1.0x)`);
    }

    const outDir = path.join(__dirname, 'results');
    fs.mkdirSync(outDir, { recursive: true });
    const report = {
      date: new Date().toISOString(),
      settings: { connections: 20, warmupSeconds: warmup, durationSeconds: duration, rounds, orders: fixture.rows, tenants: TENANTS.length, listLimit: LIST_LIMIT, writeIds: fixture.tenantIds.length },
      machine,
      workloads: table,
      runs,
    };
    fs.writeFileSync(path.join(outDir, 'rpc-latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nwritten: ${path.relative(process.cwd(), path.join(outDir, 'rpc-latest.json'))}`);
    if (failed) console.error('FAILED: some requests were errors or non-2xx responses during the load');
  } finally {
    if (monitor) await monitor.end().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
    if (!database.embedded) await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch((e) => console.error(`cleanup: ${e.message}`));
    await database.stop();
  }
  process.exitCode = failed ? 1 : 0;
}

runScript(main, (kind) => serverMain(kind, { tablegate: startTablegate, baseline: startBaseline }));
