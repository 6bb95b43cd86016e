import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Engine, MemorySpreadsheets, MemoryStorage, type TriggerBody } from '../../src/index.js';
import type { RangeRequest } from '../../src/adapters/types.js';
import { settle } from './settle.js';

/** Memory spreadsheets whose reads can be held (a slow Google Sheets call) until released. */
class SlowSheets extends MemorySpreadsheets {
  hold: Promise<void> | undefined;
  reading: (() => void) | undefined;
  override read(ranges: readonly RangeRequest[]): ReturnType<MemorySpreadsheets['read']> {
    const held = this.hold;
    if (!held) return super.read(ranges);
    this.reading?.();
    // The rows as they are when the read was sent; the answer comes once released.
    const rows = super.read(ranges);
    return held.then(() => rows) as unknown as ReturnType<MemorySpreadsheets['read']>;
  }
}

const ROWS = (...ids: number[]) => [['id', 'name'], ...ids.map((id) => [id, `row ${id}`])];

describe('a trigger deleted while a tick polls it, then created again under its name', () => {
  it('starts afresh: its first poll only records, and each later change fires once', () => recreated(false));

  it('starts afresh when it is created again within the millisecond the deleted one was created in', () =>
    recreated(true));
});

/**
 * The scenario; with `sameMillisecond`, the clock stands still at the first trigger's creation while it is
 * deleted and created again (on a fast machine they can fall in one millisecond).
 */
async function recreated(sameMillisecond: boolean): Promise<void> {
  const spreadsheets = new SlowSheets({ book: { items: ROWS(1) } });
  const engine = new Engine({ storage: new MemoryStorage(), spreadsheets });
  const seen: { event: string; key: unknown }[] = [];
  engine.actions.register({
    provider: 'test',
    module: 'triggers',
    action: 'note',
    input: z.looseObject({}),
    run: (input) => (seen.push((input as { got: { event: string; key: unknown } }).got), input),
  });
  await engine.catalog.registerEntity({
    name: 'items',
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'name', type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'items', origin: { row: 0, col: 0 } },
  });
  await engine.workflows.create({
    name: 'notify',
    steps: [
      {
        name: 'note',
        type: 'l2',
        l2_data: { provider: 'test', module: 'triggers', action: 'note', input_data: { got: '{{input}}' } },
      },
    ],
    wires: [],
  });
  const trigger: TriggerBody = {
    name: 'items-changed',
    type: 'entity',
    workflow_name: 'notify',
    entity_data: { entity_name: 'items', events: ['created', 'deleted'], interval_seconds: 1 },
  };
  await engine.triggers.create(trigger);
  const t0 = Date.now();
  await engine.tick(new Date(t0)); // the first poll records row 1
  // A tick polls, and its read is slow; meanwhile the trigger is deleted and created again.
  let release!: () => void;
  spreadsheets.hold = new Promise<void>((resolve) => (release = resolve));
  const reading = new Promise<void>((resolve) => (spreadsheets.reading = resolve));
  spreadsheets.setSheet('book', 'items', ROWS(1));
  const slowTick = engine.tick(new Date(t0 + 2_000));
  await reading;
  const first = Date.parse((await engine.triggers.get('items-changed')).created_at);
  const clock = sameMillisecond ? vi.spyOn(Date, 'now').mockReturnValue(first) : undefined;
  try {
    await engine.triggers.delete('items-changed');
    await engine.triggers.create(trigger);
  } finally {
    clock?.mockRestore();
  }
  expect((await engine.triggers.get('items-changed')).created_at).not.toBe(new Date(first).toISOString());
  spreadsheets.hold = undefined;
  release();
  await slowTick; // it wrote what it read, for the trigger that was deleted
  // Rows change before the new trigger's first poll: that poll only records them.
  spreadsheets.setSheet('book', 'items', ROWS(2, 3));
  expect(await engine.tick(new Date(t0 + 4_000))).toEqual([]);
  spreadsheets.setSheet('book', 'items', ROWS(2, 3, 4));
  const fired = await engine.tick(new Date(t0 + 6_000));
  await settle(engine);
  expect(fired).toHaveLength(1);
  expect(seen).toEqual([expect.objectContaining({ event: 'created', key: { id: 4 } })]);
}
