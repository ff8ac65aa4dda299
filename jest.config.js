// Unit specs live next to the code (src, *.spec.ts); e2e specs in test/ (real PostgreSQL).
module.exports = {
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/packages/localnet/src'],
  // The localnet package from its sources (the service loads its build: packages/localnet/dist).
  moduleNameMapper: { '^@stablecoin-billing/localnet$': '<rootDir>/packages/localnet/src/index.ts' },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: '<rootDir>/tsconfig.json',
        astTransformers: { before: ['<rootDir>/test/setup/swagger-plugin.js'] },
      },
    ],
  },
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/setup/realm-shim.js'],
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  maxWorkers: 2,
  // A bound for a test or hook that waits on something that never comes, not a measure of speed:
  // generous, for a machine busy with a second copy of the suite.
  testTimeout: 120_000,
};
