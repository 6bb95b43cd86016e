/**
 * Appends for `GoogleSheets`: rows inserted exactly at the requested row in one atomic
 * `spreadsheets.batchUpdate`, and a read-back check when the outcome of an attempt is unknown.
 *
 * Why not `values.append`: it looks for a "table" in the given range and writes after that table's
 * last row, so rows land below any data touching the requested position (a footer, a note in
 * another column), not at it. `insertDimension` + `updateCells` in one `batchUpdate` puts them
 * exactly at `row`, moves the rows below down like the memory adapter, writes typed values that
 * are never parsed as formulas (RAW), and applies all of it or none of it.
 * @module
 */
import { CancelledError, UpstreamError } from '../../errors/index.js';
import { backoffDelay, sleep, type RetryPolicy } from '../../retry/index.js';
import type { AppendRequest, CellRows, CellRun, CellValue, SheetRef } from '../types.js';
import { firstMismatch, rowsMoved } from '../sheet-update.js';
import { boxA1 } from './a1.js';
import type { GoogleAnswer } from './clients.js';
import { classifySafe, describeFailure, outcomeUnknown, readGoogleError } from './errors.js';

/** Grid facts of a sheet. @internal */
export interface SheetProperties {
  sheetId: number;
  rowCount: number;
  columnCount: number;
}

/** What {@link appendRows} (and the update of `sheets-update.ts`) needs from the adapter. @internal */
export interface AppendDeps {
  policy: RetryPolicy;
  signal: AbortSignal | undefined;
  /** Fresh grid properties of the target sheet (a missing sheet throws `sheet_not_found`). */
  properties(signal: AbortSignal | undefined): Promise<SheetProperties>;
  /** Reads a fixed box of the target sheet. */
  readBox(
    row: number,
    col: number,
    rows: number,
    cols: number,
    signal: AbortSignal | undefined,
  ): Promise<CellRows>;
  /**
   * One `spreadsheets.batchUpdate`, not retried. A 200 answer that is not the documented
   * `BatchUpdateSpreadsheetResponse` throws an `UpstreamError` saying the outcome is unknown; such an
   * error ends the change as it is (never sent again).
   */
  batchUpdate(requestBody: { requests: object[] }, signal: AbortSignal | undefined): Promise<GoogleAnswer>;
  /** Turns a final failure into a stepwire error. */
  fail(error: unknown, what: string): Error;
}

type Check = 'present' | 'absent' | 'unclear';

/** Inserts `request.values` at `request.row`; see the module comment. @internal */
export async function appendRows(deps: AppendDeps, request: AppendRequest): Promise<void> {
  const { policy, signal } = deps;
  const before = await deps.properties(signal);
  const count = request.values.length;
  // A loop, not Math.max(...rows): spreading 100,000+ rows as arguments overflows the stack.
  let width = 1;
  for (const row of request.values) if (row.length > width) width = row.length;
  const requestBody = { requests: buildRequests(before, request, width) };
  const expectedRowCount = request.row < before.rowCount ? before.rowCount + count : request.row + count;
  const where = `${count} row(s) at ${boxA1(request, request.row, request.col, count, width)} of spreadsheet "${request.spreadsheet_id}"`;

  // Where the rows go is still the end of the data (best effort: read, then sent, as updates are).
  await checkExpected(deps, request);
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw new CancelledError(`The append of ${where} was cancelled before it was sent`);
    try {
      await deps.batchUpdate(requestBody, signal);
      return;
    } catch (error) {
      // An answer came but cannot be trusted (see AppendDeps.batchUpdate): never sent again.
      if (error instanceof UpstreamError) throw error;
      if (signal?.aborted) {
        throw new CancelledError(
          `The append of ${where} was cancelled while in flight; the rows may or may not have been inserted`,
          { cause: error },
        );
      }
      const failure = readGoogleError(error);
      const last = attempt >= policy.attempts;
      if (!outcomeUnknown(failure)) {
        // Refused before processing (429, a rate-limit 403, a connection that never opened): safe to send again.
        const verdict = classifySafe(failure);
        if (!verdict.retry || last) throw deps.fail(error, 'append');
        await sleep(backoffDelay(attempt, policy, verdict.afterMs), signal);
        continue;
      }
      const check = await verify(deps, request, before, expectedRowCount, width);
      if (check === 'present') return;
      if (check === 'absent') {
        if (last) throw deps.fail(error, 'append');
        await sleep(backoffDelay(attempt, policy, failure.afterMs), signal);
        continue;
      }
      throw new UpstreamError(
        `The outcome of the append of ${where} is unknown: ${describeFailure(failure)}. Reading the sheet back could not tell whether ` +
          'the rows were inserted, so they were not sent again; check the sheet before retrying.',
        failure.status,
        { cause: error, retryable: false },
      );
    }
  }
}

/** Whether an attempt with an unknown outcome was applied: our rows at the target and the grid grown by exactly our rows. */
async function verify(
  deps: AppendDeps,
  request: AppendRequest,
  before: SheetProperties,
  expectedRowCount: number,
  width: number,
): Promise<Check> {
  try {
    const after = await deps.properties(deps.signal);
    if (after.rowCount === before.rowCount) return 'absent';
    if (after.rowCount !== expectedRowCount) return 'unclear';
    const cells = await deps.readBox(request.row, request.col, request.values.length, width, deps.signal);
    return sameCells(cells, request.values, width) ? 'present' : 'unclear';
  } catch (error) {
    if (error instanceof CancelledError) throw error;
    return 'unclear';
  }
}

function buildRequests(grid: SheetProperties, request: AppendRequest, width: number): object[] {
  const count = request.values.length;
  const requests: object[] = [];
  if (request.row < grid.rowCount) {
    requests.push({
      insertDimension: {
        range: {
          sheetId: grid.sheetId,
          dimension: 'ROWS',
          startIndex: request.row,
          endIndex: request.row + count,
        },
        inheritFromBefore: request.row > 0,
      },
    });
  } else {
    // Past the grid's end nothing moves: grow the grid up to and including the new rows.
    requests.push({
      appendDimension: {
        sheetId: grid.sheetId,
        dimension: 'ROWS',
        length: request.row + count - grid.rowCount,
      },
    });
  }
  if (request.col + width > grid.columnCount) {
    requests.push({
      appendDimension: {
        sheetId: grid.sheetId,
        dimension: 'COLUMNS',
        length: request.col + width - grid.columnCount,
      },
    });
  }
  requests.push({
    updateCells: {
      start: { sheetId: grid.sheetId, rowIndex: request.row, columnIndex: request.col },
      rows: request.values.map((row) => ({ values: row.map(cellData) })),
      fields: 'userEnteredValue',
    },
  });
  return requests;
}

/** A cell as `CellData`: typed values, so a string starting with `=` stays a string (never a formula). @internal */
export function cellData(value: CellValue): object {
  if (value === null || value === '') return {};
  if (typeof value === 'number')
    return Number.isFinite(value)
      ? { userEnteredValue: { numberValue: value } }
      : { userEnteredValue: { stringValue: String(value) } };
  if (typeof value === 'boolean') return { userEnteredValue: { boolValue: value } };
  return { userEnteredValue: { stringValue: value } };
}

function sameCells(read: CellRows, sent: CellValue[][], width: number): boolean {
  return sent.every((row, r) => {
    for (let c = 0; c < width; c++) {
      const want = row[c] ?? null;
      const got = read[r]?.[c] ?? null;
      if ((want === '' ? null : want) !== got) return false;
    }
    return true;
  });
}

/** Reads the expected cells of an append or an update again; throws `rows_moved` when one differs. @internal */
export async function checkExpected(
  deps: AppendDeps,
  request: SheetRef & { expect?: readonly CellRun[] | undefined },
): Promise<void> {
  if (!request.expect || request.expect.length === 0) return;
  const box = boxOf(request.expect);
  const cells = await deps.readBox(box.row, box.col, box.rows, box.cols, deps.signal);
  const mismatch = firstMismatch(request.expect, (row, col) => cells[row - box.row]?.[col - box.col]);
  if (mismatch) throw rowsMoved(request, mismatch);
}

/** The smallest box holding every run. */
function boxOf(runs: readonly CellRun[]): { row: number; col: number; rows: number; cols: number } {
  let top = Infinity;
  let left = Infinity;
  let bottom = -1;
  let right = -1;
  for (const run of runs) {
    top = Math.min(top, run.row);
    bottom = Math.max(bottom, run.row);
    left = Math.min(left, run.col);
    right = Math.max(right, run.col + run.values.length - 1);
  }
  return { row: top, col: left, rows: bottom - top + 1, cols: right - left + 1 };
}
