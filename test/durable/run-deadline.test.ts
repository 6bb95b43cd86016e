import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';

const db = await openPostgres(undefined, { queue: { pollSeconds: 0.5 } });
afterAll(() => db.close());

describe('the run time limit of a durable run', () => {
  it('ends the run when its one worker slot is held by the step it cuts short', async () => {
    const engine = new Engine({
      storage: db.storage,
      queue: db.queue,
      actions: [
        {
          provider: 'acme',
          module: 'test',
          action: 'hold',
          input: z.object({}),
          // Holds its slot until its signal aborts.
          run: (_input, context) =>
            new Promise((_, reject) =>
              context.signal.addEventListener('abort', () => reject(new Error('let go'))),
            ),
        },
      ],
    });
    await engine.workflows.create({
      name: 'held',
      steps: [
        {
          name: 'hold',
          type: 'l2',
          l2_data: { provider: 'acme', module: 'test', action: 'hold', input_data: {} },
        },
      ],
      wires: [],
    });
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
