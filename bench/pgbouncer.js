#!/usr/bin/env node
// PgBouncer benchmark: tablegate's two read routes through a real PgBouncer in pool_mode =
// transaction, against the same gateway connected directly, on the same database, in the same
// run (docs/performance.md, "PgBouncer vs direct"). Run after `npm run build`:
// `node bench/pgbouncer.js`. Needs pgbouncer installed (Debian: apt-get install pgbouncer).
//
// Servers, each tablegate in its own child process (this file with `--server`), 10 pooled
// connections each:
//   direct-prepared     databaseUrl -> PostgreSQL, prepared_statements = true (the default)
//   direct-unnamed      databaseUrl -> PostgreSQL, prepared_statements = false
//   pgbouncer-unnamed   databaseUrl -> PgBouncer,  prepared_statements = false (before 1.21)
//   pgbouncer-prepared  databaseUrl -> PgBouncer with max_prepared_statements (PgBouncer 1.21+
//                       only; reported as skipped otherwise)
// PgBouncer: default_pool_size = 10 (as many server connections as the gateway's pool), SCRAM,
// run by bench/../__tests__/support/pgbouncer.js on a port of its own.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { envNumber, startDatabase, withDatabase, createFixtureDatabase, dropFixtureDatabase, tenantTableSql, serverMain, spawnServer, SCHEMA, TENANTS, STATUSES, startTablegate, fetchJson, median, backendCpu, backendCpuDelta, fmtCpu, runScript } = require('./lib');
const { findPgBouncer, startPgBouncer, PREPARED_STATEMENTS_SINCE } = require('../__tests__/support/pgbouncer');

const DB_NAME = 'tablegate_bench_pgbouncer';
const APP_ROLE = 'tablegate_bench_app';
const LIST_LIMIT = 20;
const GET_IDS = 1000;
const CONNECTIONS = 20;

/** Every server is tablegate; the kind only says how it connects (the config it is sent). */
const startServer = (app, config) => startTablegate(app, config, { preparedStatements: config.preparedStatements });

async function loadFixture(adminUrl, rows) {
  const { Client } = require('pg');
  const { adminDbUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);
  const db = new Client({ connectionString: adminDbUrl });
  await db.connect();
  try {
    const tenantCase = `(ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}])[(i % ${TENANTS.length}) + 1]`;
    const statusCase = `(ARRAY[${STATUSES.map((s) => `'${s}'`).join(', ')}])[(i % ${STATUSES.length}) + 1]`;
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (
        id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, user_id int, status text,
        total numeric(12,2), placed_at timestamptz, notes text
      );
      INSERT INTO ${SCHEMA}.orders (tenant_id, user_id, status, total, placed_at, notes)
      SELECT ${tenantCase}, (i % 997) + 1, ${statusCase}, ((i * 7919) % 100000) / 100.0,
             timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute', 'order ' || i
      FROM generate_series(1, ${rows}) AS i ORDER BY i;
      CREATE INDEX orders_tenant_status_id ON ${SCHEMA}.orders (tenant_id, status, id);
      ${tenantTableSql('orders', DB_NAME, APP_ROLE)}
    `);
    const ids = await db.query(
      `SELECT id::text FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM ${SCHEMA}.orders WHERE tenant_id = $1) s
       WHERE rn % greatest(1, (SELECT count(*) FROM ${SCHEMA}.orders WHERE tenant_id = $1) / ${GET_IDS}) = 0 ORDER BY id LIMIT ${GET_IDS}`,
      [TENANTS[0]],
    );
    const foreign = await db.query(`SELECT id::text FROM ${SCHEMA}.orders WHERE tenant_id = $1 ORDER BY id LIMIT 1`, [TENANTS[1]]);
    const version = await db.query('SHOW server_version');
    return { appUrl, tenantIds: ids.rows.map((r) => r.id), foreignId: foreign.rows[0].id, serverVersion: version.rows[0].server_version };
  } finally {
    await db.end();
  }
}

/** CPU time (user + system, microseconds) of a local process so far, from /proc; null elsewhere. */
function processCpu(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100); // utime, stime; USER_HZ 100
  } catch {
    return null;
  }
}

/** Every server answers every check path 200 with the same body data, all of the token's tenant; another tenant's row is 404. */
async function verify(servers, scenarios, token, foreignId) {
  for (const scenario of scenarios) {
    for (const urlPath of scenario.checkPaths) {
      const answers = await Promise.all(servers.map((s) => fetchJson(s.base + urlPath, token)));
      answers.forEach((r, i) => {
        if (r.status !== 200) throw new Error(`${servers[i].kind} GET ${urlPath}: status ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
      });
      const data = answers.map((r) => JSON.stringify(r.body.data));
      if (new Set(data).size !== 1) throw new Error(`GET ${urlPath}: the servers returned different data`);
      const rows = scenario.name === 'list' ? answers[0].body.data : [answers[0].body.data];
      if (rows.length === 0 || (scenario.name === 'list' && rows.length !== LIST_LIMIT)) throw new Error(`GET ${urlPath}: ${rows.length} rows`);
      if (rows.some((r) => r.tenant_id !== TENANTS[0])) throw new Error(`GET ${urlPath}: a row of another tenant came back`);
    }
  }
  for (const s of servers) {
    const r = await fetchJson(`${s.base}/api/orders/${foreignId}`, token);
    if (r.status !== 404) throw new Error(`${s.kind}: another tenant's row answered ${r.status}, expected 404`);
  }
}

function load(base, scenario, token, seconds) {
  const autocannon = require('autocannon');
  let next = 0;
  return autocannon({
    url: base,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${token}` },
    requests: [{ setupRequest: (req) => ((req.path = scenario.paths[next++ % scenario.paths.length]), req) }],
  });
}

async function main() {
  const duration = envNumber('BENCH_DURATION', 10, 1);
  const warmup = envNumber('BENCH_WARMUP', 3, 0);
  const rounds = Math.floor(envNumber('BENCH_ROUNDS', 1, 1));
  const rowCount = Math.floor(envNumber('BENCH_ROWS', 200000, 1000));
  const found = findPgBouncer();
  if (found.missing) throw new Error(`bench/pgbouncer.js needs PgBouncer: ${found.missing}`);
  const modern = found.versionNum >= PREPARED_STATEMENTS_SINCE;
  const jwt = require('jsonwebtoken');

  const loadBefore = os.loadavg();
  const database = await startDatabase();
  const servers = [];
  let bouncer;
  let monitor;
  let failed = false;
  try {
    const fixture = await loadFixture(database.adminUrl, rowCount);
    const app = new URL(fixture.appUrl);
    bouncer = await startPgBouncer(database.adminUrl, {
      users: [{ user: decodeURIComponent(app.username), password: decodeURIComponent(app.password) }],
      poolMode: 'transaction',
      defaultPoolSize: 10,
      ...(modern ? { maxPreparedStatements: 200 } : {}),
    });
    monitor = new (require('pg').Client)({ connectionString: withDatabase(database.adminUrl, DB_NAME), application_name: 'bench-monitor' });
    await monitor.connect();
    console.log(`fixture: ${rowCount} rows over ${TENANTS.length} tenants, RLS forced; PgBouncer ${bouncer.version} (pool_mode = transaction, default_pool_size = 10)`);
    if (!modern) console.log(`skipped: pgbouncer-prepared (PgBouncer ${bouncer.version} has no max_prepared_statements; 1.21+)`);

    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = jwt.sign({ tenant_id: TENANTS[0], user_id: '42', role: 'member' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    const kinds = [
      ['direct-prepared', fixture.appUrl, true],
      ['direct-unnamed', fixture.appUrl, false],
      ['pgbouncer-unnamed', bouncer.rewrite(fixture.appUrl), false],
      ...(modern ? [['pgbouncer-prepared', bouncer.rewrite(fixture.appUrl), true]] : []),
    ];
    for (const [kind, appUrl, preparedStatements] of kinds) servers.push(await spawnServer(__filename, kind, { appUrl, jwtSecret, preparedStatements }));

    const scenarios = [
      { name: 'list', paths: STATUSES.map((s) => `/api/orders?status=eq.${s}&limit=${LIST_LIMIT}`) },
      { name: 'get', paths: fixture.tenantIds.map((id) => `/api/orders/${id}`) },
    ];
    for (const s of scenarios) s.checkPaths = s.name === 'list' ? s.paths : [s.paths[0], s.paths[s.paths.length - 1]];
    await verify(servers, scenarios, token, fixture.foreignId);
    console.log(`check: all ${servers.length} servers return 200 and the same rows; another tenant's row is 404 on all`);

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      for (const [index, scenario] of scenarios.entries()) {
        // Rotate which server goes first, per scenario and per round.
        const shift = (round * scenarios.length + index) % servers.length;
        for (const server of [...servers.slice(shift), ...servers.slice(0, shift)]) {
          if (warmup > 0) await load(server.base, scenario, token, warmup);
          const viaBouncer = server.kind.startsWith('pgbouncer');
          const before = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME), bouncer: viaBouncer ? processCpu(bouncer.pid) : null };
          const raw = await load(server.base, scenario, token, duration);
          const after = { server: await server.cpuMicros(), postgres: await backendCpu(monitor, DB_NAME), bouncer: viaBouncer ? processCpu(bouncer.pid) : null };
          const requests = raw.requests.total || 1;
          const perReq = (micros) => (micros === null ? null : micros / 1000 / requests);
          const run = {
            round: round + 1,
            scenario: scenario.name,
            server: server.kind,
            reqPerSec: raw.requests.average,
            p50: raw.latency.p50,
            p99: raw.latency.p99,
            serverCpuMsPerReq: perReq(after.server - before.server),
            postgresCpuMsPerReq: perReq(backendCpuDelta(before.postgres, after.postgres)),
            pgbouncerCpuMsPerReq: viaBouncer && before.bouncer !== null && after.bouncer !== null ? perReq(after.bouncer - before.bouncer) : null,
            total: raw.requests.total,
            non2xx: raw.non2xx,
            errors: raw.errors,
            timeouts: raw.timeouts,
          };
          runs.push(run);
          console.log(
            `round ${run.round} ${scenario.name.padEnd(4)} ${server.kind.padEnd(18)} ${run.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms` +
              `  CPU/req: server ${fmtCpu(run.serverCpuMsPerReq)}, postgres ${fmtCpu(run.postgresCpuMsPerReq)}, pgbouncer ${fmtCpu(run.pgbouncerCpuMsPerReq)} ms  (non-2xx ${run.non2xx}, errors ${run.errors})`,
          );
          if (run.non2xx || run.errors || run.timeouts) failed = true;
        }
      }
    }

    // Ratios per round (the servers of one round ran back to back), then their median.
    const ratioPairs = [
      ['pgbouncer-unnamed', 'direct-prepared'],
      ['pgbouncer-unnamed', 'direct-unnamed'],
      ['direct-unnamed', 'direct-prepared'],
      ...(modern ? [['pgbouncer-prepared', 'direct-prepared']] : []),
    ];
    const table = scenarios.map((scenario) => {
      const of = (kind) => runs.filter((r) => r.scenario === scenario.name && r.server === kind);
      const agg = (kind) => {
        const rs = of(kind);
        const med = (key) => (rs.some((r) => r[key] === null) ? null : median(rs.map((r) => r[key])));
        return { reqPerSec: med('reqPerSec'), p50: med('p50'), p99: med('p99'), serverCpuMsPerReq: med('serverCpuMsPerReq'), postgresCpuMsPerReq: med('postgresCpuMsPerReq'), pgbouncerCpuMsPerReq: med('pgbouncerCpuMsPerReq') };
      };
      const ratios = ratioPairs.map(([a, b]) => {
        const perRound = of(a).map((ra) => ra.reqPerSec / of(b).find((rb) => rb.round === ra.round).reqPerSec);
        return { of: a, to: b, ratio: median(perRound), rounds: perRound };
      });
      return { scenario: scenario.name, servers: Object.fromEntries(servers.map((s) => [s.kind, agg(s.kind)])), ratios };
    });

    const machine = {
      node: process.version,
      pg: require('pg/package.json').version,
      autocannon: require('autocannon/package.json').version,
      postgres: fixture.serverVersion,
      pgbouncer: bouncer.version,
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      loadavgBefore: loadBefore.map((x) => Number(x.toFixed(2))),
      loadavgAfter: os.loadavg().map((x) => Number(x.toFixed(2))),
    };
    console.log('');
    console.log(`node ${machine.node}, pg ${machine.pg}, autocannon ${machine.autocannon}, PostgreSQL ${machine.postgres}, PgBouncer ${machine.pgbouncer}`);
    console.log(`${machine.cores} cores (${machine.cpu}); load average before ${machine.loadavgBefore.join(' ')}, after ${machine.loadavgAfter.join(' ')}`);
    console.log(`${CONNECTIONS} connections, ${warmup} s warm-up + ${duration} s measured, ${rounds} round(s)${rounds > 1 ? ' (medians)' : ''}`);
    console.log('');
    const line = (cells) => `| ${cells.join(' | ')} |`;
    console.log(line(['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'postgres CPU ms/req', 'pgbouncer CPU ms/req']));
    console.log(line(['---', '---', '---:', '---:', '---:', '---:', '---:', '---:']));
    for (const row of table) {
      for (const [kind, r] of Object.entries(row.servers)) {
        console.log(line([row.scenario, kind, r.reqPerSec.toFixed(0), r.p50, r.p99, fmtCpu(r.serverCpuMsPerReq), fmtCpu(r.postgresCpuMsPerReq), kind.startsWith('pgbouncer') ? fmtCpu(r.pgbouncerCpuMsPerReq) : '']));
      }
    }
    console.log('');
    console.log(line(['scenario', 'req/s ratio', 'median', 'per round']));
    console.log(line(['---', '---', '---:', '---']));
    for (const row of table) {
      for (const r of row.ratios) console.log(line([row.scenario, `${r.of} / ${r.to}`, `${r.ratio.toFixed(2)}x`, r.rounds.map((x) => `${x.toFixed(2)}x`).join(', ')]));
    }

    const outDir = path.join(__dirname, 'results');
    fs.mkdirSync(outDir, { recursive: true });
    const report = { date: new Date().toISOString(), settings: { connections: CONNECTIONS, warmupSeconds: warmup, durationSeconds: duration, rounds, rows: rowCount, listLimit: LIST_LIMIT, pgbouncerDefaultPoolSize: 10, gatewayPoolMax: 10 }, machine, scenarios: table, runs };
    fs.writeFileSync(path.join(outDir, 'pgbouncer-latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nwritten: ${path.relative(process.cwd(), path.join(outDir, 'pgbouncer-latest.json'))}`);
    if (failed) console.error('FAILED: some requests were errors or non-2xx responses during the load');
  } finally {
    if (monitor) await monitor.end().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
    if (bouncer) await bouncer.stop();
    if (!database.embedded) await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch((e) => console.error(`cleanup: ${e.message}`));
    await database.stop();
  }
  process.exitCode = failed ? 1 : 0;
}

runScript(main, (kind) => serverMain(kind, { 'direct-prepared': startServer, 'direct-unnamed': startServer, 'pgbouncer-unnamed': startServer, 'pgbouncer-prepared': startServer }));
