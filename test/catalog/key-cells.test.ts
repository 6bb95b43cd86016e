/**
 * Writes by key check that the key cells are still where they were read, comparing the cells as
 * the sheet holds them: a date key held as a serial number, a number key held as text.
 */
import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets } from '../../src/index.js';

const events = {
  name: 'events',
  columns: [
    { name: 'day', type: 'DATE' as const },
    { name: 'n', type: 'NUMBER' as const },
    { name: 'what', type: 'STRING' as const },
  ],
  primary_key: ['day', 'n'],
  spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'events', origin: { row: 0, col: 0 } },
};

async function setUp() {
  const memory = new MemorySpreadsheets({
    book: {
      events: [
        ['day', 'n', 'what'],
        [45000, ' 2 ', 'serial day, number as text'],
        ['2023-03-15', 1, 'plain'],
        [45000, 3, 'serial day'],
      ],
    },
  });
  const engine = new Engine({ spreadsheets: memory });
  await engine.catalog.registerEntity(events);
  return { memory, engine };
}

describe('key cells as the sheet holds them', () => {
  it('find rows whose key cells are held in another form, and leave those cells as they were', async () => {
    const { memory, engine } = await setUp();
    await engine.catalog.update('events', [
      { day: '2023-03-15', n: 2, what: 'changed' },
      { day: '2023-03-15', n: 3, what: 'changed too' },
    ]);
    expect(memory.cells('book', 'events')).toEqual([
      ['day', 'n', 'what'],
      [45000, ' 2 ', 'changed'],
      ['2023-03-15', 1, 'plain'],
      [45000, 3, 'changed too'],
    ]);
    await engine.catalog.delete('events', [{ day: '2023-03-15', n: 2 }]);
    expect(memory.cells('book', 'events')!.map((row) => row[2])).toEqual(['what', 'plain', 'changed too']);
  });

  it('find rows appended since the sheet was read', async () => {
    const { memory, engine } = await setUp();
    await engine.catalog.getEntity({ entity_name: 'events', operation: {} });
    await engine.catalog.append('events', [{ day: '2024-01-02', n: 7, what: 'new' }]);
    await engine.catalog.update('events', [{ day: '2024-01-02', n: 7, what: 'newer' }]);
    expect(memory.cells('book', 'events')!.at(-1)).toEqual(['2024-01-02', 7, 'newer']);
  });
});
