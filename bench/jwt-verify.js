#!/usr/bin/env node
// JWT verification cost (issue "Identity hardening"): the auth stage verifies with jose; before,
// it used jsonwebtoken. Verifies one HS256 token and one ES256 token N times with each, in the
// same process, alternating rounds, and prints microseconds per verification and the ratio
// jsonwebtoken / jose (> 1.0x means jose is faster). No database.
//
// Run: `node bench/jwt-verify.js` (BENCH_N per round, default 50000; BENCH_ROUNDS, default 5).
'use strict';
const crypto = require('node:crypto');
const jwt = require('jsonwebtoken');
const { jwtVerify } = require('jose');

const N = Number(process.env.BENCH_N || 50000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const claims = { tenant_id: '11111111-1111-4111-8111-111111111111', user_id: 'bench', role: 'member' };

const secret = crypto.randomBytes(32).toString('hex');
const secretKey = crypto.createSecretKey(Buffer.from(secret));
const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const cases = [
  { name: 'HS256', token: jwt.sign(claims, secret, { algorithm: 'HS256', expiresIn: '1h' }), key: secretKey },
  { name: 'ES256', token: jwt.sign(claims, ec.privateKey, { algorithm: 'ES256', expiresIn: '1h' }), key: ec.publicKey },
];

async function perVerify(fn) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await fn();
  return Number(process.hrtime.bigint() - started) / N / 1000;
}

(async () => {
  console.log(`Node ${process.version}, ${N} verifications per round, ${ROUNDS} rounds, medians`);
  for (const c of cases) {
    const options = { algorithms: [c.name], clockTolerance: 30 };
    const a = [];
    const b = [];
    for (let round = 0; round < ROUNDS; round++) {
      a.push(await perVerify(() => jwt.verify(c.token, c.key, options)));
      b.push(await perVerify(() => jwtVerify(c.token, c.key, options)));
    }
    const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    console.log(`${c.name}: jsonwebtoken ${median(a).toFixed(1)} us, jose ${median(b).toFixed(1)} us; ratio jsonwebtoken / jose ${(median(a) / median(b)).toFixed(2)}x`);
  }
})();
