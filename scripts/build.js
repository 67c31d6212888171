#!/usr/bin/env node
// Builds dist/: the CommonJS output of tsc, plus a thin ESM entry that re-exports it.
// One implementation serves both `import` and `require`, so there is a single module
// instance (no dual-package hazard: one schema cache, one GatewayError class).
// The client (`tablegate/client`, lib/client) also gets a real ESM build, for browsers and
// bundlers (docs/client.md); it keeps no state, and its errors are recognised across builds.
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

// tablegate/client as ES modules: tsc emits lib/client alone; the files become .mjs and their
// relative imports name those files, as browsers and Node's ESM loader require.
const clientEsm = path.join(dist, 'esm', 'client');
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), path.join(root, 'lib', 'client', 'index.ts'),
  '--module', 'es2022', '--moduleResolution', 'bundler', '--target', 'es2022', '--strict', '--noUncheckedIndexedAccess',
  '--isolatedModules', '--skipLibCheck', '--lib', 'es2022',
  // No @types at all (typeRoots holds none): the client compiles without Node's types.
  '--typeRoots', path.join(root, 'lib', 'client'), '--rootDir', path.join(root, 'lib', 'client'), '--outDir', clientEsm], {
  stdio: 'inherit',
  cwd: root,
});
const clientFiles = fs.readdirSync(clientEsm).filter((f) => f.endsWith('.js'));
for (const file of clientFiles) {
  const text = fs.readFileSync(path.join(clientEsm, file), 'utf8').replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]+)\2/g, (_, lead, q, spec) => {
    if (!clientFiles.includes(`${path.posix.normalize(spec)}.js`)) throw new Error(`build: ${file} imports ${spec}, which the client ESM build has no file for`);
    return `${lead}${q}${spec}.mjs${q}`;
  });
  fs.writeFileSync(path.join(clientEsm, file.replace(/\.js$/, '.mjs')), text);
  fs.rmSync(path.join(clientEsm, file));
}
fs.writeFileSync(path.join(clientEsm, 'index.d.mts'), `export * from '../../cjs/client/index.js';\n`);
