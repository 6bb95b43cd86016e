import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import {
  Engine,
  MemorySpreadsheets,
  type AppendRequest,
  type CellValue,
  type SpreadsheetAdapter,
} from '../../src/index.js';
import { seedCsv, seedXlsx } from '../node/sheet-files.js';

const items = {
  name: 'items',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'label', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'items', origin: { row: 0, col: 0 } },
};
const SEED: CellValue[][] = [
  ['id', 'label'],
  [1, 'a'],
  [2, 'b'],
  [3, 'c'],
  [4, 'd'],
];

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** The same sheet, for two engines: in memory, or a CSV or .xlsx file in a new folder. */
async function sharedSheets(kind: string): Promise<() => SpreadsheetAdapter> {
  if (kind === 'memory') {
    const sheets = new MemorySpreadsheets({ shop: { items: SEED } });
    return () => sheets;
  }
  const dir = await mkdtemp(join(tmpdir(), 'stepwire-append-end-'));
  dirs.push(dir);
  if (kind === 'csv') await seedCsv(dir, 'shop', { items: SEED });
  else await seedXlsx(dir, 'shop', { items: SEED });
  return () => new FileSpreadsheets({ dir });
}

/**
 * An adapter whose next append first lets `between` run: another writer changing the sheet after this
 * engine read it and before its rows go in.
 */
function interleaved(
  sheets: SpreadsheetAdapter,
  between: { next?: (() => Promise<unknown>) | undefined },
): SpreadsheetAdapter {
  return {
    read: (ranges, options) => sheets.read(ranges, options),
    write: (request, options) => sheets.write!(request, options),
    update: (request, options) => sheets.update!(request, options),
    async append(request: AppendRequest, options) {
      const other = between.next;
      between.next = undefined;
      await other?.();
      return sheets.append(request, options);
    },
  };
}

async function ids(engine: Engine): Promise<unknown[]> {
  const read = await engine.catalog.getEntity({ entity_name: 'items', operation: {}, page_size: 100 });
  return read.body.table!.rows!.map((row) => row[0]);
}

describe.each(['memory', 'csv', 'xlsx'])('an append while another writer changes the sheet (%s)', (kind) => {
  it('lands next to the rows the sheet holds when it goes in: none is lost below a blank row', async () => {
    const sheets = await sharedSheets(kind);
    const between: { next?: (() => Promise<unknown>) | undefined } = {};
    const writer = new Engine({ spreadsheets: interleaved(sheets(), between) });
    const other = new Engine({ spreadsheets: sheets() });
    for (const engine of [writer, other]) await engine.catalog.registerEntity(items);
    between.next = () => other.catalog.delete('items', [{ id: 4 }, { id: 3 }]);
    expect(await writer.catalog.append('items', [{ id: 5, label: 'e' }])).toEqual({ written: 1 });
    between.next = () => other.catalog.append('items', [{ id: 6, label: 'f' }]);
    expect(
      await writer.catalog.upsert('items', [
        { id: 1, label: 'A' },
        { id: 7, label: 'g' },
      ]),
    ).toEqual({
      written: 2,
    });
    // Rows deleted between an upsert's update and its append: planned again, not left half done.
    between.next = () => other.catalog.delete('items', [{ id: 1 }]);
    expect(
      await writer.catalog.upsert('items', [
        { id: 2, label: 'B' },
        { id: 8, label: 'h' },
      ]),
    ).toEqual({
      written: 2,
    });
    const reader = new Engine({ spreadsheets: sheets() });
    await reader.catalog.registerEntity(items);
    // Every row is readable (rows another writer appended meanwhile may come after this write's own).
    expect((await ids(reader)).sort((a, b) => Number(a) - Number(b))).toEqual([2, 5, 6, 7, 8]);
    const read = await reader.catalog.getEntity({ entity_name: 'items', operation: {}, page_size: 100 });
    expect(read.body.table!.rows!.find((row) => row[0] === 2)).toEqual([2, 'B']);
  });
});
