#!/usr/bin/env node
// Builds lib/ of a pinned commit (default 5bd9cb5, the reference build every benchmark run
// measures beside the current one) into node_modules/.cache/tg-<commit>, inside the repository so
// that it resolves this checkout's node_modules. `node bench/build-reference.js [commit]`; prints
// the directory to pass as TABLEGATE_DIST / TABLEGATE_REF_DIST. Uses a git worktree of the commit
// in the OS temp directory, compiled with that commit's own tsconfig.build.json.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const commit = process.argv[2] || '5bd9cb5';
const repo = path.resolve(__dirname, '..');
const out = path.join(repo, 'node_modules', '.cache', `tg-${commit}`);
const src = path.join(os.tmpdir(), `ref-${commit}`);
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: 'inherit', ...opts });

if (fs.existsSync(path.join(out, 'index.js')) && !process.argv.includes('--force')) {
  console.log(out);
  process.exit(0);
}
if (!fs.existsSync(path.join(src, 'lib'))) {
  run('git', ['-C', repo, 'worktree', 'add', '--detach', src, commit]);
}
// The commit's sources compile against this checkout's dependencies (the same node_modules the
// build resolves at run time).
const modules = path.join(src, 'node_modules');
if (!fs.existsSync(modules)) fs.symlinkSync(path.join(repo, 'node_modules'), modules, 'dir');
fs.rmSync(out, { recursive: true, force: true });
run(process.execPath, [path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(src, 'tsconfig.build.json'), '--outDir', out]);
// Non-TypeScript assets lib/ loads at run time (e.g. the demo schema) go beside the JavaScript.
for (const file of execFileSync('git', ['-C', src, 'ls-files', 'lib'], { encoding: 'utf8' }).split('\n')) {
  if (!file || file.endsWith('.ts')) continue;
  const target = path.join(out, path.relative('lib', file));
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(path.join(src, file), target);
}
console.log(out);
