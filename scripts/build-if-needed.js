#!/usr/bin/env node
// Builds with `nest build` when dist/ is missing or older than any source file, and the hosted
// pages' bundle (public/) when it is missing or older than its sources, so that `npm start` on a
// fresh clone just works and later starts skip the compile.
const { execSync } = require('node:child_process');
const { existsSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const marker = join(root, 'dist', '.build-stamp');

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path));
    else latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

// The localnet package first: the service's build takes its types from the package's build.
const localnet = join(root, 'packages', 'localnet');
const localnetStamp = join(localnet, 'dist', 'index.js');
if (
  !existsSync(localnetStamp) ||
  statSync(localnetStamp).mtimeMs <
    Math.max(newest(join(localnet, 'src')), statSync(join(localnet, 'package.json')).mtimeMs)
) {
  execSync('npx tsc -p tsconfig.build.json', { cwd: localnet, stdio: 'inherit' });
}

const sources = Math.max(
  newest(join(root, 'src')),
  ...['package.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'].map(
    (f) => statSync(join(root, f)).mtimeMs,
  ),
);
if (!existsSync(marker) || statSync(marker).mtimeMs < sources) {
  execSync('npx nest build', { cwd: root, stdio: 'inherit' });
  writeFileSync(marker, new Date().toISOString());
}

const client = join(root, 'src', 'checkout', 'client');
const bundle = join(root, 'public', 'checkout.js');
if (!existsSync(bundle) || statSync(bundle).mtimeMs < newest(client)) {
  execSync('node scripts/build-client.js', { cwd: root, stdio: 'inherit' });
}
