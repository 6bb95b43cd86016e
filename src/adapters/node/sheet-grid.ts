/**
 * A sheet held as rows of cells: range reads, row inserts and cell writes, with the same meaning as
 * the spreadsheet adapter's `read`, `append` and `write`.
 * @module
 */
import type { CellRows, CellValue, RangeRequest } from '../types.js';

/** The cells of a range (zero-based; an omitted size runs to the end of the data). @internal */
export function sliceRange(grid: readonly (readonly CellValue[])[], range: RangeRequest): CellRows {
  const rowEnd = range.rows === undefined ? grid.length : Math.min(grid.length, range.row + range.rows);
  const out: CellRows = [];
  for (let r = range.row; r < rowEnd; r++) {
    const row = grid[r] ?? [];
    const colEnd = range.cols === undefined ? row.length : Math.min(row.length, range.col + range.cols);
    out.push(row.slice(range.col, Math.max(range.col, colEnd)));
  }
  return out;
}

/** Inserts rows at zero-based `row`, each starting at column `col`; later rows move down. @internal */
export function insertGridRows(
  grid: CellValue[][],
  row: number,
  col: number,
  values: readonly (readonly CellValue[])[],
): void {
  while (grid.length < row) grid.push([]);
  // Not `splice(row, 0, ...rows)`: a spread of 100,000s of rows overflows the call's arguments.
  const below = grid.splice(row);
  for (const cells of values) {
    const line = new Array<CellValue>(col).fill(null);
    for (const cell of cells) line.push(cell);
    grid.push(line);
  }
  for (const line of below) grid.push(line);
}

/** Overwrites cells from zero-based `row` and `col` on, growing the grid as needed. @internal */
export function setGridCells(
  grid: CellValue[][],
  row: number,
  col: number,
  values: readonly (readonly CellValue[])[],
): void {
  values.forEach((cells, i) => {
    while (grid.length <= row + i) grid.push([]);
    const target = grid[row + i]!;
    while (target.length < col) target.push(null);
    cells.forEach((value, j) => {
      target[col + j] = value;
    });
  });
}
