// Prints a plain `tests: N passed, N failed[, N skipped]` line after jest's own summary (on
// stderr, like that summary), so CI tooling that looks for such a line finds the totals.
'use strict';

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stderr.write(`tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}

module.exports = SummaryReporter;
