/**
 * A1 notation: zero-based row and column numbers to spreadsheet cell names (`{row: 6, col: 2}` is `C7`).
 * @module
 */

/** Column letters of a zero-based column number: 0 is `A`, 25 is `Z`, 26 is `AA`. */
export function columnLetters(col: number): string {
  if (!Number.isInteger(col) || col < 0)
    throw new RangeError(`column must be a non-negative integer, got ${String(col)}`);
  let out = '';
  let n = col + 1;
  while (n > 0) {
    const rest = (n - 1) % 26;
    out = String.fromCharCode(65 + rest) + out;
    n = (n - 1 - rest) / 26;
  }
  return out;
}

/** A1 name of a zero-based cell: `toA1(6, 2)` is `C7`. */
export function toA1(row: number, col: number): string {
  if (!Number.isInteger(row) || row < 0)
    throw new RangeError(`row must be a non-negative integer, got ${String(row)}`);
  return `${columnLetters(col)}${row + 1}`;
}

/** A1 range of a rectangle given by its zero-based first and last cells: `B2:F2`; one cell is just `B2`. */
export function toA1Range(row: number, col: number, lastRow: number, lastCol: number): string {
  const first = toA1(row, col);
  const last = toA1(lastRow, lastCol);
  return first === last ? first : `${first}:${last}`;
}

/**
 * A cell or range prefixed by its sheet, as a spreadsheet formula would write it: `Sheet1!C7`,
 * `'Q1 orders'!C7` (names other than letters, digits and `_` are quoted, quotes doubled).
 */
export function sheetCell(sheetName: string, cell: string): string {
  const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(sheetName) && !/^[A-Za-z]{1,3}\d+$/.test(sheetName);
  return `${plain ? sheetName : `'${sheetName.replace(/'/g, "''")}'`}!${cell}`;
}
