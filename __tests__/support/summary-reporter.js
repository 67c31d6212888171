// Prints one plain closing line, `tests: N passed, N failed[, N skipped]`, after jest's own
// summary (on stderr, like that summary, so it stays last), so CI tooling that reads the last line of a run sees the totals in a standard form.
'use strict';

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stderr.write(`tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}

module.exports = SummaryReporter;
