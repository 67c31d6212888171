// After jest's own summary (on stderr, like that summary): what was skipped because a program or
// package is missing on this machine, each with its reason and the command that enables it
// (support/skips.js), then a plain `tests: N passed, N failed[, N skipped]` line, so CI tooling
// that looks for such a line finds the totals.
'use strict';
const fs = require('node:fs');
const { readSkips } = require('./skips');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const log = process.env.TABLEGATE_SKIP_LOG;
    const skips = log ? readSkips(log) : [];
    if (log) fs.rmSync(log, { force: true });
    if (skips.length > 0) {
      const lines = skips.map((s) => `  - ${s.what}: ${s.reason}\n    to run it: ${s.enable}`);
      process.stderr.write(`\nSkipped on this machine (${skips.length}):\n${lines.join('\n')}\n`);
    }
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stderr.write(`tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}

module.exports = SummaryReporter;
