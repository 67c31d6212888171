#!/usr/bin/env node
// What an Express Router costs a request when its one layer answers everything (issue "Win back
// the speed"): the gateway is mounted with `app.use('/api', gateway)`; before, a request then went
// through the gateway's own Router (path matching, parameters, a `next` closure per layer) to
// its one middleware; now the gateway calls that middleware directly (lib/create-gateway.ts,
// `directRouter`). Two tiny Express 5 servers answer the same 7 bytes, one with the handler
// behind a Router, one with the handler mounted directly; wrk loads each in turn, and the
// server's CPU time (user + system) per request is printed. No database.
//
// Run: `node bench/router-dispatch.js` (BENCH_ROUNDS, default 3; BENCH_DURATION seconds, default 5).
'use strict';
const { fork, execFileSync } = require('node:child_process');

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const DURATION = Number(process.env.BENCH_DURATION || 5);

if (process.argv[2] === 'serve') {
  const express = require('express');
  const app = express();
  const handler = (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end('{"a":1}');
  };
  if (process.argv[3] === 'router') {
    const router = express.Router();
    router.use(handler);
    app.use('/api', router);
  } else {
    app.use('/api', handler);
  }
  const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (msg) => {
    if (msg === 'cpu') process.send({ cpu: process.cpuUsage() });
  });
  return;
}

function start(kind) {
  const child = fork(__filename, ['serve', kind]);
  return new Promise((resolve) => child.once('message', (m) => resolve({ child, port: m.port })));
}
const cpuOf = (child) =>
  new Promise((resolve) => {
    child.once('message', (m) => resolve(m.cpu.user + m.cpu.system));
    child.send('cpu');
  });

(async () => {
  const results = { direct: [], router: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of round % 2 ? ['direct', 'router'] : ['router', 'direct']) {
      const { child, port } = await start(kind);
      const url = `http://127.0.0.1:${port}/api/orders/1`;
      execFileSync('wrk', ['-t1', '-c16', '-d1s', url]); // warm-up
      const before = await cpuOf(child);
      const out = execFileSync('wrk', ['-t1', '-c16', `-d${DURATION}s`, url]).toString();
      const after = await cpuOf(child);
      child.kill();
      const requests = Number(/(\d+) requests in/.exec(out)[1]);
      const usPerRequest = (after - before) / requests;
      results[kind].push(usPerRequest);
      console.log(`round ${round} ${kind.padEnd(6)} ${(requests / DURATION).toFixed(0)} req/s, ${usPerRequest.toFixed(1)} us CPU per request`);
    }
  }
  // Each round runs both servers back to back: the median of the rounds' differences is less
  // moved by what else the machine does than the difference of the two medians.
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const differences = results.router.map((r, i) => r - results.direct[i]);
  console.log(`medians: direct ${median(results.direct).toFixed(1)} us, through a Router ${median(results.router).toFixed(1)} us CPU per request; the Router's cost, median of the rounds' differences: ${median(differences).toFixed(1)} us`);
})();
