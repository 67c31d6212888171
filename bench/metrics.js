#!/usr/bin/env node
// Per-request cost of the metrics and Server-Timing (docs/performance.md, "Metrics and
// Server-Timing"), in this process, with no HTTP and no database: what handle() adds to one
// request (a RequestMeasures, the Database port wrapped by measuredDatabase and called once, the
// Server-Timing value, Metrics.record: one counter and three histograms of prom-client), against
// the same Database call unwrapped; and one render of GET /metrics.
//
// Run after `npm run build`: `node bench/metrics.js`. BENCH_N (calls per round, default 200000),
// BENCH_ROUNDS (default 5; the median is shown). TABLEGATE_DIST as for run.js (bench/README.md).
'use strict';
const path = require('node:path');

const dist = path.resolve(process.env.TABLEGATE_DIST ?? path.join(__dirname, '..', 'dist'), 'cjs');
const { Metrics } = require(path.join(dist, 'ops', 'metrics.js'));
const { newRequestMeasures, measuredDatabase } = require(path.join(dist, 'pipeline', 'request-measures.js'));
const { serverTiming } = require(path.join(dist, 'http', 'server-timing.js'));

const n = Number(process.env.BENCH_N ?? 200000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const metrics = new Metrics({ defaultMetrics: false }, { pool: () => ({ total: 10, idle: 9, waiting: 0 }), schema: () => ({ tables: 20, functions: 5 }), connection: () => undefined });
const db = { run: async () => ({ rows: [] }), locateFailingRow: async () => undefined };
const routes = ['list', 'get', 'insert', 'unknown'];

async function measured(i) {
  const measures = newRequestMeasures();
  await measuredDatabase(db, measures).run({}, {});
  serverTiming(measures, 1.5);
  metrics.record({ route: routes[i & 3], status: i % 7 === 0 ? 404 : 200, seconds: 0.002, measures });
}

async function nsPerCall(fn) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  return Number(process.hrtime.bigint() - started) / n;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

(async () => {
  const added = [];
  for (let r = 0; r < rounds; r++) {
    const base = await nsPerCall(() => db.run({}, {}));
    const full = await nsPerCall(measured);
    added.push(full - base);
  }
  const renders = [];
  for (let r = 0; r < 200; r++) {
    const started = process.hrtime.bigint();
    await metrics.render();
    renders.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  console.log(`added per request: ${median(added).toFixed(0)} ns (median of ${rounds} rounds of ${n}; all: ${added.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`GET /metrics render (gateway series, no process metrics): ${median(renders).toFixed(0)} µs (median of 200)`);
})();
