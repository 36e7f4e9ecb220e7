/**
 * ESM TypeScript through ts-jest; tests import sources with their .js suffix. Node's ESM support
 * for Jest (--experimental-vm-modules) comes from .npmrc, so `npm test` and `npx jest` both work.
 */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }]
  },
  testMatch: ['**/__tests__/**/*.test.ts'],
  testTimeout: 30000,
  // The end-to-end suites mostly wait on the fakes in real time, not on the CPU: four times as
  // many workers as this 2-core machine has (6: 253 s of tests, 8: 185 s).
  maxWorkers: 8,
  globalSetup: './test/bundle-sources.mjs',
  // Coverage sees only what runs in Jest's own processes, not the bundle the end-to-end suites
  // spawn, and slows every suite: `npm run coverage` measures it when wanted.
  collectCoverage: false,
  collectCoverageFrom: ['src/**/*.ts'],
  coverageProvider: 'v8',
  coverageReporters: ['text-summary']
}
