// Unit specs live next to the code (src, *.spec.ts); e2e specs in test/ (real PostgreSQL).
module.exports = {
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
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
  testTimeout: 60_000,
};
