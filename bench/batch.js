#!/usr/bin/env node
// Batch benchmark (issue 29): multi-request writes, in one run against one database, as the
// RLS-bound role, every server in one child process (so the client never shares its event loop):
//
//  1. An order with 3 items:
//     - `batch`:   tablegate, one POST /api/_batch (the order, then the 3 items as one array insert
//                  with {"$ref":"0.id"});
//     - `nested`:  tablegate, one POST /api/orders with "order_items": [3 rows];
//     - `rest`:    tablegate, two REST calls (POST /orders, then POST /order_items with the 3 rows);
//     - `ref-rest`: the same two calls on the pinned reference build 5bd9cb5 (which has no batch);
//     - `hand`:    a hand-written Express route: token check, BEGIN, tenant context, INSERT order
//                  RETURNING id, INSERT the 3 items, COMMIT (one pg client, five round trips).
//  2. 1,000 rows updated with different values:
//     - `bulk`:    tablegate, one PATCH /api/orders with 1,000 rows;
//     - `single`:  tablegate, 1,000 PATCH /api/orders/:id (10 at a time);
//     - `ref-single`: the same on 5bd9cb5;
//     - `hand`:    a hand-written route: one UPDATE ... FROM (VALUES ...) in a tenant transaction.
//
// Run: `npm run build && node bench/build-reference.js && node bench/batch.js`. BENCH_ITERATIONS
// (default 200) orders per variant of part 1, BENCH_ROUNDS (default 5) updates of 1,000 rows per
// variant of part 2. Prints medians and p95; writes bench/results/batch-latest.json.
'use strict';
const { fork } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const { startDatabase, createFixtureDatabase, dropFixtureDatabase, SCHEMA, TENANTS, startTablegate, asTenant, createAuthenticate, errorHandler, median, runScript } = require('./lib');
const REF_DIST = path.resolve(process.env.TABLEGATE_REF_DIST || path.join(__dirname, '..', 'node_modules', '.cache', 'tg-5bd9cb5'));
const DB_NAME = 'tablegate_bench_batch';
const APP_ROLE = 'tablegate_bench_batch_app';
const TENANT = TENANTS[0];
const ITERATIONS = Number(process.env.BENCH_ITERATIONS || 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const ROWS = 1000;

async function server() {
  const express = require('express');
  const pg = require('pg');
  const config = await new Promise((resolve) => process.once('message', resolve));
  const options = { maxBatchSize: ROWS, maxRequestBodyBytes: 4 * 1048576 };
  const current = express();
  const closeCurrent = await startTablegate(current, config, options);
  const ref = express();
  const closeRef = await startTablegate(ref, { ...config, dist: REF_DIST }, options);

  const pool = new pg.Pool({ connectionString: config.appUrl, max: 10 });
  const authenticate = createAuthenticate(config.jwtSecret);
  const hand = express();
  hand.use(express.json({ limit: '4mb' }));
  hand.post('/api/order-with-items', async (req, res) => {
    const claims = authenticate(req);
    const { total, items } = req.body;
    const result = await asTenant(pool, claims, false, async (client) => {
      const order = (await client.query(`INSERT INTO ${SCHEMA}.orders (total) VALUES ($1) RETURNING *`, [total])).rows[0];
      const values = [];
      const tuples = items.map((i) => `($1, $${values.push(i.product) + 1}, $${values.push(i.qty) + 1}, $${values.push(i.price) + 1})`);
      const rows = (await client.query(`INSERT INTO ${SCHEMA}.order_items (order_id, product, qty, price) VALUES ${tuples.join(', ')} RETURNING *`, [order.id, ...values])).rows;
      return { ...order, order_items: rows };
    });
    res.status(201).json({ data: result });
  });
  hand.patch('/api/orders', async (req, res) => {
    const claims = authenticate(req);
    const values = [];
    const tuples = req.body.map((r) => `($${values.push(r.id)}::bigint, $${values.push(r.total)}::numeric, $${values.push(r.status)}::text)`);
    const rows = await asTenant(pool, claims, false, async (client) =>
      (await client.query(`UPDATE ${SCHEMA}.orders AS o SET total = v.total, status = v.status FROM (VALUES ${tuples.join(', ')}) AS v(id, total, status) WHERE o.id = v.id RETURNING o.*`, values)).rows,
    );
    res.json({ data: rows, count: rows.length });
  });
  hand.use(errorHandler);

  const listen = (app) => new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const servers = { current: await listen(current), ref: await listen(ref), hand: await listen(hand) };
  process.on('message', async (msg) => {
    if (msg !== 'stop') return;
    for (const s of Object.values(servers)) { s.closeAllConnections?.(); s.close(); }
    await closeCurrent().catch(() => undefined);
    await closeRef().catch(() => undefined);
    await pool.end().catch(() => undefined);
    process.exit(0);
  });
  process.send({ ports: Object.fromEntries(Object.entries(servers).map(([k, s]) => [k, s.address().port])) });
}

async function loadFixture(adminUrl) {
  const { Client } = require('pg');
  const { adminDbUrl, appUrl } = await createFixtureDatabase(adminUrl, DB_NAME, APP_ROLE);
  const db = new Client({ connectionString: adminDbUrl });
  await db.connect();
  const tenantCol = "tenant_id uuid NOT NULL DEFAULT nullif(current_setting('app.current_tenant_id', true), '')::uuid";
  const rls = (t) => `ALTER TABLE ${SCHEMA}.${t} ENABLE ROW LEVEL SECURITY; ALTER TABLE ${SCHEMA}.${t} FORCE ROW LEVEL SECURITY;
    CREATE POLICY tenant_isolation ON ${SCHEMA}.${t} USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid)
      WITH CHECK (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);`;
  try {
    await db.query(`
      CREATE SCHEMA ${SCHEMA};
      CREATE TABLE ${SCHEMA}.orders (id bigserial PRIMARY KEY, ${tenantCol}, status text NOT NULL DEFAULT 'pending', total numeric(12,2));
      CREATE TABLE ${SCHEMA}.order_items (id bigserial PRIMARY KEY, ${tenantCol}, order_id bigint NOT NULL REFERENCES ${SCHEMA}.orders (id), product text NOT NULL, qty integer NOT NULL, price numeric(10,2) NOT NULL);
      CREATE INDEX ON ${SCHEMA}.order_items (order_id);
      ${rls('orders')} ${rls('order_items')}
      INSERT INTO ${SCHEMA}.orders (tenant_id, total) SELECT (ARRAY['${TENANTS.join("','")}'])[1 + g % ${TENANTS.length}]::uuid, g FROM generate_series(1, 20000) g;
      ANALYZE;
      GRANT CONNECT ON DATABASE ${DB_NAME} TO ${APP_ROLE};
      GRANT USAGE ON SCHEMA ${SCHEMA} TO ${APP_ROLE};
      GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA ${SCHEMA} TO ${APP_ROLE};
      GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${SCHEMA} TO ${APP_ROLE};
    `);
    const ids = (await db.query(`SELECT id FROM ${SCHEMA}.orders WHERE tenant_id = $1 ORDER BY id LIMIT ${ROWS}`, [TENANT])).rows.map((r) => Number(r.id));
    const version = (await db.query('SHOW server_version')).rows[0].server_version;
    return { appUrl, ids, version };
  } finally {
    await db.end();
  }
}

function call(port, token, method, p, body) {
  return fetch(`http://127.0.0.1:${port}/api${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (res) => {
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  });
}

const items = (n) => [1, 2, 3].map((k) => ({ product: `p${n}-${k}`, qty: k, price: k * 1.5 }));

/** Part 1: one order with 3 items, per variant; resolves with the latency of each order (ms). */
const orderVariants = {
  batch: (ports, token, n) => call(ports.current, token, 'POST', '/_batch', [
    { method: 'POST', path: '/orders', body: { total: n } },
    { method: 'POST', path: '/order_items', body: items(n).map((i) => ({ ...i, order_id: { $ref: '0.id' } })) },
  ]),
  nested: (ports, token, n) => call(ports.current, token, 'POST', '/orders', { total: n, order_items: items(n) }),
  rest: async (ports, token, n) => {
    const order = await call(ports.current, token, 'POST', '/orders', { total: n });
    return call(ports.current, token, 'POST', '/order_items', items(n).map((i) => ({ ...i, order_id: order.data.id })));
  },
  'ref-rest': async (ports, token, n) => {
    const order = await call(ports.ref, token, 'POST', '/orders', { total: n });
    return call(ports.ref, token, 'POST', '/order_items', items(n).map((i) => ({ ...i, order_id: order.data.id })));
  },
  hand: (ports, token, n) => call(ports.hand, token, 'POST', '/order-with-items', { total: n, items: items(n) }),
};

/** Part 2: 1,000 rows, each its own values. */
const rowsFor = (ids, round) => ids.map((id, i) => ({ id, total: (round * 1000 + i) / 100, status: i % 2 ? 'paid' : 'shipped' }));
async function pooled(tasks, width) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { while (next < tasks.length) await tasks[next++](); }));
}
const updateVariants = {
  bulk: (ports, token, rows) => call(ports.current, token, 'PATCH', '/orders?returning=id', rows),
  single: (ports, token, rows) => pooled(rows.map((r) => () => call(ports.current, token, 'PATCH', `/orders/${r.id}?returning=id`, { total: r.total, status: r.status })), 10),
  'ref-single': (ports, token, rows) => pooled(rows.map((r) => () => call(ports.ref, token, 'PATCH', `/orders/${r.id}?returning=id`, { total: r.total, status: r.status })), 10),
  hand: (ports, token, rows) => call(ports.hand, token, 'PATCH', '/orders', rows),
};

const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))];

async function main() {
  if (!fs.existsSync(path.join(REF_DIST, 'index.js'))) throw new Error(`no reference build in ${REF_DIST}: run node bench/build-reference.js`);
  const database = await startDatabase();
  const child = fork(__filename, ['--server'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const fixture = await loadFixture(database.adminUrl);
    const jwtSecret = crypto.randomBytes(32).toString('hex');
    const token = require('jsonwebtoken').sign({ tenant_id: TENANT, user_id: 'bench' }, jwtSecret, { algorithm: 'HS256' });
    const ports = await new Promise((resolve) => { child.once('message', (m) => resolve(m.ports)); child.send({ appUrl: fixture.appUrl, jwtSecret }); });
    const results = { orders: {}, updates: {} };
    // Check: each variant creates an order with 3 items / updates the 1,000 rows (throws otherwise).
    let n = 0;
    for (const run of Object.values(orderVariants)) for (let i = 0; i < 20; i++) await run(ports, token, ++n); // warm-up
    for (let pass = 0; pass < 2; pass++) {
      // Interleaved per iteration so that load changes on the shared machine hit every variant alike.
      const names = pass ? Object.keys(orderVariants).reverse() : Object.keys(orderVariants);
      for (let i = 0; i < ITERATIONS / 2; i++) {
        for (const name of names) {
          const started = performance.now();
          await orderVariants[name](ports, token, ++n);
          (results.orders[name] ??= []).push(performance.now() - started);
        }
      }
    }
    for (const run of Object.values(updateVariants)) await run(ports, token, rowsFor(fixture.ids, 0)); // warm-up
    for (let round = 1; round <= ROUNDS; round++) {
      for (const name of Object.keys(updateVariants)) {
        const started = performance.now();
        await updateVariants[name](ports, token, rowsFor(fixture.ids, round));
        (results.updates[name] ??= []).push(performance.now() - started);
      }
    }
    const summary = {
      orders: Object.fromEntries(Object.entries(results.orders).map(([k, v]) => [k, { medianMs: +median(v).toFixed(2), p95Ms: +p95(v).toFixed(2), n: v.length }])),
      updates: Object.fromEntries(Object.entries(results.updates).map(([k, v]) => [k, { medianMs: +median(v).toFixed(1), p95Ms: +p95(v).toFixed(1), n: v.length }])),
    };
    const env = { node: process.version, postgres: fixture.version, cores: require('node:os').cpus().length, load: require('node:os').loadavg().map((x) => +x.toFixed(2)), reference: REF_DIST };
    console.log('Order with 3 items (ms per order, sequential):');
    for (const [k, v] of Object.entries(summary.orders)) console.log(`  ${k.padEnd(10)} median ${String(v.medianMs).padStart(7)}  p95 ${String(v.p95Ms).padStart(7)}  (n=${v.n})`);
    console.log(`Update ${ROWS} rows with different values (ms per ${ROWS} rows):`);
    for (const [k, v] of Object.entries(summary.updates)) console.log(`  ${k.padEnd(10)} median ${String(v.medianMs).padStart(8)}  p95 ${String(v.p95Ms).padStart(8)}  (n=${v.n})`);
    console.log(JSON.stringify(env));
    fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    fs.writeFileSync(path.join(__dirname, 'results', 'batch-latest.json'), JSON.stringify({ summary, env, runs: results }, null, 2));
  } finally {
    child.send('stop');
    await dropFixtureDatabase(database.adminUrl, DB_NAME, APP_ROLE).catch(() => undefined);
    await database.stop();
  }
}

runScript(main, server);
