#!/usr/bin/env node
// Runs a TypeScript entry point from the sources, transpiled file by file (no type-check):
// `node scripts/run-ts.js src/cli/db-types.ts`. For tools that must run while the tree does
// not type-check yet: `npm run db:types` writes the very types a new statement's repository
// imports, so it cannot wait for a build that needs them.
const { readFileSync } = require('node:fs');
const { resolve } = require('node:path');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  sourceMap: false,
};
require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    compilerOptions,
    fileName: filename,
  });
  module._compile(outputText, filename);
};
require(resolve(process.argv[2]));
