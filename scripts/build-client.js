#!/usr/bin/env node
// Bundles the hosted pages' script and stylesheet (src/checkout/client) into public/, which the
// service serves from itself: no CDN, no third-party request. Run by `npm run build` and by
// scripts/build-if-needed.js.
const { buildSync } = require('esbuild');
const { join } = require('node:path');

const root = join(__dirname, '..');
buildSync({
  entryPoints: [
    join(root, 'src/checkout/client/checkout.ts'),
    join(root, 'src/checkout/client/checkout.css'),
  ],
  outdir: join(root, 'public'),
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  legalComments: 'none',
  logLevel: 'warning',
});
