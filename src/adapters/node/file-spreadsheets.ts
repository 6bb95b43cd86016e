import { open, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { Worksheet } from 'exceljs';
import { SheetError, StepwireError, ValidationError } from '../../errors/index.js';
import type {
  AppendRequest,
  CallOptions,
  CellRows,
  CellValue,
  RangeRequest,
  SheetRef,
  SpreadsheetAdapter,
  UpdateRequest,
  WriteRequest,
} from '../types.js';
import { checkExpect, updateGrid } from '../sheet-update.js';
import { csvLayout, readCsvCells, writeCsvCells } from './csv.js';
import { FileLockTimeout, withFileLock } from './file-lock.js';
import { FileKeptChanging, rewriteFile, type RewriteHooks } from './file-rewrite.js';
import { safeName } from './local-file-store.js';
import { insertGridRows, setGridCells, sliceRange } from './sheet-grid.js';
import {
  cellOf,
  insertRows,
  loadWorkbook,
  saveWorkbook,
  setCells,
  updateWorksheet,
  worksheetCells,
} from './xlsx-cells.js';

/** Options of {@link FileSpreadsheets}. */
export interface FileSpreadsheetsOptions {
  /** The folder holding the spreadsheet files (`<spreadsheet_id>.xlsx` or `<spreadsheet_id>/<sheet_name>.csv`). */
  dir: string;
  /**
   * Longest wait, in ms, for the write lock of a file another process is writing; then the write
   * fails with a `SheetError` (code `locked`) naming that process.
   * @default 10000
   */
  lockTimeoutMs?: number;
  /** Where tests edit a file in the middle of a write, as another program would. @internal */
  hooks?: RewriteHooks;
}

/**
 * How many times a write reads the file again because another program changed it between the read
 * and the rename, before it gives up with `rows_moved`.
 */
const CHANGE_ATTEMPTS = 5;

/** Where a sheet lives: a worksheet of a workbook, or a CSV file of its own. */
interface SheetFile {
  format: 'xlsx' | 'csv';
  path: string;
  /** The path as messages name it: under the folder's own name (`sheets/shop/orders.csv`). */
  shown: string;
}

/** The parsed sheets of one file at one revision (a CSV file holds one sheet, under its name). */
interface Snapshot {
  revision: string;
  sheets: Map<string, CellValue[][]>;
}

/** What a write does to the content of a file: to the sheet's worksheet, or to a CSV file's rows. */
interface Change {
  xlsx(sheet: Worksheet): void;
  csv(grid: CellValue[][]): void;
}

/**
 * Spreadsheets kept as files in a folder, for Node. A spreadsheet is `<dir>/<spreadsheet_id>.xlsx`
 * (one worksheet per sheet) or the folder `<dir>/<spreadsheet_id>/` with one `<sheet_name>.csv` per
 * sheet; when both exist the `.xlsx` file wins and the folder is not read. When neither holds the
 * sheet, reads and writes fail with a `SheetError` (code `sheet_not_found`); files are never created.
 *
 * - Reads see edits saved by a spreadsheet program: a file is parsed again whenever its size,
 *   modification time or inode changes, and {@link FileSpreadsheets.revision} reports that, so the
 *   engine's table cache follows the files.
 * - Every write reads the file afresh and replaces it atomically (a temporary file in the same folder,
 *   flushed to disk, renamed over the original, folder flushed), under a per-file lock: one queue per
 *   file in this process, and across processes the lock file `<file>.lock` holding the writer's pid
 *   (taken over when that process no longer runs). A crash never leaves a half-written file.
 * - Edits made outside stepwire meanwhile are kept. Right before the rename, the file must still be
 *   the one the write was applied to (same inode, size and times); when a program saved it since (by
 *   rename or in place), the write starts over from the file as it is now, checking an append's or
 *   update's expected cells again: up to 5 times, then `SheetError` `rows_moved`, nothing written.
 *   Lines appended to a CSV file meanwhile (`echo ... >> file`) need no new start: they are copied to
 *   the end of the new file, also when written into the old one just after the check.
 * - `.xlsx`: read and written with the `exceljs` package (an optional dependency, loaded on first
 *   use). Numbers, text, booleans and empty cells keep their types; text starting with `=` is written
 *   as text, never as a formula. Formula cells read as their last computed result, dates as ISO text.
 *   A write rewrites the whole workbook: what exceljs does not keep (charts, pivot tables, images) is
 *   lost, so keep such workbooks elsewhere.
 * - `.csv` (UTF-8, comma separated): an empty field is an empty cell; an unquoted `TRUE`/`FALSE` is a
 *   boolean and an unquoted number in its canonical form (`12`, `-3.5`) a number; everything else,
 *   and every quoted field, is text (the entity's column types coerce it). Writes quote text that would
 *   otherwise read back as a number or boolean, and keep the file's byte-order mark and line end (its
 *   first row's, for every row). Every CRLF, LF or CR outside quotes ends a row, so lines appended
 *   by hand with another line end than the file's are rows too.
 *   Text starting with `=` stays plain text in the file; a spreadsheet program opening the CSV may
 *   still evaluate it.
 *
 * Spreadsheet and sheet names are single file names: `/`, `\`, `..` and control characters are
 * refused with a `ValidationError`, so no name reaches outside `dir`. Errors name a file by its path
 * under the folder's own name (`sheets/shop/orders.csv` for `dir` `/srv/project/sheets`), never by its
 * absolute path, so answers built from them show no server paths; errors of the file system become
 * `SheetError`s (`sheet_error`) worded the same way.
 * @example
 * ```ts
 * import { FileSpreadsheets } from 'stepwire/node';
 * const engine = new Engine({ spreadsheets: new FileSpreadsheets({ dir: './sheets' }) });
 * ```
 */
export class FileSpreadsheets implements SpreadsheetAdapter {
  readonly #dir: string;
  readonly #lockTimeoutMs: number;
  readonly #hooks: RewriteHooks | undefined;
  /** Parsed files by path; an entry is used only while the file's revision is unchanged. */
  readonly #snapshots = new Map<string, Snapshot>();

  constructor(options: FileSpreadsheetsOptions) {
    if (typeof options?.dir !== 'string' || options.dir === '')
      throw new TypeError('FileSpreadsheets needs options.dir, the folder holding the spreadsheet files');
    const timeout = options.lockTimeoutMs ?? 10_000;
    if (!Number.isFinite(timeout) || timeout < 0)
      throw new TypeError('FileSpreadsheets options.lockTimeoutMs must be a number of ms, 0 or more');
    this.#dir = resolve(options.dir);
    this.#lockTimeoutMs = timeout;
    this.#hooks = options.hooks;
  }

  /** Reads ranges; ranges of one file in one call see the same version of it. */
  async read(ranges: readonly RangeRequest[], options: CallOptions = {}): Promise<CellRows[]> {
    options.signal?.throwIfAborted();
    const loads = new Map<string, Promise<Snapshot>>();
    return Promise.all(
      ranges.map(async (range) => {
        const file = await this.#locate(range);
        let load = loads.get(file.path);
        if (!load) loads.set(file.path, (load = this.#snapshot(file, range, options.signal)));
        return sliceRange(sheetOf(await load, file, range), range);
      }),
    );
  }

  /** Inserts rows at `row`, moving the rows below down, and replaces the file. */
  async append(request: AppendRequest, options: CallOptions = {}): Promise<void> {
    await this.#change(request, options.signal, {
      xlsx: (sheet) => {
        checkExpect(request, cellOf(sheet));
        insertRows(sheet, request.row, request.col, request.values);
      },
      csv: (grid) => {
        checkExpect(request, (row, col) => grid[row]?.[col]);
        insertGridRows(grid, request.row, request.col, request.values);
      },
    });
  }

  /** Overwrites cells in place (`null` empties a cell) and replaces the file. */
  async write(request: WriteRequest, options: CallOptions = {}): Promise<void> {
    await this.#change(request, options.signal, {
      xlsx: (sheet) => setCells(sheet, request.row, request.col, request.values),
      csv: (grid) => setGridCells(grid, request.row, request.col, request.values),
    });
  }

  /**
   * Checks `expect` against the file as it is now, overwrites cells and deletes rows, and replaces
   * the file: all under the file's write lock, so no other writer comes in between.
   */
  async update(request: UpdateRequest, options: CallOptions = {}): Promise<void> {
    await this.#change(request, options.signal, {
      xlsx: (sheet) => updateWorksheet(sheet, request),
      csv: (grid) => updateGrid(grid, request),
    });
  }

  /** Changes whenever the file holding the sheet changes; `undefined` when there is no such file. */
  async revision(sheet: SheetRef): Promise<string | undefined> {
    const file = await this.#locate(sheet);
    const info = await stat(file.path, { bigint: true }).catch(() => undefined);
    return info && revisionOf(file, info);
  }

  /** The file of a sheet: the workbook when it exists, else the sheet's CSV file. */
  async #locate(ref: SheetRef): Promise<SheetFile> {
    const id = safeName(ref.spreadsheet_id, 'spreadsheet_id');
    const sheet = safeName(ref.sheet_name, 'sheet_name');
    const workbook = join(this.#dir, `${id}.xlsx`);
    if ((await stat(workbook).catch(() => undefined))?.isFile())
      return { format: 'xlsx', path: workbook, shown: this.#shown(workbook) };
    const csv = join(this.#dir, id, `${sheet}.csv`);
    return { format: 'csv', path: csv, shown: this.#shown(csv) };
  }

  /** A path under `dir` as messages name it: from the folder's own name on, with `/` between names. */
  #shown(path: string): string {
    return relative(dirname(this.#dir), path).split(sep).join('/');
  }

  /** `text` with the absolute folder replaced by its own name (a message of the file system, say). */
  #scrub(text: string): string {
    return text.split(this.#dir).join(basename(this.#dir));
  }

  /** The parsed file, from the cache while its revision is the same (taken from the open file itself). */
  async #snapshot(file: SheetFile, ref: SheetRef, signal: AbortSignal | undefined): Promise<Snapshot> {
    const handle = await open(file.path, 'r').catch((error: unknown) => {
      throw this.#missing(file, ref, error);
    });
    try {
      const revision = revisionOf(file, await handle.stat({ bigint: true }));
      const cached = this.#snapshots.get(file.path);
      if (cached?.revision === revision) return cached;
      const bytes = new Uint8Array(await handle.readFile(signal ? { signal } : {}));
      const snapshot = { revision, sheets: await this.#parse(file, ref, bytes) };
      this.#snapshots.set(file.path, snapshot);
      return snapshot;
    } finally {
      await handle.close();
    }
  }

  async #parse(file: SheetFile, ref: SheetRef, bytes: Uint8Array): Promise<Map<string, CellValue[][]>> {
    if (file.format === 'csv')
      return new Map([[ref.sheet_name, csvCells(file, ref, decodeUtf8(file, ref, bytes))]]);
    const workbook = await loadWorkbook(bytes).catch((error: unknown) => {
      throw invalidFile(file, ref, error);
    });
    return new Map(workbook.worksheets.map((sheet) => [sheet.name, worksheetCells(sheet)]));
  }

  /**
   * Reads the file afresh under its write lock, applies `change` and replaces the file; starts over
   * when another program changed the file in between (see {@link FileSpreadsheets}).
   */
  async #change(ref: SheetRef, signal: AbortSignal | undefined, change: Change): Promise<void> {
    signal?.throwIfAborted();
    const file = await this.#locate(ref);
    // Lock and replace the real file, so a symbolic link stays a link to the updated file.
    const path = await realpath(file.path).catch((error: unknown) => {
      throw this.#missing(file, ref, error);
    });
    try {
      await withFileLock(path, this.#lockTimeoutMs, signal, () =>
        rewriteFile(path, (bytes) => this.#changed(file, ref, bytes, change), {
          signal,
          attempts: CHANGE_ATTEMPTS,
          lines: file.format === 'csv',
          hooks: this.#hooks,
        }),
      );
    } catch (error) {
      if (error instanceof FileKeptChanging)
        throw new SheetError(`${this.#scrub(error.message)}; nothing was written`, location(ref), {
          code: 'rows_moved',
          cause: error,
        });
      if (!(error instanceof FileLockTimeout)) throw this.#missing(file, ref, error);
      throw new SheetError(`cannot write ${file.shown}: ${this.#scrub(error.message)}`, location(ref), {
        code: 'locked',
        cause: error,
      });
    } finally {
      this.#snapshots.delete(file.path);
    }
  }

  /** The bytes of a file after `change`. */
  async #changed(file: SheetFile, ref: SheetRef, bytes: Uint8Array, change: Change): Promise<Uint8Array> {
    if (file.format === 'csv') {
      const text = decodeUtf8(file, ref, bytes);
      const grid = csvCells(file, ref, text);
      change.csv(grid);
      return new TextEncoder().encode(writeCsvCells(grid, csvLayout(text)));
    }
    const workbook = await loadWorkbook(bytes).catch((error: unknown) => {
      throw invalidFile(file, ref, error);
    });
    const sheet = workbook.worksheets.find((s) => s.name === ref.sheet_name);
    if (!sheet)
      throw noSheet(
        ref,
        file,
        workbook.worksheets.map((s) => s.name),
      );
    change.xlsx(sheet);
    return saveWorkbook(workbook);
  }

  /**
   * The `sheet_not_found` error for a file that could not be opened; another error of the file system
   * becomes a `sheet_error` naming the file as messages do; anything else passes through.
   */
  #missing(file: SheetFile, ref: SheetRef, error: unknown): unknown {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      if (error instanceof StepwireError || typeof code !== 'string' || !(error instanceof Error))
        return error;
      return new SheetError(`cannot use ${file.shown}: ${this.#scrub(error.message)}`, location(ref), {
        code: 'sheet_error',
        cause: error,
      });
    }
    const book = this.#shown(join(this.#dir, `${ref.spreadsheet_id}.xlsx`));
    const message =
      file.format === 'xlsx'
        ? `spreadsheet "${ref.spreadsheet_id}" no longer exists: ${file.shown} was removed`
        : `sheet "${ref.sheet_name}" of spreadsheet "${ref.spreadsheet_id}" does not exist:` +
          ` there is neither ${book} nor ${file.shown}`;
    return new SheetError(message, location(ref), { code: 'sheet_not_found', cause: error });
  }
}

/** The rows of the requested sheet in a parsed file. */
function sheetOf(snapshot: Snapshot, file: SheetFile, ref: SheetRef): CellValue[][] {
  const grid = snapshot.sheets.get(ref.sheet_name);
  if (!grid) throw noSheet(ref, file, [...snapshot.sheets.keys()]);
  return grid;
}

function revisionOf(
  file: SheetFile,
  info: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint },
): string {
  // The inode changes with every atomic replace; size and times change with an in-place save.
  return `${file.format}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

function csvCells(file: SheetFile, ref: SheetRef, text: string): CellValue[][] {
  try {
    return readCsvCells(text);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const issue = error.issues[0];
    throw invalidFile(file, ref, error, issue && `${issue.path}: ${issue.message}`);
  }
}

/** The text of a CSV file; anything but UTF-8 is refused, since writing it back would garble it. */
function decodeUtf8(file: SheetFile, ref: SheetRef, bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (error) {
    throw invalidFile(file, ref, error, 'it is not UTF-8 text (save it as "CSV UTF-8")');
  }
}

function invalidFile(file: SheetFile, ref: SheetRef, error: unknown, why?: string): unknown {
  if (error instanceof StepwireError && why === undefined) return error; // e.g. exceljs is missing
  const reason = why ?? (error instanceof Error ? error.message : String(error));
  return new SheetError(
    `${file.shown} cannot be read as ${file.format.toUpperCase()}: ${reason}`,
    location(ref),
    {
      code: 'invalid_file',
      cause: error,
    },
  );
}

function noSheet(ref: SheetRef, file: SheetFile, names: string[]): SheetError {
  return new SheetError(
    `sheet "${ref.sheet_name}" does not exist in ${file.shown} (its sheets: ${names.join(', ') || 'none'})`,
    location(ref),
    { code: 'sheet_not_found' },
  );
}

function location(ref: SheetRef): { spreadsheet_id: string; sheet_name: string } {
  return { spreadsheet_id: ref.spreadsheet_id, sheet_name: ref.sheet_name };
}
