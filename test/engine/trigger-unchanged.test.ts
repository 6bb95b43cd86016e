import { describe, expect, it } from 'vitest';
import { notingEngine } from './noting-engine.js';
import { settle } from './settle.js';

describe('entity triggers on a sheet that did not change', () => {
  it('compare nothing and write no snapshot, and still fire once the sheet changes', async () => {
    const { engine, spreadsheets, seen } = await notingEngine('items', 'status', [[1, 'open']]);
    await engine.triggers.create({
      name: 'item-changes',
      type: 'entity',
      workflow_name: 'flow',
      entity_data: { entity_name: 'items', events: ['updated'], interval_seconds: 1 },
    });
    const polledAt = async () =>
      ((await engine.options.storage.get('trigger_state', 'item-changes')) as { polled_at: string })
        .polled_at;
    const start = Date.now();
    const tick = async (seconds: number) => {
      await engine.tick(new Date(start + seconds * 1000));
      await settle(engine);
    };
    await tick(0); // records the rows
    await tick(2); // compares them: nothing changed, the snapshot is written again
    const compared = await polledAt();
    await tick(4); // the same table: nothing compared, nothing written
    expect(await polledAt()).toBe(compared);
    spreadsheets.setSheet('book', 'items', [
      ['id', 'status'],
      [1, 'closed'],
    ]);
    await tick(6);
    expect(seen).toEqual([expect.objectContaining({ event: 'updated', row: { id: 1, status: 'closed' } })]);
    expect(await polledAt()).not.toBe(compared);
  });
});
