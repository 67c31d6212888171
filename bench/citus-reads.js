#!/usr/bin/env node
// The read benchmark (list, get, expanded) on one PostgreSQL and on a 3-node Citus cluster on this
// machine, side by side, and the shards each kind of request touches on Citus (issue 26).
//   - the cluster: __tests__/support/citus-cluster.ts (the test harness: a coordinator and two
//     workers, Debian's PostgreSQL 15 with Citus, the fixture __tests__/fixtures/citus/schema.sql:
//     users, orders, order_items distributed by tenant_id and co-located, RLS forced, the role
//     tablegate_app NOSUPERUSER NOBYPASSRLS, two tenants on different workers);
//   - the single PostgreSQL: the same PostgreSQL 15 binaries, the same fixture without its
//     create_distributed_table / create_reference_table calls, the same rows;
//   - servers: the current build (dist/cjs, with tenant_column) on each, and the pinned reference
//     build 5bd9cb5 on the single PostgreSQL (on Citus it predates the tenant's SET LOCAL and
//     answers every read with no rows, so it cannot be measured there).
// Shards: with log_statement = 'all' on the workers (before the load), each request kind is sent
// once and the shard ids named in the workers' logs are compared with the tenant's own shards.
// Load: wrk, 32 connections, one thread, the URLs in rotation. See bench/README.md; results in
// docs/performance.md and docs/citus.md ("Measured").
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { wrkScript, wrk: wrkWith, DIST, envNumber, serverMain, spawnServer, startTablegate, median, runScript } = require('./lib');

const REF_DIST = path.resolve(process.env.TABLEGATE_REF_DIST || path.join(__dirname, '..', 'node_modules', '.cache', 'tg-5bd9cb5'));
const CONNECTIONS = 32;
const wrk = (base, scriptFile, seconds) => wrkWith(base, scriptFile, seconds, CONNECTIONS);
const LIST_LIMIT = 20;
const ROWS = { users: 100, orders: 5000, order_items: 10000 }; // per tenant

/** Loads the test harness (TypeScript) through the compiler's transpileModule: no build step. */
function requireHarness() {
  const ts = require('typescript');
  if (!require.extensions['.ts']) {
    require.extensions['.ts'] = (module, filename) => {
      const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true }, fileName: filename });
      module._compile(outputText, filename);
    };
  }
  return {
    citus: require('../__tests__/support/citus-cluster.ts'),
    privatePostgres: require('../__tests__/support/private-postgres.ts'),
  };
}

const FIXTURE = path.join(__dirname, '..', '__tests__', 'fixtures', 'citus', 'schema.sql');

/** More rows for each tenant, after the harness's (ids from `from` on), the same on both databases. */
async function fill(query, tenants, from) {
  for (const t of tenants) {
    await query(`INSERT INTO users SELECT $1::uuid, g, 'u' || g || '@' || $1::text || '.test', 'User ' || g FROM generate_series(${from.users}, ${ROWS.users}) AS g`, [t]);
    await query(
      `INSERT INTO orders SELECT $1, g, 1 + g % ${ROWS.users}, CASE WHEN g % 2 = 0 THEN 'DE' ELSE 'FR' END, CASE WHEN g % 3 = 0 THEN 'paid' ELSE 'pending' END, g * 10 FROM generate_series(${from.orders}, ${ROWS.orders}) AS g`,
      [t],
    );
    await query(`INSERT INTO order_items SELECT $1, g, 1 + g % ${ROWS.orders}, 'product ' || g, 1 + g % 4 FROM generate_series(${from.order_items}, ${ROWS.order_items}) AS g`, [t]);
  }
  // The fixture has no index for the foreign keys; a real schema would (expanded reads use them).
  await query('CREATE INDEX IF NOT EXISTS orders_user ON orders (tenant_id, user_id)');
  await query('CREATE INDEX IF NOT EXISTS order_items_order ON order_items (tenant_id, order_id)');
  await query('ANALYZE');
}

async function startSingle(privatePostgres, binDir, tenants) {
  const server = await privatePostgres.startPrivatePostgres({ binDir, settings: { max_connections: '100' }, hba: ['host all all 127.0.0.1/32 trust'] });
  const statements = fs
    .readFileSync(FIXTURE, 'utf8')
    .replace(/^--.*$/gm, '')
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter((s) => s && !/^SELECT create_(distributed|reference)_table/.test(s));
  for (const s of statements) await server.query(s);
  await server.query(`INSERT INTO countries VALUES ('DE', 'Germany'), ('FR', 'France')`);
  for (const [i, t] of tenants.entries()) await server.query('INSERT INTO tenants VALUES ($1, $2)', [t, `tenant ${i}`]);
  await fill((text, values) => server.query(text, values), tenants, { users: 1, orders: 1, order_items: 1 });
  return server;
}

const starters = {
  tablegate: (app, config) => startTablegate(app, config, { schemas: ['public'], tenantColumn: 'tenant_id', maxExportRows: 10000 }),
  ref: (app, config) => startTablegate(app, { ...config, dist: REF_DIST }, { schemas: ['public'] }),
};



async function main() {
  const duration = envNumber('BENCH_DURATION', 5, 1);
  const warmup = envNumber('BENCH_WARMUP', 1, 0);
  if (!fs.existsSync(path.join(REF_DIST, 'index.js'))) throw new Error(`no reference build in ${REF_DIST}: run \`node bench/build-reference.js 5bd9cb5\` first`);
  const { citus, privatePostgres } = requireHarness();
  const missing = citus.citusMissing().filter(Boolean);
  if (missing.length > 0) throw new Error(`Citus is missing (${missing.join(', ')}): ${citus.INSTALL_CITUS}`);
  const jwt = require('jsonwebtoken');
  const loadBefore = os.loadavg();
  const cluster = await citus.startCitusCluster();
  let single;
  const servers = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tg-citus-reads-'));
  let failed = false;
  try {
    const tenants = cluster.tenants;
    // The harness's few rows are replaced by the benchmark's, so that both databases hold the same.
    for (const table of ['order_items', 'orders', 'users']) await cluster.coordinator.query(`DELETE FROM ${table}`);
    await fill((text, values) => cluster.coordinator.query(text, values), tenants, { users: 1, orders: 1, order_items: 1 });
    single = await startSingle(privatePostgres, citus.citusBinDir, tenants);
    const singleApp = `postgres://tablegate_app@127.0.0.1:${single.port}/postgres?sslmode=disable`;
    console.log(`fixture: ${ROWS.orders} orders, ${ROWS.order_items} items, ${ROWS.users} users for each of 2 tenants (on different workers), RLS forced`);

    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const tenant = tenants[0];
    const token = jwt.sign({ tenant_id: tenant, user_id: 'alice', role: 'member' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    const ids = Array.from({ length: 200 }, (_, i) => 1 + ((i * 97) % ROWS.orders));
    const scenarios = [
      { name: 'list', paths: ['paid', 'pending'].flatMap((s) => [0, 40, 200].map((o) => `/api/orders?status=eq.${s}&sort=id&limit=${LIST_LIMIT}&offset=${o}`)) },
      // The composite key: the reference build knows no tenant_column.
      { name: 'get', paths: ids.map((id) => `/api/orders/${tenant},${id}`) },
      { name: 'expanded', paths: ['paid', 'pending'].flatMap((s) => [0, 40, 200].map((o) => `/api/orders?status=eq.${s}&sort=id&limit=${LIST_LIMIT}&offset=${o}&expand=users,nested:order_items`)) },
    ];

    servers.push({ db: 'single PostgreSQL', ...(await spawnServer(__filename, 'tablegate', { appUrl: singleApp, jwtSecret })) });
    servers.push({ db: 'single PostgreSQL', ...(await spawnServer(__filename, 'ref', { appUrl: singleApp, jwtSecret })) });
    servers.push({ db: 'Citus (3 nodes)', ...(await spawnServer(__filename, 'tablegate', { appUrl: cluster.appUrl, jwtSecret })) });

    // Check: every server answers every URL with 200 and the same rows, all of the token's tenant.
    for (const scenario of scenarios) {
      for (const p of scenario.paths) {
        const bodies = [];
        for (const s of servers) {
          const res = await fetch(s.base + p, { headers: { authorization: `Bearer ${token}` } });
          const body = await res.json();
          const rows = Array.isArray(body.data) ? body.data : [body.data];
          if (res.status !== 200 || rows.length === 0 || rows.some((r) => r.tenant_id !== tenant)) throw new Error(`${s.db} ${s.kind} GET ${p}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
          bodies.push(JSON.stringify(rows));
        }
        if (new Set(bodies).size !== 1) throw new Error(`GET ${p}: the servers answered different rows`);
      }
    }
    console.log('check: every server answers every URL with 200 and the same rows of the token\'s tenant');

    // Shards per request kind, from the workers' statement logs (log_statement = 'all' by the harness).
    const citusServer = servers[2];
    const own = await cluster.shardsOf(tenant);
    const send = (method, p, body) => fetch(citusServer.base + p, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const kinds = [
      ['list', () => send('GET', scenarios[0].paths[0])],
      ['get', () => send('GET', '/api/orders/7')],
      ['expanded (users, nested order_items)', () => send('GET', scenarios[2].paths[0])],
      ['count=exact', () => send('GET', '/api/orders?limit=1&count=exact')],
      ['aggregate', () => send('GET', '/api/orders/aggregate?fn=count')],
      ['child route', () => send('GET', '/api/orders/7/order_items')],
      ['export (ndjson)', () => fetch(citusServer.base + '/api/orders?limit=1000', { headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' } })],
      ['insert', () => send('POST', '/api/orders', { id: 900001, total: 1 })],
      ['update', () => send('PATCH', '/api/orders/900001', { status: 'paid' })],
      ['delete', () => send('DELETE', '/api/orders/900001')],
    ];
    const shards = [];
    for (const [kind, fn] of kinds) {
      let status = 0;
      const touched = await cluster.shardsTouched(async () => {
        status = (await fn()).status;
      });
      const outside = [...touched].filter((s) => !own.has(s));
      // A shard group: the co-located shards of users, orders and order_items for one hash range.
      shards.push({ kind, status, shardIds: touched.size, outsideTenantGroup: outside.length });
      if (status >= 300 || outside.length > 0) failed = true;
    }
    // The load runs without statement logging.
    for (const node of [cluster.coordinator, ...cluster.workers]) {
      await node.query("ALTER SYSTEM SET log_statement = 'none'");
      await node.query('SELECT pg_reload_conf()');
    }

    const runs = [];
    for (const scenario of scenarios) {
      const scriptFile = path.join(tmp, `${scenario.name}.lua`);
      fs.writeFileSync(scriptFile, wrkScript(scenario.paths, token));
      for (const server of servers) {
        if (warmup > 0) await wrk(server.base, scriptFile, warmup);
        const cpu0 = await server.cpuMicros();
        const raw = await wrk(server.base, scriptFile, duration);
        const cpu1 = await server.cpuMicros();
        const run = {
          scenario: scenario.name,
          db: server.db,
          server: server.kind,
          reqPerSec: raw.requests / (raw.duration_us / 1e6),
          p50: raw.p50_us / 1000,
          p99: raw.p99_us / 1000,
          serverCpuUsPerReq: (cpu1 - cpu0) / (raw.requests || 1),
          non2xx: raw.non2xx,
          errors: raw.errors,
          loadavg: Number(os.loadavg()[0].toFixed(2)),
        };
        runs.push(run);
        console.log(`${scenario.name.padEnd(8)} ${server.db.padEnd(18)} ${server.kind.padEnd(9)} ${run.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${run.p50.toFixed(2)} ms  p99 ${run.p99.toFixed(2)} ms  server CPU/req ${run.serverCpuUsPerReq.toFixed(0)} us  load ${run.loadavg}  (non-2xx ${run.non2xx}, errors ${run.errors})`);
        if (run.non2xx || run.errors) failed = true;
      }
    }

    const loadAfter = os.loadavg();
    console.log('');
    console.log(`node ${process.version}, ${os.cpus().length} cores; load average before ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after ${loadAfter.map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`wrk, ${CONNECTIONS} connections, ${warmup} s warm-up + ${duration} s measured; ref = ${path.relative(process.cwd(), REF_DIST)}; current = ${path.relative(process.cwd(), DIST)}`);
    console.log('');
    console.log('| scenario | database | build | req/s | p50 ms | p99 ms | server CPU us/req | load (1 min) |');
    console.log('| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |');
    for (const r of runs) console.log(`| ${r.scenario} | ${r.db} | ${r.server === 'ref' ? '5bd9cb5' : 'current'} | ${r.reqPerSec.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.serverCpuUsPerReq.toFixed(0)} | ${r.loadavg} |`);
    console.log('');
    console.log('| request (current build, tenant_column, Citus) | status | shard ids touched | outside the tenant\'s shard group |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const s of shards) console.log(`| ${s.kind} | ${s.status} | ${s.shardIds} | ${s.outsideTenantGroup} |`);

    const outDir = path.join(__dirname, 'results');
    fs.mkdirSync(outDir, { recursive: true });
    const report = { date: new Date().toISOString(), settings: { connections: CONNECTIONS, warmupSeconds: warmup, durationSeconds: duration, rows: ROWS }, machine: { node: process.version, cores: os.cpus().length, loadavgBefore: loadBefore, loadavgAfter: loadAfter }, runs, shards, median: median(runs.map((r) => r.reqPerSec)) };
    fs.writeFileSync(path.join(outDir, 'citus-reads-latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    if (failed) console.error('FAILED: a request failed, or touched a shard outside its tenant\'s group');
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await single?.stop();
    await cluster.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

runScript(main, (kind) => serverMain(kind, starters));
