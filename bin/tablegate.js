#!/usr/bin/env node
'use strict';
require('../dist/cjs/cli/main.js').main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { console.error(`tablegate: ${err && err.message ? err.message : String(err)}`); process.exitCode = 1; },
);
