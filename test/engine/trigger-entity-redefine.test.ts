import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, type EntityColumn } from '../../src/index.js';
import { settle } from './settle.js';

type Column = EntityColumn;
const entity = (columns: Column[], primary_key: string[]) => ({
  name: 'items',
  columns,
  primary_key,
  spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'items', origin: { row: 0, col: 0 } },
});
const ID: Column = { name: 'id', type: 'NUMBER' };
const NAME: Column = { name: 'name', type: 'STRING' };
const QTY: Column = { name: 'qty', type: 'NUMBER' };

describe('an entity redefined under an entity trigger', () => {
  it('fires only for rows that changed, not for every row the new definition reads differently', async () => {
    const spreadsheets = new MemorySpreadsheets({
      book: {
        items: [
          ['id', 'name', 'qty'],
          [1, 'a', 10],
          [2, 'b', 20],
          [3, 'c', 30],
        ],
      },
    });
    const engine = new Engine({ spreadsheets });
    await engine.catalog.registerEntity(entity([ID, NAME], ['id']));
    await engine.workflows.create({
      name: 'w',
      steps: [
        {
          name: 'd',
          type: 'l2',
          l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: {} },
        },
      ],
      wires: [],
    });
    await engine.triggers.create({
      name: 'watch',
      type: 'entity',
      workflow_name: 'w',
      entity_data: { entity_name: 'items', events: ['created', 'updated', 'deleted'], interval_seconds: 1 },
    });
    let t = Date.parse('2099-01-01T00:00:00Z');
    /** Ticks 2 s later: each run started, as `event key`. */
    const tick = async () => {
      t += 2_000;
      const fired = await engine.tick(new Date(t));
      await settle(engine);
      const runs = await Promise.all(fired.map((f) => engine.getRun(f.run_id)));
      return runs.map(({ input }) => {
        const { event, key } = input as { event: string; key: unknown };
        return `${event} ${JSON.stringify(key)}`;
      });
    };
    expect(await tick()).toEqual([]); // the first poll records the rows
    await engine.catalog.upsert('items', [{ id: 2, name: 'B' }]);
    expect(await tick()).toEqual(['updated {"id":2}']);

    // A column added: rows compare on the columns both definitions read alike.
    await engine.catalog.upsertEntity(entity([ID, NAME, QTY], ['id']));
    expect(await tick()).toEqual([]);
    // A column's type changed (its cells now read as text, "10" for 10): not a change of the rows.
    await engine.catalog.upsertEntity(entity([ID, NAME, { name: 'qty', type: 'STRING' }], ['id']));
    expect(await tick()).toEqual([]);
    // A column dropped, with one real change beside it.
    await engine.catalog.upsertEntity(entity([ID, NAME], ['id']));
    await engine.catalog.upsert('items', [{ id: 3, name: 'C' }]);
    expect(await tick()).toEqual(['updated {"id":3}']);

    // A new primary key: the rows are recorded again under it, none fires.
    await engine.catalog.upsertEntity(entity([ID, NAME, QTY], ['name']));
    expect(await tick()).toEqual([]);
    await engine.catalog.upsert('items', [{ id: 1, name: 'a', qty: 11 }]);
    expect(await tick()).toEqual(['updated {"name":"a"}']);
  });
});
