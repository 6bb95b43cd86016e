import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import {
  Engine,
  MemorySpreadsheets,
  MemoryStorage,
  type AppendRequest,
  type SheetRef,
  type SpreadsheetAdapter,
} from '../../src/index.js';

const temp = mkdtempSync(join(tmpdir(), 'stepwire-cache-writes-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const entity = {
  name: 'e',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 's', origin: { row: 0, col: 0 } },
};
const readAll = { entity_name: 'e', operation: {} };
const rowsOf = async (engine: Engine) => (await engine.catalog.getEntity(readAll)).body.table.rows;

/** A spreadsheet adapter with a gap: see {@link gapAfterWrite}. */
type Gapped = SpreadsheetAdapter & { gap?: (() => Promise<unknown>) | undefined };

/**
 * `inner`, but when `gap` is set, the next append runs it once its rows are written, before the
 * append resolves: another writer writes right after this engine's write, before the engine can
 * look at the sheet's revision.
 */
function gapAfterWrite(inner: SpreadsheetAdapter): Gapped {
  const adapter: Gapped = {
    read: (ranges, options) => inner.read(ranges, options),
    append: async (request, options) => {
      await inner.append(request, options);
      const gap = adapter.gap;
      adapter.gap = undefined;
      if (gap) await gap();
    },
    revision: (sheet: SheetRef) => inner.revision!(sheet),
  };
  return adapter;
}

describe("another writer's rows that land between this engine's write and its look at the revision", () => {
  it('are read afterwards (two processes on one CSV file)', async () => {
    const dir = join(temp, 'csv');
    mkdirSync(join(dir, 'book'), { recursive: true });
    writeFileSync(join(dir, 'book', 's.csv'), 'id,name\n1,a\n');
    const sheetsA = gapAfterWrite(new FileSpreadsheets({ dir }));
    const a = new Engine({ storage: new MemoryStorage(), spreadsheets: sheetsA });
    const b = new Engine({ storage: new MemoryStorage(), spreadsheets: new FileSpreadsheets({ dir }) });
    await a.catalog.registerEntity(entity);
    await b.catalog.registerEntity(entity);
    expect(await rowsOf(a)).toEqual([[1, 'a']]);
    sheetsA.gap = () => b.catalog.append('e', [{ id: 3, name: 'from b' }]);
    await a.catalog.append('e', [{ id: 2, name: 'from a' }]);
    expect(readFileSync(join(dir, 'book', 's.csv'), 'utf8')).toBe('id,name\n1,a\n2,from a\n3,from b\n');
    expect(await rowsOf(a)).toEqual([
      [1, 'a'],
      [2, 'from a'],
      [3, 'from b'],
    ]);
    await expect(a.catalog.append('e', [{ id: 3, name: 'again' }])).rejects.toMatchObject({
      code: 'write_conflict',
    });
  });

  it('are read afterwards (two engines on one in-memory adapter)', async () => {
    const memory = new MemorySpreadsheets({
      book: {
        s: [
          ['id', 'name'],
          [1, 'a'],
        ],
      },
    });
    const sheetsA = gapAfterWrite(memory);
    const a = new Engine({ storage: new MemoryStorage(), spreadsheets: sheetsA });
    const b = new Engine({ storage: new MemoryStorage(), spreadsheets: memory });
    await a.catalog.registerEntity(entity);
    await b.catalog.registerEntity(entity);
    expect(await rowsOf(a)).toEqual([[1, 'a']]);
    sheetsA.gap = () => b.catalog.append('e', [{ id: 3, name: 'from b' }]);
    await a.catalog.append('e', [{ id: 2, name: 'from a' }]);
    expect(await rowsOf(a)).toEqual([
      [1, 'a'],
      [2, 'from a'],
      [3, 'from b'],
    ]);
    await expect(a.catalog.append('e', [{ id: 3, name: 'again' }])).rejects.toMatchObject({
      code: 'write_conflict',
    });
  });
});

describe('appends through an adapter that reports no revisions', () => {
  it('leave no copy of the table behind (it would never be read)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let appended = 0;
    // A service that keeps the rows elsewhere: reads give the header only.
    const sheets: SpreadsheetAdapter = {
      read: () => [[['id', 'name']]],
      append: (request: AppendRequest) => void (appended += request.values.length),
    };
    const ROWS = 300_000;
    const engine = new Engine({ spreadsheets: sheets, limits: { maxRowsPerWrite: ROWS } });
    await engine.catalog.registerEntity(entity);
    await engine.catalog.getEntity(readAll);
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const before = heap();
    await (async () => {
      const rows = Array.from({ length: ROWS }, (_, i) => [i, `row number ${i} of the append`]);
      await engine.catalog.append('e', rows);
    })();
    const grown = heap() - before;
    expect(appended).toBe(ROWS);
    // The rows' strings alone take some 15 MB; a kept table holds them all.
    expect(grown).toBeLessThan(4_000_000);
  });
});
