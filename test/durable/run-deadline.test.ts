import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { heldStepEngine } from './held-step.js';

const db = await openPostgres(undefined, { queue: { pollSeconds: 0.5 } });
afterAll(() => db.close());

describe('the run time limit of a durable run', () => {
  it('ends the run when its one worker slot is held by the step it cuts short', async () => {
    const engine = await heldStepEngine(db, 'held');
    // One slot: the run's timer job cannot run while the step holds it.
    const worker = engine.work({ concurrency: 1, triggers: false });
    try {
      const started = Date.now();
      const record = await (await engine.start('held', {}, { timeoutMs: 500 })).result;
      expect(record.status).toBe('failed');
      expect(record.error).toMatchObject({ code: 'limit_exceeded', step: 'hold' });
      expect(record.steps).toEqual([
        expect.objectContaining({
          name: 'hold',
          status: 'failed',
          error: expect.objectContaining({ code: 'stopped' }),
        }),
      ]);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await worker.stop();
    }
    // The worker stopped: the step it held ended with the run.
    await engine.close();
  });
});
