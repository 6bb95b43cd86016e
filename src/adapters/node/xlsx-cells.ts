/**
 * `.xlsx` workbooks through exceljs, loaded on first use: worksheets to rows of cells, and row
 * inserts and cell writes that keep the rest of the workbook.
 * @module
 */
import type { Cell, CellValue as ExcelValue, Workbook, Worksheet } from 'exceljs';
import { importOptional, namedExport } from '../import-optional.js';
import { bottomUp, checkExpect } from '../sheet-update.js';
import type { CellValue, UpdateRequest } from '../types.js';

type WorkbookClass = new () => Workbook;
let workbookClass: Promise<WorkbookClass> | undefined;

/** Loads a workbook from the bytes of an `.xlsx` file. @internal */
export async function loadWorkbook(bytes: Uint8Array): Promise<Workbook> {
  workbookClass ??= importOptional('exceljs', 'FileSpreadsheets (for .xlsx files)', () => import('exceljs'))
    .then((module) => namedExport<WorkbookClass>(module, 'Workbook'))
    .catch((error: unknown) => {
      workbookClass = undefined; // let a later call try again, e.g. after the package is installed
      throw error;
    });
  const workbook = new (await workbookClass)();
  // exceljs (JSZip) reads an ArrayBuffer; its typings call that `Buffer`.
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  await workbook.xlsx.load((whole ? bytes.buffer : bytes.slice().buffer) as ArrayBuffer);
  return workbook;
}

/** The bytes of an `.xlsx` file for a workbook, every character of its text kept. The workbook is spent. @internal */
export async function saveWorkbook(workbook: Workbook): Promise<Uint8Array> {
  // exceljs decodes the escapes when it loads a file and does not write them: every text is spelled here.
  for (const sheet of workbook.worksheets)
    sheet.eachRow({ includeEmpty: false }, (row) =>
      row.eachCell({ includeEmpty: false }, (cell) => {
        const value = cell.value;
        if (typeof value === 'string') cell.value = xlsxText(value);
        else if (value && typeof value === 'object' && 'richText' in value)
          cell.value = { richText: value.richText.map((part) => ({ ...part, text: xlsxText(part.text) })) };
      }),
    );
  return new Uint8Array(await workbook.xlsx.writeBuffer());
}

/**
 * Every used row of a worksheet as cells, read unformatted: numbers, text and booleans as they are;
 * a formula's last computed result (`null` when the file holds none); a date as ISO text
 * (`YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS[.sss]` when it has a time); rich text and hyperlinks as
 * their text; an error as its code (`#N/A`); the cells a merge covers, except its first, empty.
 * @internal
 */
export function worksheetCells(sheet: Worksheet): CellValue[][] {
  const rows: CellValue[][] = [];
  sheet.eachRow({ includeEmpty: false }, (row, rowNumber) => {
    const cells: CellValue[] = [];
    row.eachCell({ includeEmpty: false }, (cell, colNumber) => {
      if (cell.isMerged && cell.master.address !== cell.address) return;
      const value = plainValue(cell.value);
      if (value === null) return;
      while (cells.length < colNumber - 1) cells.push(null);
      cells[colNumber - 1] = value;
    });
    while (rows.length < rowNumber - 1) rows.push([]);
    rows[rowNumber - 1] = cells;
  });
  return rows;
}

/** Rows inserted by one call to exceljs. */
const INSERT_BATCH = 10_000;

/**
 * Inserts `values` as new rows at zero-based `row` and `col`, moving the rows at and below `row` down.
 * New rows take the formatting of the row above them (none at the top), like a spreadsheet program.
 * @internal
 */
export function insertRows(
  sheet: Worksheet,
  row: number,
  col: number,
  values: readonly (readonly CellValue[])[],
) {
  // In batches: exceljs spreads the rows into one call, which 100,000s of rows would overflow.
  for (let at = 0; at < values.length; at += INSERT_BATCH) {
    const count = Math.min(INSERT_BATCH, values.length - at);
    sheet.insertRows(
      row + at + 1,
      Array.from({ length: count }, () => []),
      row + at > 0 ? 'i' : 'n',
    );
  }
  setCells(sheet, row, col, values);
}

/**
 * What XML 1.0 cannot hold (most control characters, U+FFFE, U+FFFF, a lone surrogate) and `\r` (which
 * XML reads back as `\n`), or text already spelled like an escape (`_x0041_`).
 */
const UNSPELLABLE =
  // eslint-disable-next-line no-control-regex
  /_x[0-9A-Fa-f]{4}_|[\u0000-\u0008\u000B-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text as an XLSX cell keeps it: the characters XML cannot hold are written as the format's `_xHHHH_`
 * escapes (ECMA-376 ST_Xstring), and text that already looks like one has its `_` escaped
 * (`_x005F_`), so every string reads back as it was written.
 */
function xlsxText(text: string): string {
  return text.replace(UNSPELLABLE, (found) =>
    found.length > 1
      ? `_x005F${found}`
      : `_x${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`,
  );
}

/**
 * Sets cells from zero-based `row` and `col` on. Text is always a text cell (`=1+1` stays those four
 * characters, never a formula); `null` and `""` empty the cell.
 * @internal
 */
export function setCells(
  sheet: Worksheet,
  row: number,
  col: number,
  values: readonly (readonly CellValue[])[],
) {
  values.forEach((cells, i) => {
    cells.forEach((value, j) => {
      sheet.getCell(row + i + 1, col + j + 1).value = value === '' ? null : value;
    });
  });
}

/**
 * Applies an update to a worksheet: checks `expect` against the cells as {@link worksheetCells}
 * reads them (a `rows_moved` error changes nothing), sets the cells, then deletes the rows (rows
 * below move up, like a spreadsheet program's Delete row).
 * @internal
 */
export function updateWorksheet(sheet: Worksheet, request: UpdateRequest): void {
  checkExpect(request, cellOf(sheet));
  for (const run of request.cells) setCells(sheet, run.row, run.col, [run.values]);
  if (request.deleteRows.length > 0) unshareFormulas(sheet);
  for (const row of bottomUp(request.deleteRows)) sheet.spliceRows(row + 1, 1);
}

/**
 * Turns the sheet's shared formulas (a formula filled down, as Excel stores it: the first cell
 * holds it, the others point there) into plain ones, each the formula its cell shows. Deleting the
 * first cell's row would otherwise leave the others pointing at nothing, and the workbook could not
 * be saved; and a formula keeps its text when its row moves up, shared or not.
 */
function unshareFormulas(sheet: Worksheet): void {
  const shared: { cell: Cell; formula: string; result: unknown }[] = [];
  sheet.eachRow((row) =>
    row.eachCell((cell) => {
      const value = cell.value;
      if (typeof value !== 'object' || value === null || !('sharedFormula' in value || 'shareType' in value))
        return;
      // A copy whose first cell is missing (a damaged file) has no formula to show: left as it is.
      if (cell.formula)
        shared.push({ cell, formula: cell.formula, result: (value as { result?: unknown }).result });
    }),
  );
  for (const { cell, formula, result } of shared)
    cell.value = result === undefined ? { formula } : ({ formula, result } as ExcelValue);
}

/** The plain value of the cell at zero-based `(row, col)`; a merged cell's value is its first cell's. @internal */
export function cellOf(sheet: Worksheet): (row: number, col: number) => CellValue {
  return (row, col) => {
    const cell = sheet.getCell(row + 1, col + 1);
    return cell.isMerged && cell.master.address !== cell.address ? null : plainValue(cell.value);
  };
}

/** The plain cell value of an exceljs value. */
function plainValue(value: ExcelValue): CellValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return value === '' ? null : value;
  if (value instanceof Date) return isoText(value);
  if ('error' in value) return value.error;
  if ('richText' in value) return value.richText.map((part) => part.text).join('') || null;
  if ('formula' in value || 'sharedFormula' in value)
    return value.result === undefined ? null : plainValue(value.result);
  if ('hyperlink' in value) return plainValue(value.text as ExcelValue);
  return null;
}

/** A date cell as ISO text; exceljs gives its serial as UTC time. */
function isoText(date: Date): CellValue {
  if (Number.isNaN(date.getTime())) return null;
  const iso = date.toISOString();
  if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
  return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
}
