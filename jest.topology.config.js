// `npm run test:topology`: the production topology (test/topology) on real parts: Debian's
// PostgreSQL server and nginx, the compiled service in processes of its own. Not part of
// `npm test` (it needs those Debian packages); .ci/run runs both.
module.exports = {
  rootDir: '.',
  roots: ['<rootDir>/test/topology'],
  moduleNameMapper: {
    '^@stablecoin-billing/localnet$': '<rootDir>/packages/localnet/src/index.ts',
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testRegex: '.*\\.topology\\.ts$',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/setup/realm-shim.js'],
  maxWorkers: 1,
  testTimeout: 900_000,
};
