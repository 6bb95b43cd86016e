import { defineConfig } from 'vitest/config';

/**
 * Test files whose subject is a child process, a database's own behaviour or an outside program
 * (killed processes, restarts, the CLI, Bun and Deno, LibreOffice, Chromium): their timings assume
 * the machine to themselves, so they run one file at a time, after the others.
 */
/**
 * The chaos and kill suites: processes killed mid-step, database restarts, kill storms, and a
 * thousand runs waiting at once on one worker. They take minutes, so `npm test` leaves them to
 * `npm run test:chaos` (vitest.chaos.config.ts), which CI runs too.
 */
export const CHAOS = [
  'test/chaos/**/*.test.ts',
  'test/postgres/crash.test.ts',
  'test/waits/timer-restart.test.ts',
  'test/waits/many-waiting.test.ts',
];

export const SERIAL = [
  'test/postgres/storage-contract.test.ts',
  'test/postgres/open.test.ts',
  'test/edge/bun-deno.test.ts',
  'test/cli/**/*.test.ts',
  'test/engine/close.test.ts',
  'test/e2e/**/*.test.ts',
  'test/examples/**/*.test.ts',
  'test/node/file-spreadsheets-libreoffice.test.ts',
];

/**
 * Globs this run leaves out besides the config's own, comma-separated in `STEPWIRE_TEST_EXCLUDE` (the
 * command line's `--exclude` does not reach a project's own `exclude`): CI's second run, on Node 24,
 * leaves out the tests of outside programs (.ci/run).
 */
const LEFT_OUT = (process.env['STEPWIRE_TEST_EXCLUDE'] ?? '')
  .split(',')
  .map((glob) => glob.trim())
  .filter((glob) => glob !== '');

/**
 * Files that replace modules, globals, timers or environment variables for their own run: they run each in
 * a module graph of its own. The other files of the parallel project share one per worker process, which
 * spares each file evaluating the sources again (most of a file's time was its imports).
 */
const ISOLATED = [
  'test/helpers/tools.test.ts',
  'test/auth/passwords-fallback.test.ts',
  'test/engine/secrets.test.ts',
  'test/engine/tracing-absent.test.ts',
  'test/engine/item-ledger.test.ts',
  'test/readme.test.ts',
  'test/script/row-objects.test.ts',
  'test/engine/trigger-recreate.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          // Two files at a time: the machines have two cores, and one file at a time leaves one idle
          // while a file waits on a database or a child process.
          name: 'parallel',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...SERIAL, ...CHAOS, ...ISOLATED, ...LEFT_OUT],
          maxWorkers: 2,
          isolate: false,
          sequence: { groupOrder: 0 },
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ISOLATED,
          exclude: ['**/node_modules/**', ...LEFT_OUT],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL,
          exclude: ['**/node_modules/**', ...LEFT_OUT],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
