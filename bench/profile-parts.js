#!/usr/bin/env node
// Accounts a server's CPU profile (`BENCH_CPU_PROF=<dir> node bench/reads.js`, one server and one
// scenario per profile for clean numbers) by part of the request path, in microseconds per
// request: each sample goes to the nearest frame on its stack that belongs to tablegate's build
// or to a dependency (lib/ file or package), so Node's own HTTP and stream code is charged to
// whoever called it; socket writes (writev: the response, and the batch sent to PostgreSQL) and
// the garbage collector are their own rows.
//   node bench/profile-parts.js <file.cpuprofile> <requests served while profiling>
// The request count is the warm-up plus the measured run (reads.js prints both's req/s).
'use strict';
const fs = require('node:fs');

const [file, requestsArg] = process.argv.slice(2);
if (!file || !(Number(requestsArg) > 0)) {
  console.error('usage: node bench/profile-parts.js <file.cpuprofile> <requests>');
  process.exit(2);
}
const requests = Number(requestsArg);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));

/** [part, pattern on "<package or lib path>"], first match wins. */
const parts = [
  ['JWT verification (jose) + claims -> identity', /^(jose\/|stages\/auth\/)/],
  ['request digest', /^http\/digest-request/],
  ['parse', /^(stages\/parse\/|doors\/[^/]+\/parse\/|doors\/shared\/|http\/postgrest\/parse|http\/postgrest\/(?!render|send))/],
  ['policy', /^stages\/policy\//],
  ['allow-list', /^stages\/allow-list\//],
  ['compile (SQL text)', /^(stages\/compile\/|sql\/)/],
  ['pool check-out (listeners, deadline)', /^(db\/check-out|pg-pool\/|db\/guard-pool)/],
  ['pipelined transaction + reset, pg protocol', /^(db\/|pg\/|pg-protocol\/|pg-types\/)/],
  ['result rendering + responder', /^(http\/render|http\/responder|http\/send-error|http\/postgrest\/|http\/write-|doors\/[^/]+\/respond\/|doors\/[^/]+\/[^/]+-door|pipeline\/cursor-codec|stages\/execute\/)/],
  ['Server-Timing', /^http\/server-timing/],
  ['metrics (prom-client)', /^(ops\/metrics|prom-client\/|tdigest|bintrees)/],
  ['rate limit', /^ops\/(create-rate-limiter|rate-limit)/],
  ['request handler, pipeline, drain, log', /^(create-request-handler|create-gateway|pipeline\/|ops\/drain|ops\/log-request|http\/)/],
  ['Express + router', /^(express\/|router\/|parseurl\/|finalhandler\/|on-finished\/|encodeurl\/|send\/|debug\/|ms\/)/],
];

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
/** A frame's owner: 'lib path' for tablegate's build, 'package/path' for node_modules, else null. */
function ownerOf(callFrame) {
  const url = callFrame.url;
  let m = /node_modules\/(?!\.cache)((?:@[^/]+\/)?[^/]+\/.*)$/.exec(url);
  if (m) return m[1].replace(/\/(dist|lib)\/(node\/cjs\/|cjs\/)?/, '/');
  m = /(?:dist\/cjs|node_modules\/\.cache\/tg-[^/]+)\/(.*)$/.exec(url);
  return m ? m[1] : null;
}
const totals = new Map();
let all = 0;
const add = (part, us) => totals.set(part, (totals.get(part) ?? 0) + us);
for (let i = 0; i < profile.samples.length; i++) {
  const us = profile.timeDeltas[i] || 0;
  const leaf = nodes.get(profile.samples[i]);
  const name = leaf.callFrame.functionName;
  if (name === '(idle)') continue;
  all += us;
  if (name === '(garbage collector)') { add('garbage collector', us); continue; }
  if (name === '(program)') { add('(program: V8/native, unattributed)', us); continue; }
  let owner = null;
  for (let id = profile.samples[i]; id !== undefined && owner === null; id = parent.get(id)) owner = ownerOf(nodes.get(id).callFrame);
  if (name === 'writev' || name === 'writeBuffer' || name === 'writeUtf8String') {
    add(owner && /^(db\/|pg\/|pg-protocol\/)/.test(owner) ? 'socket writes: batch to PostgreSQL (kernel)' : 'socket writes: HTTP response (kernel)', us);
    continue;
  }
  if (owner === null) { add('Node HTTP/net/timers, no library frame', us); continue; }
  const part = parts.find(([, re]) => re.test(owner));
  add(part ? part[0] : 'other (mostly start-up: module loading, config schema)', us);
}
const rows = [...totals].sort((a, b) => b[1] - a[1]);
console.log(`| part | us/request | share |`);
console.log(`| --- | ---: | ---: |`);
for (const [part, us] of rows) console.log(`| ${part} | ${(us / requests).toFixed(1)} | ${((us / all) * 100).toFixed(1)} % |`);
console.log(`| **total (busy CPU of the process)** | **${(all / requests).toFixed(1)}** | 100 % |`);
