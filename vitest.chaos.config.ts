import { defineConfig } from 'vitest/config';
import { CHAOS } from './vitest.config.js';

/**
 * `npm run test:chaos`: the chaos and kill suites (killed workers, database restarts, kill storms),
 * one file at a time, since their timings assume the machine to themselves.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    include: CHAOS,
    maxWorkers: 1,
  },
});
