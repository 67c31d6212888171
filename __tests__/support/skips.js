// Tests that cannot run on this machine because a program or package is missing: each one is
// skipped with the reason and the one command that enables it (README.md, "Contributing"), and
// recorded in the run's skip log (TABLEGATE_SKIP_LOG, set by jest.config.js), which
// summary-reporter.js prints once at the end of the run. Plain CommonJS so jest.config.js uses it
// too.
'use strict';
const fs = require('node:fs');

/** The command that installs every optional part (scripts/setup-system). */
const SETUP_SYSTEM = 'sudo npm run setup:system';
/** The command that builds the optional kerberos addon alone, once libkrb5-dev is there. */
const SETUP_KERBEROS = 'npm run setup:kerberos';

/** Prints `SKIPPED <what>: <reason>; to run it: <enable>` and records it for the end-of-run summary. */
function recordSkip(what, reason, enable) {
  process.stderr.write(`tablegate: SKIPPED ${what}: ${reason}; to run it: ${enable}\n`);
  const log = process.env.TABLEGATE_SKIP_LOG;
  if (log) fs.appendFileSync(log, `${JSON.stringify({ what, reason, enable })}\n`);
}

/**
 * `describe` when nothing is missing, else `describe.skip` after recordSkip. `missing` lists what
 * is not there (empty strings are ignored).
 */
function describeIfPresent(what, missing, enable) {
  const absent = missing.filter(Boolean);
  if (absent.length === 0) return describe;
  recordSkip(what, `needs ${absent.join(', ')}`, enable);
  return describe.skip;
}

/** A regular file with an execute bit (not, say, /dev/null bound over a program to hide it). */
function isProgram(file) {
  try {
    const st = fs.statSync(file);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The recorded skips, one per distinct `what` (a file may be loaded by several projects). */
function readSkips(log) {
  let text = '';
  try {
    text = fs.readFileSync(log, 'utf8');
  } catch {
    return [];
  }
  const byWhat = new Map();
  for (const line of text.split('\n')) if (line) {
    const entry = JSON.parse(line);
    byWhat.set(entry.what, entry);
  }
  return [...byWhat.values()];
}

module.exports = { SETUP_SYSTEM, SETUP_KERBEROS, recordSkip, describeIfPresent, isProgram, readSkips };
