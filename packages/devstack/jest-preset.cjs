/**
 * Shared jest preset: TypeScript through swc (no type-check at test time; `typecheck` does that),
 * tests under test/, the devstack global setup that provides real Postgres and Redis.
 */
const path = require('node:path');

module.exports = function preset(dir, extra = {}) {
  return {
    rootDir: dir,
    // TEST_CPU_LOG=<file>: each test file's CPU appended to it (dist/jest-cpu-environment.js).
    testEnvironment: process.env.TEST_CPU_LOG ? path.join(__dirname, 'dist', 'jest-cpu-environment.js') : 'node',
    testMatch: ['<rootDir>/test/**/*.test.ts'],
    transform: {
      '^.+\\.ts$': [
        require.resolve('@swc/jest'),
        { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
      ],
    },
    moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    globalSetup: path.join(__dirname, 'dist', 'jest-global-setup.js'),
    globalTeardown: path.join(__dirname, 'dist', 'jest-global-teardown.js'),
    // Twice what a test needs on a busy machine: CI's machine has run npm test's lanes at half the
    // speed of a quiet one, and a test that took 14 s alone (platform-suite's dead checkouts) then
    // took over 30 s (fresh-clone run 52).
    testTimeout: 60000,
    maxWorkers: 2,
    ...extra,
  };
};
