import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, type SpreadsheetAdapter } from '../../src/index.js';
import { FileSpreadsheets } from '../../src/node/index.js';
import { seedCsv, seedXlsx } from '../node/sheet-files.js';

const dir = mkdtempSync(join(tmpdir(), 'stepwire-large-writes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** More rows than one call's arguments can carry (a spread of them throws a RangeError). */
const ROWS = 200_000;

async function appendMany(spreadsheets: SpreadsheetAdapter): Promise<Engine> {
  const engine = new Engine({ spreadsheets, limits: { maxRowsPerWrite: 500_000 } });
  await engine.catalog.registerEntity({
    name: 'e',
    columns: [{ name: 'id', type: 'NUMBER' }],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'b', sheet_name: 's', origin: { row: 0, col: 0 } },
  });
  // One write of two appends to the same entity: the plans are merged too.
  const half = ROWS / 2;
  const result = await engine.catalog.write([
    { entity: 'e', rows: Array.from({ length: half }, (_, i) => [i]) },
    { entity: 'e', rows: Array.from({ length: half }, (_, i) => [half + i]) },
  ]);
  expect(result).toMatchObject({ written: { e: ROWS } });
  return engine;
}

describe('a write of 200,000 rows, with maxRowsPerWrite raised', () => {
  it('lands whole in memory', async () => {
    const sheets = new MemorySpreadsheets({ b: { s: [['id']] } });
    await appendMany(sheets);
    const cells = sheets.cells('b', 's')!;
    expect(cells).toHaveLength(ROWS + 1);
    expect(cells[ROWS]).toEqual([ROWS - 1]);
  });

  it.each([
    ['a CSV file', 'csv', seedCsv],
    ['an .xlsx file', 'xlsx', seedXlsx],
  ] as const)(
    'lands whole in %s, as a fresh engine reads it',
    async (_, format, seed) => {
      const root = join(dir, format);
      mkdirSync(root, { recursive: true });
      await seed(root, 'b', { s: [['id']] });
      await appendMany(new FileSpreadsheets({ dir: root }));
      const fresh = new Engine({ spreadsheets: new FileSpreadsheets({ dir: root }) });
      await fresh.catalog.registerEntity({
        name: 'e',
        columns: [{ name: 'id', type: 'NUMBER' }],
        primary_key: ['id'],
        spreadsheet_config: { spreadsheet_id: 'b', sheet_name: 's', origin: { row: 0, col: 0 } },
      });
      const { table } = await fresh.catalog.table('e');
      expect(table.length).toBe(ROWS);
    },
    120_000,
  );
});
