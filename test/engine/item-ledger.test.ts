import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ItemLedger, runEach } from '../../src/engine/item-ledger.js';

describe('ItemLedger', () => {
  it('reports an item without an outcome as lost, and counts an item once', () => {
    const ledger = new ItemLedger(4);
    ledger.start(0);
    ledger.succeed(0, 'a', 1);
    ledger.succeed(0, 'again', 1);
    ledger.start(1);
    ledger.fail(2, { code: 'x', message: 'broken' }, 2, null);
    const { output, lost } = ledger.finish();
    expect(lost).toEqual([1, 3]);
    expect(output).toEqual({ items: ['a', null, null, null], succeeded: 1, failed: 1, skipped: 0 });
    expect(ledger.summary.failures).toEqual([
      { index: 2, attempts: 2, error: { code: 'x', message: 'broken' } },
    ]);
  });

  it('lists the 100 failures with the lowest indexes, in index order, and counts them all', () => {
    const ledger = new ItemLedger(150);
    for (let i = 149; i >= 0; i--) ledger.fail(i, { code: 'x', message: `m${i}` }, 1, null);
    ledger.finish();
    expect(ledger.summary.failed).toBe(150);
    expect(ledger.summary.failures.map((f) => f.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });
});

describe('runEach', () => {
  it('starts items in order and no new one after a stop; resolves to the first index never started', async () => {
    const started: number[] = [];
    const next = await runEach(
      10,
      3,
      async (index) => (started.push(index), index === 4),
      () => false,
    );
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(next).toBe(7);
  });
});

describe('runEach, over item counts and concurrencies', () => {
  /** Settles after `delay` turns: 0 at once, 1-2 microtasks, 3 a macrotask. */
  const settle = (delay: number): Promise<void> =>
    delay === 0
      ? Promise.resolve()
      : delay === 3
        ? new Promise((resolve) => setImmediate(resolve))
        : Array.from({ length: delay }).reduce<Promise<void>>(
            (p) => p.then(() => undefined),
            Promise.resolve(),
          );

  it('runs every index once, none out of range, at most `concurrency` at once, also when timers get a turn', async () => {
    // The clock is the test's: it jumps past the 20 ms stretch when the items in `slowAt` start, so the
    // loop gives timers a turn there, with every worker waiting at once.
    const now = vi.spyOn(Date, 'now');
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 200 }),
          fc.integer({ min: 1, max: 32 }),
          fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 16 }),
          fc.uniqueArray(fc.integer({ min: 0, max: 200 }), { maxLength: 3 }),
          fc.option(fc.integer({ min: 0, max: 220 }), { nil: undefined }),
          async (count, concurrency, delays, slowAt, stopAt) => {
            let clock = 1_000_000;
            now.mockImplementation(() => clock);
            const started: number[] = [];
            let running = 0;
            let most = 0;
            let stopped = false;
            let startedAfterStop = 0;
            const next = await runEach(
              count,
              concurrency,
              async (index) => {
                if (stopped) startedAfterStop += 1;
                started.push(index);
                running += 1;
                most = Math.max(most, running);
                if (slowAt.includes(index)) clock += 25;
                await settle(delays[index % delays.length]!);
                running -= 1;
                if (index === stopAt) stopped = true;
                return index === stopAt;
              },
              () => false,
            );
            for (const index of started)
              expect(Number.isInteger(index) && index >= 0 && index < count).toBe(true);
            // Every index below the first one never started ran, exactly once.
            expect([...started].sort((a, b) => a - b)).toEqual(Array.from({ length: next }, (_, i) => i));
            expect(next).toBeLessThanOrEqual(count);
            if (stopAt === undefined || stopAt >= count) expect(next).toBe(count);
            expect(most).toBeLessThanOrEqual(concurrency);
            // A worker whose item was under way when the stop came may start one more, no worker two.
            expect(startedAfterStop).toBeLessThan(concurrency);
          },
        ),
        { numRuns: 300 },
      );
    } finally {
      now.mockRestore();
    }
  });
});
