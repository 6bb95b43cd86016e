import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets } from '../../src/index.js';

describe('write_mode replace', () => {
  it("rewrites the entity's region as wide as its header: a header column the entity does not name is blanked, cells right of the header stay", async () => {
    const spreadsheets = new MemorySpreadsheets({
      book: {
        items: [
          ['id', 'label', 'note'],
          [1, 'one', 'first note', 'kept 1'],
          [2, 'two', '=SUM(1)', 'kept 2'],
          [3, 'three', 'third note'],
        ],
      },
    });
    const engine = new Engine({ spreadsheets });
    await engine.catalog.registerEntity({
      name: 'items',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'label', type: 'STRING' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'items', origin: { row: 0, col: 0 } },
    });
    await engine.catalog.write([{ entity: 'items', rows: [{ id: 9, label: 'nine' }], mode: 'replace' }]);
    const cells = spreadsheets.cells('book', 'items')!;
    expect(cells.slice(1).map((row) => row.slice(0, 3))).toEqual([
      [9, 'nine', null],
      [null, null, null],
      [null, null, null],
    ]);
    // Cells past the header's last column are outside the region and untouched.
    expect(cells.slice(1, 3).map((row) => row[3])).toEqual(['kept 1', 'kept 2']);
    const read = await engine.catalog.getEntity({ entity_name: 'items', operation: {} });
    expect(read.body.table.rows).toEqual([[9, 'nine']]);
  });
});
