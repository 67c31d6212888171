#!/usr/bin/env node
// Builds dist/: the CommonJS output of tsc, plus a thin ESM entry that re-exports it.
// One implementation serves both `import` and `require`, so there is a single module
// instance (no dual-package hazard: one schema cache, one GatewayError class).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
  cwd: root,
});
// lib/ has no package.json of its own, so mark dist/cjs explicitly for consumers with "type": "module".
fs.writeFileSync(path.join(dist, 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
// SQL fixtures shipped with the CLI demo live next to its code.
for (const file of fs.readdirSync(path.join(root, 'lib', 'cli'))) {
  if (file.endsWith('.sql')) fs.copyFileSync(path.join(root, 'lib', 'cli', file), path.join(dist, 'cjs', 'cli', file));
}
const cjs = require(path.join(dist, 'cjs', 'index.js'));
const names = Object.keys(cjs).filter((n) => n !== 'default' && n !== '__esModule');
fs.mkdirSync(path.join(dist, 'esm'), { recursive: true });
fs.writeFileSync(
  path.join(dist, 'esm', 'index.mjs'),
  `import cjs from '../cjs/index.js';\nexport const { ${names.join(', ')} } = cjs;\nexport default cjs;\n`,
);
fs.writeFileSync(path.join(dist, 'esm', 'index.d.mts'), `export * from '../cjs/index.js';\n`);
