/**
 * What `SpreadsheetAdapter.update` means, for adapters that hold a sheet as rows of cells: check the
 * expected cells, write the cells, delete the rows. Shared by the memory and the file adapters, so
 * both mean the same thing by it.
 * @module
 */
import { SheetError } from '../errors/index.js';
import { cellA1 } from './a1.js';
import type { CellRun, CellValue, SheetRef, UpdateRequest } from './types.js';

/**
 * The first expected cell that differs from what `cellAt` says the sheet holds, or `undefined` when
 * all match. An empty cell (`null`, `undefined` or `""`) matches `null`. @internal
 */
export function firstMismatch(
  expect: readonly CellRun[],
  cellAt: (row: number, col: number) => CellValue | undefined,
): { row: number; col: number; found: CellValue; wanted: CellValue } | undefined {
  for (const run of expect) {
    for (let i = 0; i < run.values.length; i++) {
      const found = plain(cellAt(run.row, run.col + i));
      const wanted = plain(run.values[i]);
      if (found !== wanted) return { row: run.row, col: run.col + i, found, wanted };
    }
  }
  return undefined;
}

/**
 * The `rows_moved` error of an update whose expected cell differs: another writer changed the
 * sheet since the rows were found. @internal
 */
export function rowsMoved(
  ref: SheetRef,
  mismatch: { row: number; col: number; found: CellValue; wanted: CellValue },
): SheetError {
  const cell = cellA1(mismatch.row, mismatch.col);
  return new SheetError(
    `sheet "${ref.sheet_name}" changed while it was being written: cell ${cell} holds ${JSON.stringify(mismatch.found)} ` +
      `where ${JSON.stringify(mismatch.wanted)} was found before; nothing was written`,
    { spreadsheet_id: ref.spreadsheet_id, sheet_name: ref.sheet_name, cell },
    { code: 'rows_moved' },
  );
}

/**
 * Throws `rows_moved` when a cell of `expect` differs from what `cellAt` says the sheet holds; for
 * an append's and an update's `expect`. @internal
 */
export function checkExpect(
  request: SheetRef & { expect?: readonly CellRun[] | undefined },
  cellAt: (row: number, col: number) => CellValue | undefined,
): void {
  const mismatch = request.expect && firstMismatch(request.expect, cellAt);
  if (mismatch) throw rowsMoved(request, mismatch);
}

/** Rows to delete, each once, from the bottom up, so deleting one never moves the next. @internal */
export function bottomUp(rows: readonly number[]): number[] {
  return [...new Set(rows)].sort((a, b) => b - a);
}

/**
 * Applies an update to rows of cells in place, after checking `expect` (throws `rows_moved` and
 * changes nothing when a cell differs). @internal
 */
export function updateGrid(grid: CellValue[][], request: UpdateRequest): void {
  checkExpect(request, (row, col) => grid[row]?.[col]);
  for (const run of request.cells) {
    while (grid.length <= run.row) grid.push([]);
    const target = grid[run.row]!;
    while (target.length < run.col) target.push(null);
    run.values.forEach((value, j) => {
      target[run.col + j] = value === '' ? null : value;
    });
  }
  for (const row of bottomUp(request.deleteRows)) if (row < grid.length) grid.splice(row, 1);
}

function plain(value: CellValue | undefined): CellValue {
  return value === undefined || value === '' ? null : value;
}
