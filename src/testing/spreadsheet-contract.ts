import { describe, expect } from 'vitest';
import { contractCase } from './contract-case.js';
import type { CellValue, SpreadsheetAdapter } from '../adapters/types.js';
import { Engine } from '../engine/engine.js';
import { SheetError, WriteRejectedError } from '../errors/index.js';

/** Options of {@link describeSpreadsheetContract}. */
export interface SpreadsheetContractOptions {
  /** Name shown in the test report. */
  name: string;
  /**
   * Makes a fresh adapter whose spreadsheet `contract` holds the given sheets (name -> rows of
   * cells). Called once per test.
   */
  create(sheets: Record<string, CellValue[][]>): SpreadsheetAdapter | Promise<SpreadsheetAdapter>;
  /** Cleans up after each test. */
  dispose?(adapter: SpreadsheetAdapter): void | Promise<void>;
  /** Abilities beyond the required ones: `write` (overwrite a range), `update` (writes by key). */
  capabilities?: { write?: boolean; update?: boolean };
  /** Tests to skip, each with the reason. */
  skip?: { reason: string; tests: string[] }[];
}

/** The spreadsheet id the contract's sheets live in. */
export const CONTRACT_SPREADSHEET = 'contract';

const SEED: Record<string, CellValue[][]> = {
  people: [
    ['id', 'name', 'score'],
    [1, 'Ada', 9.5],
    [2, 'Grace', null],
    [3, 'Linus', 7],
  ],
  offset: [
    [],
    [null, null, 'id', 'name', 'extra'],
    [null, null, 1, 'x', 'keep'],
    [],
    [null, null, 'after the blank row', null, null],
  ],
};

/**
 * The contract every spreadsheet adapter must pass: run it with one call from a vitest file.
 * Cases run on the adapter directly and through `new Engine({ spreadsheets })` for the engine's
 * rules (all-or-nothing append, errors naming the A1 cell).
 * @example
 * ```ts
 * import { describeSpreadsheetContract } from 'stepwire/testing';
 * describeSpreadsheetContract({ name: 'memory', create: (sheets) => new MemorySpreadsheets({ contract: sheets }) });
 * ```
 */
export function describeSpreadsheetContract(options: SpreadsheetContractOptions): void {
  const test = contractCase<SpreadsheetAdapter>(
    () => options.create(structuredClone(SEED)),
    options.dispose?.bind(options),
    options.skip,
  );
  const ref = (sheet: string) => ({ spreadsheet_id: CONTRACT_SPREADSHEET, sheet_name: sheet });

  describe(`spreadsheet contract: ${options.name}`, () => {
    test('reads a range from the top-left corner to the end of the data', async (adapter) => {
      const [rows] = await adapter.read([{ ...ref('people'), row: 0, col: 0 }]);
      expect(trim(rows!)).toEqual(trim(SEED['people']!));
    });

    test('reads several ranges in one call, in request order', async (adapter) => {
      const result = await adapter.read([
        { ...ref('people'), row: 1, col: 1, rows: 2, cols: 1 },
        { ...ref('offset'), row: 1, col: 2, rows: 2, cols: 2 },
      ]);
      expect(result.map(trim)).toEqual([
        [['Ada'], ['Grace']],
        [
          ['id', 'name'],
          [1, 'x'],
        ],
      ]);
    });

    test('keeps cell types: numbers, strings, empty cells', async (adapter) => {
      const [rows] = await adapter.read([{ ...ref('people'), row: 1, col: 0, rows: 2 }]);
      expect(trim(rows!)).toEqual([
        [1, 'Ada', 9.5],
        [2, 'Grace'],
      ]);
    });

    test('a missing sheet is a SheetError with code sheet_not_found', async (adapter) => {
      const error = await Promise.resolve()
        .then(() => adapter.read([{ ...ref('nope'), row: 0, col: 0 }]))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SheetError);
      expect((error as SheetError).code).toBe('sheet_not_found');
    });

    test('append inserts rows at the given row and column, moving later rows down', async (adapter) => {
      await adapter.append({ ...ref('offset'), row: 3, col: 2, values: [[2, 'y', null]] });
      const [rows] = await adapter.read([{ ...ref('offset'), row: 0, col: 0 }]);
      expect(trim(rows!)).toEqual([
        [],
        [null, null, 'id', 'name', 'extra'],
        [null, null, 1, 'x', 'keep'],
        [null, null, 2, 'y'],
        [],
        [null, null, 'after the blank row'],
      ]);
    });

    test('a revision changes with every change; a number one counts each change as one', async (adapter) => {
      if (!adapter.revision) return;
      const before = await adapter.revision(ref('people'));
      await adapter.append({ ...ref('people'), row: 4, col: 0, values: [[4, 'Barbara', 8]] });
      const after = await adapter.revision(ref('people'));
      expect(after).not.toEqual(before);
      if (typeof before === 'number') expect(after).toBe(before + 1);
      if (adapter.write) {
        await adapter.write({ ...ref('people'), row: 4, col: 1, values: [['Liskov']] });
        const written = await adapter.revision(ref('people'));
        expect(written).not.toEqual(after);
        if (typeof after === 'number') expect(written).toBe(after + 1);
      }
    });

    test('append writes raw values: a formula-looking string stays text', async (adapter) => {
      await adapter.append({ ...ref('people'), row: 4, col: 0, values: [[4, '=1+1', 0]] });
      const [rows] = await adapter.read([{ ...ref('people'), row: 4, col: 0, rows: 1 }]);
      expect(rows).toEqual([[4, '=1+1', 0]]);
    });

    if (options.capabilities?.write) {
      test('write overwrites a range in place', async (adapter) => {
        await adapter.write!({ ...ref('people'), row: 2, col: 1, values: [['Hopper', 8]] });
        const [rows] = await adapter.read([{ ...ref('people'), row: 2, col: 0, rows: 1 }]);
        expect(rows).toEqual([[2, 'Hopper', 8]]);
      });
    }

    if (options.capabilities?.update) {
      test('update overwrites cells and deletes rows as one change; rows below move up', async (adapter) => {
        await adapter.update!({
          ...ref('people'),
          cells: [{ row: 1, col: 1, values: ['Ada L.', '=1+1'] }],
          deleteRows: [2],
          expect: [
            { row: 1, col: 0, values: [1] },
            { row: 2, col: 0, values: [2] },
          ],
        });
        const [rows] = await adapter.read([{ ...ref('people'), row: 0, col: 0 }]);
        expect(trim(rows!)).toEqual([
          ['id', 'name', 'score'],
          [1, 'Ada L.', '=1+1'],
          [3, 'Linus', 7],
        ]);
      });

      test('update changes nothing when an expected cell differs (rows_moved)', async (adapter) => {
        const error = await Promise.resolve()
          .then(() =>
            adapter.update!({
              ...ref('people'),
              cells: [{ row: 1, col: 1, values: ['changed'] }],
              deleteRows: [3],
              expect: [{ row: 3, col: 0, values: [2] }],
            }),
          )
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SheetError);
        expect((error as SheetError).code).toBe('rows_moved');
        expect((error as SheetError).location.cell).toBe('A4');
        const [rows] = await adapter.read([{ ...ref('people'), row: 0, col: 0 }]);
        expect(trim(rows!)).toEqual(trim(SEED['people']!));
      });

      test('append inserts nothing when an expected cell differs (rows_moved), and inserts when all match', async (adapter) => {
        const error = await Promise.resolve()
          .then(() =>
            adapter.append({
              ...ref('people'),
              row: 4,
              col: 0,
              values: [[4, 'Barbara', 8]],
              expect: [{ row: 3, col: 0, values: [4] }],
            }),
          )
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SheetError);
        expect((error as SheetError).code).toBe('rows_moved');
        const [rows] = await adapter.read([{ ...ref('people'), row: 0, col: 0 }]);
        expect(trim(rows!)).toEqual(trim(SEED['people']!));
        await adapter.append({
          ...ref('people'),
          row: 4,
          col: 0,
          values: [[4, 'Barbara', 8]],
          expect: [{ row: 3, col: 0, values: [3] }],
        });
        const [after] = await adapter.read([{ ...ref('people'), row: 4, col: 0 }]);
        expect(trim(after!)).toEqual([[4, 'Barbara', 8]]);
      });

      test('through the engine: upsert, update and delete by key write only the entity cells', async (adapter) => {
        const engine = new Engine({ spreadsheets: adapter });
        await engine.catalog.registerEntity(offsetEntity);
        await engine.catalog.upsert('offset', [
          { id: 1, name: 'x2' },
          { id: 2, name: 'y' },
        ]);
        await engine.catalog.update('offset', [{ id: 2, name: 'y2' }]);
        const [mid] = await adapter.read([{ ...ref('offset'), row: 0, col: 0 }]);
        expect(trim(mid!)).toEqual([
          [],
          [null, null, 'id', 'name', 'extra'],
          [null, null, 1, 'x2', 'keep'],
          [null, null, 2, 'y2'],
          [],
          [null, null, 'after the blank row'],
        ]);
        expect(await engine.catalog.delete('offset', [{ id: 1 }])).toEqual({ written: 1 });
        const missing = await engine.catalog
          .update('offset', [{ id: 1, name: 'gone' }])
          .catch((e: unknown) => e);
        expect((missing as WriteRejectedError).code).toBe('write_conflict');
        const [rows] = await adapter.read([{ ...ref('offset'), row: 0, col: 0 }]);
        expect(trim(rows!)).toEqual([
          [],
          [null, null, 'id', 'name', 'extra'],
          [null, null, 2, 'y2'],
          [],
          [null, null, 'after the blank row'],
        ]);
      });
    }

    test('through the engine: reads map the header and stop at the blank row', async (adapter) => {
      const engine = new Engine({ spreadsheets: adapter });
      await engine.catalog.registerEntity(offsetEntity);
      const out = await engine.catalog.getEntity({ entity_name: 'offset', operation: {} });
      expect(out.body.table.rows).toEqual([[1, 'x']]);
    });

    test('through the engine: an append is all or nothing', async (adapter) => {
      const engine = new Engine({ spreadsheets: adapter });
      await engine.catalog.registerEntity(peopleEntity);
      const error = await engine.catalog
        .append('people', [
          { id: 5, name: 'ok', score: 1 },
          { id: 1, name: 'duplicate key', score: 2 },
        ])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WriteRejectedError);
      const [rows] = await adapter.read([{ ...ref('people'), row: 0, col: 0 }]);
      expect(trim(rows!)).toEqual(trim(SEED['people']!));
      await engine.catalog.append('people', [{ id: 5, name: 'Eve', score: 3 }]);
      const out = await engine.catalog.getEntity({
        entity_name: 'people',
        operation: { filters: [{ column: 'id', operator: 'GREATER_THAN', value: 3 }] },
      });
      expect(out.body.table.rows).toEqual([[5, 'Eve', 3]]);
    });

    test('through the engine: a cell of the wrong type is named in A1 notation', async (adapter) => {
      const engine = new Engine({ spreadsheets: adapter });
      await engine.catalog.registerEntity({
        ...peopleEntity,
        columns: [
          { name: 'id', type: 'NUMBER' },
          { name: 'name', type: 'NUMBER' },
        ],
      });
      const out = await engine.catalog.getEntity({ entity_name: 'people', operation: {} });
      expect(out.body.error?.is_error).toBe(true);
      expect(out.body.error?.errors?.join(' ')).toMatch(/\bB2\b/);
    });
  });
}

const peopleEntity = {
  name: 'people',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
    { name: 'score', type: 'NUMBER' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: {
    spreadsheet_id: CONTRACT_SPREADSHEET,
    sheet_name: 'people',
    origin: { row: 0, col: 0 },
  },
};

const offsetEntity = {
  name: 'offset',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: {
    spreadsheet_id: CONTRACT_SPREADSHEET,
    sheet_name: 'offset',
    origin: { row: 1, col: 2 },
  },
};

/** Drops trailing empty cells of each row and trailing empty rows, as backends differ there. */
function trim(rows: CellValue[][]): CellValue[][] {
  const out = rows.map((row) => {
    const copy = row.slice();
    while (copy.length > 0 && (copy[copy.length - 1] === null || copy[copy.length - 1] === '')) copy.pop();
    return copy;
  });
  while (out.length > 0 && out[out.length - 1]!.length === 0) out.pop();
  return out;
}
