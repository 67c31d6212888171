#!/usr/bin/env node
// Session-reset benchmark: what the per-request search_path and session reset cost (the context
// statement also sets search_path and releases advisory locks; after the plan statement, RESET ALL,
// RESET ROLE and the context statement again, all in the same batch; docs/security.md).
//
// Two builds of lib/ run the same requests through their own database layer
// (db/create-database.js: the pipelined batch, exactly what a request sends), one connection each,
// one request after another, so nothing but the batch differs: BENCH_BASE_DIST is the build before
// (required), TABLEGATE_DIST the build after (default dist/cjs). Per build and scenario it reports
// wall time, Node CPU and PostgreSQL backend CPU per request (/proc of the one backend), medians
// over BENCH_ROUNDS rounds of BENCH_N requests; the build that goes first alternates per round.
// Scenarios: `list` (20 rows as JSON, the list route's statement shape) and `get` (one row by
// primary key), READ ONLY, RLS forced, as the read benchmark (run.js) sends them.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Pool } = require('pg');
const { DIST, envNumber, startDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, median, SCHEMA, TENANTS, STATUSES, STATEMENT_TIMEOUT_MS } = require('./lib');

const DB_NAME = 'tablegate_bench_reset';
const APP_ROLE = 'tablegate_bench_reset_app';
const N = envNumber('BENCH_N', 5000, 1);
const ROUNDS = envNumber('BENCH_ROUNDS', 5, 1);
const ROWS = envNumber('BENCH_ROWS', 20000, 100);

const COLUMNS = '_t."id", _t."tenant_id", _t."user_id", _t."status", _t."total", _t."placed_at", _t."notes"';
const LIST_SQL =
  `SELECT coalesce(json_agg(_p), '[]')::text, count(*)::text, (array_agg(json_build_array(_p."id"::text)))[count(*)]::text ` +
  `FROM (SELECT ${COLUMNS} FROM "${SCHEMA}"."orders" AS _t WHERE _t."status" = $1 ORDER BY _t."id" ASC NULLS LAST LIMIT $2 OFFSET $3) AS _p`;
const GET_SQL = `SELECT to_json(_r)::text FROM "${SCHEMA}"."orders" AS _t CROSS JOIN LATERAL (SELECT ${COLUMNS}) AS _r WHERE _t."id" = $1`;

async function loadFixture(adminUrl) {
  const { adminDbUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);
  const db = new Pool({ connectionString: adminDbUrl, max: 1 });
  try {
    const tenantCase = `(ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}])[(i % ${TENANTS.length}) + 1]`;
    const statusCase = `(ARRAY[${STATUSES.map((s) => `'${s}'`).join(', ')}])[(i % ${STATUSES.length}) + 1]`;
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, user_id int, status text,
        total numeric(12,2), placed_at timestamptz, notes text);
      INSERT INTO ${SCHEMA}.orders (tenant_id, user_id, status, total, placed_at, notes)
      SELECT ${tenantCase}, (i % 997) + 1, ${statusCase}, ((i * 7919) % 100000) / 100.0,
             timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute', 'order ' || i
      FROM generate_series(1, ${ROWS}) AS i;
      CREATE INDEX orders_tenant_status_id ON ${SCHEMA}.orders (tenant_id, status, id);
      ${tenantTableSql('orders', DB_NAME, APP_ROLE)}`);
    const ids = await db.query(`SELECT id::text FROM ${SCHEMA}.orders WHERE tenant_id = $1 ORDER BY id LIMIT 1000`, [TENANTS[0]]);
    const version = await db.query('SHOW server_version');
    return { adminDbUrl, appUrl, ids: ids.rows.map((r) => r.id), serverVersion: version.rows[0].server_version };
  } finally {
    await db.end();
  }
}

/** One build's database layer on its own one-connection pool, and its backend's CPU clock. */
async function openBuild(label, dist, appUrl) {
  const { createDatabase } = require(path.join(dist, 'db', 'create-database.js'));
  const pool = new Pool({ connectionString: appUrl, max: 1 });
  // Builds since the PgBouncer fallback take a NamedStatements switch; older ones read preparedStatements.
  let namedStatements;
  try {
    const { NamedStatements } = require(path.join(dist, 'db', 'named-statements.js'));
    namedStatements = new NamedStatements(true, 'preparedStatements: false');
  } catch {
    namedStatements = undefined;
  }
  const db = createDatabase(pool, { statementTimeoutMs: STATEMENT_TIMEOUT_MS, preparedStatements: true, namedStatements, schemas: [SCHEMA], extraSearchPath: ['public'] });
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  const pid = rows[0].pid;
  const backendMicros = () => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 1e4; // utime + stime, USER_HZ = 100
    } catch {
      return null;
    }
  };
  return { label, db, pool, backendMicros };
}

const identity = { tenantId: TENANTS[0], userId: 'bench', agentId: '', role: '', scopes: [], claims: {}, source: 'jwt' };

async function measure(build, plans) {
  // Warm: every statement prepared on the connection, caches filled.
  for (let i = 0; i < 200; i++) await build.db.run(identity, plans(i));
  const backend0 = build.backendMicros();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await build.db.run(identity, plans(i));
  const wall = Number(process.hrtime.bigint() - t0) / 1e3 / N;
  const cpu = process.cpuUsage(cpu0);
  const backend1 = build.backendMicros();
  return { wallUs: wall, nodeCpuUs: (cpu.user + cpu.system) / N, pgCpuUs: backend0 === null || backend1 === null ? null : (backend1 - backend0) / N };
}

async function main() {
  const baseDist = process.env.BENCH_BASE_DIST;
  if (!baseDist) throw new Error('set BENCH_BASE_DIST to the build of lib/ before the change (see bench/README.md)');
  const server = await startDatabase();
  let builds = [];
  try {
    const fixture = await loadFixture(server.adminUrl);
    builds = [await openBuild('before', path.resolve(baseDist), fixture.appUrl), await openBuild('after', DIST, fixture.appUrl)];
    const scenarios = {
      list: (i) => ({ readOnly: true, query: { text: LIST_SQL, values: [STATUSES[i % STATUSES.length], 20, 0] } }),
      get: (i) => ({ readOnly: true, query: { text: GET_SQL, values: [fixture.ids[i % fixture.ids.length]] } }),
    };
    // Both builds must answer alike before anything is timed.
    for (const plans of Object.values(scenarios)) {
      const [a, b] = await Promise.all(builds.map((x) => x.db.run(identity, plans(3))));
      if (JSON.stringify(a.rows) !== JSON.stringify(b.rows) || a.rows.length !== 1) throw new Error('the two builds answer differently');
    }
    const runs = { list: { before: [], after: [] }, get: { before: [], after: [] } };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const [name, plans] of Object.entries(scenarios)) {
        for (const build of order) runs[name][build.label].push(await measure(build, plans));
      }
      process.stdout.write(`round ${round + 1}/${ROUNDS} done\n`);
    }
    const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
    console.log(`\nnode ${process.version}, PostgreSQL ${fixture.serverVersion}, ${os.cpus().length} cores, load average ${load}`);
    console.log(`${N} requests per run, one connection, sequential; medians of ${ROUNDS} rounds (µs per request)\n`);
    console.log('| scenario | build | wall µs | Node CPU µs | PostgreSQL CPU µs |');
    console.log('| --- | --- | ---: | ---: | ---: |');
    const fmt = (xs, key) => (xs.some((x) => x[key] === null) ? 'n/a' : median(xs.map((x) => x[key])).toFixed(1));
    for (const [name, byBuild] of Object.entries(runs)) {
      for (const label of ['before', 'after']) {
        const xs = byBuild[label];
        console.log(`| ${name} | ${label} | ${fmt(xs, 'wallUs')} | ${fmt(xs, 'nodeCpuUs')} | ${fmt(xs, 'pgCpuUs')} |`);
      }
    }
    const out = path.join(__dirname, 'results', 'session-reset-latest.json');
    fs.writeFileSync(out, JSON.stringify({ node: process.version, postgres: fixture.serverVersion, n: N, rounds: ROUNDS, runs }, null, 2));
    console.log(`\nwritten to ${path.relative(process.cwd(), out)}`);
  } finally {
    await Promise.all(builds.map((b) => b.pool.end()));
    await dropFixtureDatabase(server.adminUrl, DB_NAME, APP_ROLE).catch(() => undefined);
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
