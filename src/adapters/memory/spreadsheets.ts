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
import { checkExpect, updateGrid } from '../sheet-update.js';

/** Seed data of {@link MemorySpreadsheets}: spreadsheet id -> sheet name -> rows of cells. */
export type SpreadsheetSeed = Record<string, Record<string, CellValue[][]>>;

/**
 * In-memory spreadsheets, the default of `new Engine()`. Seed them with rows of cells and read
 * them back with {@link MemorySpreadsheets.cells}.
 *
 * Each row is held as a frozen array, and a write replaces the rows it changes instead of changing
 * them in place: a read hands out the rows it holds as they are, without a copy (the first read of a
 * 1,000,000-row sheet would otherwise allocate a million arrays), and no caller can change them.
 * @example
 * ```ts
 * const sheets = new MemorySpreadsheets({ crm: { customers: [['id', 'name'], [1, 'Ada']] } });
 * ```
 */
export class MemorySpreadsheets implements SpreadsheetAdapter {
  #books = new Map<string, Map<string, CellValue[][]>>();
  #revisions = new Map<string, number>();

  constructor(seed: SpreadsheetSeed = {}) {
    if (typeof seed !== 'object' || seed === null)
      throw new TypeError('MemorySpreadsheets seed must be { [spreadsheet_id]: { [sheet_name]: rows } }');
    for (const [id, sheets] of Object.entries(seed)) {
      if (typeof sheets !== 'object' || sheets === null)
        throw new TypeError(
          `MemorySpreadsheets seed["${id}"] must be { [sheet_name]: rows }, got ${String(sheets)}`,
        );
      for (const [name, rows] of Object.entries(sheets)) {
        if (!Array.isArray(rows) || !rows.every((row) => Array.isArray(row) || row === undefined))
          throw new TypeError(
            `MemorySpreadsheets seed["${id}"]["${name}"] must be an array of rows of cells`,
          );
        this.setSheet(id, name, rows);
      }
    }
  }

  /** Creates or replaces a sheet with a copy of `rows`. */
  setSheet(spreadsheetId: string, sheetName: string, rows: CellValue[][]): void {
    let book = this.#books.get(spreadsheetId);
    if (!book) this.#books.set(spreadsheetId, (book = new Map()));
    // Array.from: a row left out of `rows` becomes an empty row, so every row is an array.
    book.set(
      sheetName,
      Array.from(rows, (row) => frozen(row ? row.slice() : [])),
    );
    this.#touch({ spreadsheet_id: spreadsheetId, sheet_name: sheetName });
  }

  /** A copy of every row of a sheet, as held now; `undefined` when there is no such sheet. */
  cells(spreadsheetId: string, sheetName: string): CellValue[][] | undefined {
    return this.#books
      .get(spreadsheetId)
      ?.get(sheetName)
      ?.map((row) => copyOf(row));
  }

  /** Reads ranges. Whole rows are the adapter's own, frozen; parts of rows are copies. */
  read(ranges: readonly RangeRequest[]): CellRows[] {
    return ranges.map((range) => {
      const sheet = this.#sheet(range);
      const rowEnd = range.rows === undefined ? sheet.length : Math.min(sheet.length, range.row + range.rows);
      if (range.col === 0 && range.cols === undefined)
        return sheet.slice(range.row, Math.max(range.row, rowEnd));
      const out: CellRows = [];
      for (let r = range.row; r < rowEnd; r++) {
        const row = sheet[r] ?? [];
        const colEnd = range.cols === undefined ? row.length : Math.min(row.length, range.col + range.cols);
        out.push(range.col === 0 && colEnd === row.length ? row : copyOf(row, range.col, colEnd));
      }
      return out;
    });
  }

  /** Inserts rows at `row`, moving the rows below down. */
  append(request: AppendRequest): void {
    const sheet = this.#sheet(request);
    checkExpect(request, (row, col) => sheet[row]?.[col]);
    while (sheet.length < request.row) sheet.push(EMPTY_ROW);
    const rows = request.values.map((values) => {
      // A frozen row given at column 0 can change no more, so it is kept as it is.
      if (request.col === 0 && Object.isFrozen(values)) return values;
      const row: CellValue[] = new Array<CellValue>(request.col).fill(null);
      for (const value of values) row.push(value);
      return frozen(row);
    });
    // Not `splice(row, 0, ...rows)`: a spread of 100,000s of rows overflows the call's arguments.
    const below = sheet.splice(request.row);
    for (const row of rows) sheet.push(row);
    for (const row of below) sheet.push(row);
    this.#touch(request);
  }

  /** Overwrites values in place. */
  write(request: WriteRequest): void {
    const sheet = this.#sheet(request);
    request.values.forEach((values, i) => {
      const r = request.row + i;
      while (sheet.length <= r) sheet.push(EMPTY_ROW);
      if (request.col === 0 && values.length >= sheet[r]!.length && Object.isFrozen(values)) {
        sheet[r] = values;
        return;
      }
      const row = copyOf(sheet[r]!);
      while (row.length < request.col) row.push(null);
      values.forEach((value, j) => {
        row[request.col + j] = value;
      });
      sheet[r] = frozen(row);
    });
    this.#touch(request);
  }

  /** Checks `expect`, overwrites cells and deletes rows, as one change. */
  update(request: UpdateRequest): void {
    const sheet = this.#sheet(request);
    checkExpect(request, (row, col) => sheet[row]?.[col]);
    // The rows written are replaced by copies, written, then frozen.
    const written: CellValue[][] = [];
    for (const run of request.cells) {
      while (sheet.length <= run.row) sheet.push(EMPTY_ROW);
      const row = sheet[run.row]!;
      if (Object.isFrozen(row)) written.push((sheet[run.row] = copyOf(row)));
    }
    updateGrid(sheet, { ...request, expect: [] });
    for (const row of written) Object.freeze(row);
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

/** A row with no cells (rows are frozen, so one serves every such row). */
const EMPTY_ROW: CellValue[] = frozen([]);

/**
 * A copy of `row`'s cells from `from` to `to` (an empty copy when `to` is not after `from`). A loop,
 * not `slice`: V8's `slice` of a frozen array takes a slow path, some 40 times slower.
 */
function copyOf(row: readonly CellValue[], from = 0, to = row.length): CellValue[] {
  const copy = new Array<CellValue>(Math.max(0, to - from));
  for (let i = from; i < to; i++) copy[i - from] = row[i]!;
  return copy;
}

/** `row`, frozen (typed as the adapter contract's rows, which callers only read). */
function frozen(row: CellValue[]): CellValue[] {
  Object.freeze(row);
  return row;
}

function key(ref: SheetRef): string {
  return `${ref.spreadsheet_id}\u0000${ref.sheet_name}`;
}
