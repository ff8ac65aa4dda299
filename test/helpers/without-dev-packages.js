// Preloaded (`node -r`) into a service process: the development-only packages cannot be found,
// as after a production install (`npm ci --omit=dev --workspaces=false`), and every attempt to
// load one is written to stderr, so the test sees whether the service even tried.
const Module = require('node:module');
const original = Module._resolveFilename;
const absent = /^(@stablecoin-billing\/localnet|litesvm)(\/|$)/;
Module._resolveFilename = function (request, ...rest) {
  if (absent.test(request)) {
    process.stderr.write(`dev-package-requested: ${request}\n`);
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return original.call(this, request, ...rest);
};
