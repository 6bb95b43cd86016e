import { SheetError } from '../../errors/index.js';
import type {
  AppendRequest,
  CellRows,
  CellValue,
  RangeRequest,
  SheetRef,
  SpreadsheetAdapter,
  UpdateRequest,
  WriteRequest,
} from '../types.js';
import { updateGrid } from '../sheet-update.js';

/** Seed data of {@link MemorySpreadsheets}: spreadsheet id -> sheet name -> rows of cells. */
export type SpreadsheetSeed = Record<string, Record<string, CellValue[][]>>;

/**
 * In-memory spreadsheets, the default of `new Engine()`. Seed them with rows of cells and read
 * them back with {@link MemorySpreadsheets.cells}.
 * @example
 * ```ts
 * const sheets = new MemorySpreadsheets({ crm: { customers: [['id', 'name'], [1, 'Ada']] } });
 * ```
 */
export class MemorySpreadsheets implements SpreadsheetAdapter {
  #books = new Map<string, Map<string, CellValue[][]>>();
  #revisions = new Map<string, number>();

  constructor(seed: SpreadsheetSeed = {}) {
    for (const [id, sheets] of Object.entries(seed)) {
      for (const [name, rows] of Object.entries(sheets)) this.setSheet(id, name, rows);
    }
  }

  /** Creates or replaces a sheet with a copy of `rows`. */
  setSheet(spreadsheetId: string, sheetName: string, rows: CellValue[][]): void {
    let book = this.#books.get(spreadsheetId);
    if (!book) this.#books.set(spreadsheetId, (book = new Map()));
    book.set(
      sheetName,
      rows.map((row) => row.slice()),
    );
    this.#touch({ spreadsheet_id: spreadsheetId, sheet_name: sheetName });
  }

  /** A copy of every row of a sheet, as held now; `undefined` when there is no such sheet. */
  cells(spreadsheetId: string, sheetName: string): CellValue[][] | undefined {
    return this.#books
      .get(spreadsheetId)
      ?.get(sheetName)
      ?.map((row) => row.slice());
  }

  /** Reads ranges. */
  read(ranges: readonly RangeRequest[]): CellRows[] {
    return ranges.map((range) => {
      const sheet = this.#sheet(range);
      const rowEnd = range.rows === undefined ? sheet.length : Math.min(sheet.length, range.row + range.rows);
      const out: CellRows = [];
      for (let r = range.row; r < rowEnd; r++) {
        const row = sheet[r] ?? [];
        const colEnd = range.cols === undefined ? row.length : Math.min(row.length, range.col + range.cols);
        out.push(
          range.col === 0 && colEnd === row.length
            ? row.slice()
            : row.slice(range.col, Math.max(range.col, colEnd)),
        );
      }
      return out;
    });
  }

  /** Inserts rows at `row`, moving the rows below down. */
  append(request: AppendRequest): void {
    const sheet = this.#sheet(request);
    while (sheet.length < request.row) sheet.push([]);
    const rows = request.values.map((values) => {
      const row: CellValue[] = new Array<CellValue>(request.col).fill(null);
      for (const value of values) row.push(value);
      return row;
    });
    sheet.splice(request.row, 0, ...rows);
    this.#touch(request);
  }

  /** Overwrites values in place. */
  write(request: WriteRequest): void {
    const sheet = this.#sheet(request);
    request.values.forEach((values, i) => {
      const r = request.row + i;
      while (sheet.length <= r) sheet.push([]);
      const row = sheet[r]!;
      while (row.length < request.col) row.push(null);
      values.forEach((value, j) => {
        row[request.col + j] = value;
      });
    });
    this.#touch(request);
  }

  /** Checks `expect`, overwrites cells and deletes rows, as one change. */
  update(request: UpdateRequest): void {
    updateGrid(this.#sheet(request), request);
    this.#touch(request);
  }

  /** Changes whenever the sheet changes. */
  revision(sheet: SheetRef): number | undefined {
    return this.#revisions.get(key(sheet));
  }

  #sheet(ref: SheetRef): CellValue[][] {
    const book = this.#books.get(ref.spreadsheet_id);
    if (!book) {
      throw new SheetError(`spreadsheet "${ref.spreadsheet_id}" does not exist`, ref, {
        code: 'sheet_not_found',
      });
    }
    const sheet = book.get(ref.sheet_name);
    if (!sheet) {
      throw new SheetError(
        `sheet "${ref.sheet_name}" does not exist in spreadsheet "${ref.spreadsheet_id}"`,
        ref,
        { code: 'sheet_not_found' },
      );
    }
    return sheet;
  }

  #touch(ref: SheetRef): void {
    const k = key(ref);
    this.#revisions.set(k, (this.#revisions.get(k) ?? 0) + 1);
  }
}

function key(ref: SheetRef): string {
  return `${ref.spreadsheet_id}\u0000${ref.sheet_name}`;
}
