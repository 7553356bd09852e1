import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

/** The routing core: `npm run test:unit -- --coverage` fails below these (v8 coverage, unit tests only). */
const CORE_THRESHOLDS = { statements: 90, branches: 85 }

export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core machine,
    // where two run the unit tests in about two thirds of the time (the integration project
    // runs one file at a time whatever this says).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // `--coverage` (see docs/architecture.md "Tests"): the unit tests' v8 coverage of src/, with
    // per-folder thresholds for the routing core. No database is needed: the unit tests run the
    // router over the in-memory driver of src/router/fake-driver.test-kit.ts.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.test.ts', 'src/**/*.test-kit.ts', 'src/**/*.d.ts'],
      reporter: ['text-summary', ['text', { skipFull: true }], 'json-summary'],
      thresholds: {
        'src/router/**': CORE_THRESHOLDS,
        'src/health/**': CORE_THRESHOLDS,
        'src/consistency/**': CORE_THRESHOLDS,
      },
    },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          // Worker threads, and no fresh module graph per file: unit tests hold no state across
          // files (fake timers and spies are restored by each test), and re-importing the
          // source for each of ~100 files was most of the run's time.
          pool: 'threads',
          isolate: false,
        },
      },
      {
        // Type-level tests: `expectTypeOf` and `@ts-expect-error` checked by tsc (strict), nothing run.
        test: {
          name: 'types',
          include: [],
          typecheck: {
            enabled: true,
            only: true,
            include: ['test/types/**/*.test-d.ts'],
            tsconfig: './tsconfig.json',
          },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Each file starts its own real cluster; two cores: keep it to one file at a time.
          fileParallelism: false,
        },
      },
    ],
  },
})
