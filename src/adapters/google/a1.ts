/**
 * A1 notation for the Sheets API: zero-based rows and columns to `'Sheet name'!C3:H7`.
 * @module
 */
import { cellA1, columnLetters } from '../a1.js';
import type { RangeRequest, SheetRef } from '../types.js';

export { cellA1, columnLetters };

/** Last column a sheet can have (18,278 columns); an open-ended column bound on both sides reads to it. */
const LAST_COLUMN = 'ZZZ';

/** The sheet name quoted for A1 notation, with inner quotes doubled: `'It''s'`. @internal */
export function quoteSheet(name: string): string {
  return `'${name.replaceAll("'", "''")}'`;
}

/**
 * The A1 range of a request, open-ended where `rows`/`cols` are omitted:
 * `C3:H7`, `C3:H` (rows to the end), `C3:7` (columns to the end), `C3:ZZZ` (both). @internal
 */
export function rangeA1(range: RangeRequest): string {
  const start = cellA1(range.row, range.col);
  const endCol = range.cols === undefined ? undefined : columnLetters(range.col + range.cols - 1);
  const endRow = range.rows === undefined ? undefined : String(range.row + range.rows);
  let end: string;
  if (endCol !== undefined && endRow !== undefined) end = `${endCol}${endRow}`;
  else if (endCol !== undefined) end = endCol;
  else if (endRow !== undefined) end = endRow;
  else end = LAST_COLUMN;
  return `${quoteSheet(range.sheet_name)}!${start}:${end}`;
}

/** A fixed rectangle in A1 notation with the sheet: `'S'!C3:E4`. @internal */
export function boxA1(sheet: SheetRef, row: number, col: number, rows: number, cols: number): string {
  return `${quoteSheet(sheet.sheet_name)}!${cellA1(row, col)}:${cellA1(row + Math.max(rows, 1) - 1, col + Math.max(cols, 1) - 1)}`;
}
