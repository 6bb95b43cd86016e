import { describe, expect, it } from 'vitest';
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
