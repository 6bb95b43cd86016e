/**
 * A1 names of cells for adapters: zero-based rows and columns to `C7`.
 * @module
 */

/** Column letters of a zero-based column: 0 -> `A`, 26 -> `AA`. @internal */
export function columnLetters(col: number): string {
  let n = col + 1;
  let letters = '';
  while (n > 0) {
    const rest = (n - 1) % 26;
    letters = String.fromCharCode(65 + rest) + letters;
    n = Math.floor((n - 1) / 26);
  }
  return letters;
}

/** A cell in A1 notation without the sheet: (2, 0) -> `A3`. @internal */
export function cellA1(row: number, col: number): string {
  return `${columnLetters(col)}${row + 1}`;
}
