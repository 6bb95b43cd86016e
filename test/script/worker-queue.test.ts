import { afterAll, describe, expect, it } from 'vitest';
import { CancelledError, StepwireError } from '../../src/errors/index.js';
import { WorkerSandbox } from '../../src/adapters/node/worker-sandbox.js';
import { input } from './helpers.js';

const sandbox = new WorkerSandbox({ poolSize: 1 });
afterAll(() => sandbox.close());

describe('WorkerSandbox line of waiting runs', () => {
  it('drops a run cancelled while it waits behind another: it rejects at once and never runs', async () => {
    // Warm the single thread so the first run starts at once.
    await sandbox.run(input(''));
    const busy = sandbox.run(
      input('const end = Date.now() + 600; while (Date.now() < end) {}\nconsole.log("busy done")'),
    );
    const controller = new AbortController();
    const cancelled = sandbox.run({
      ...input("writeEntity('totals', [{ ran: true }])"),
      signal: controller.signal,
    });
    const after = sandbox.run(input("writeEntity('totals', [{ after: true }])"));
    const started = Date.now();
    controller.abort();
    const outcome = await cancelled.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    expect(outcome).toEqual({ error: expect.any(CancelledError) });
    // Rejected while the run ahead still holds the thread, not when its turn came.
    expect(Date.now() - started).toBeLessThan(400);
    expect((await busy).logs).toEqual(['busy done']);
    expect((await after).writes).toEqual({ totals: [{ after: true }] });
  });

  it('does not start a run whose signal was aborted after it was queued but before its thread was ready', async () => {
    const fresh = new WorkerSandbox({ poolSize: 1 });
    try {
      const controller = new AbortController();
      const run = fresh.run({
        ...input("writeEntity('totals', [{ ran: true }])"),
        signal: controller.signal,
      });
      controller.abort();
      await expect(run).rejects.toBeInstanceOf(CancelledError);
      // The thread still serves the next run.
      expect((await fresh.run(input("writeEntity('totals', [{ ok: 1 }])"))).writes).toEqual({
        totals: [{ ok: 1 }],
      });
    } finally {
      await fresh.close();
    }
  });

  it('fails the runs waiting for a thread that cannot start, rather than starting threads forever', async () => {
    const broken = new WorkerSandbox({
      workerUrl: new URL('file:///nonexistent/script-worker.js'),
      poolSize: 2,
    });
    try {
      const errors = await Promise.all(
        [input('1'), input('2'), input('3')].map((one) => broken.run(one).catch((e: unknown) => e)),
      );
      for (const error of errors) {
        expect((error as StepwireError).code).toBe('script_worker_failed');
        expect((error as Error).message).toMatch(/^the script worker failed: Cannot find module/);
      }
    } finally {
      await broken.close();
    }
  });
});
