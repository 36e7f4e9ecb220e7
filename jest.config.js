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
  globalSetup: './test/bundle-sources.mjs',
  collectCoverage: true,
  collectCoverageFrom: ['src/**/*.ts'],
  coverageProvider: 'v8',
  coverageReporters: ['text-summary']
}
