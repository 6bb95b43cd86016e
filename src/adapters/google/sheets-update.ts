/**
 * Writes by key for `GoogleSheets`: cells overwritten in place and rows deleted in one atomic
 * `spreadsheets.batchUpdate` (`updateCells`, then `deleteDimension` from the bottom up), after
 * reading the expected cells (the rows' keys) again right before sending, and a read-back check
 * when the outcome of an attempt is unknown.
 *
 * Sheets has no compare-and-set: between that read and the batchUpdate another writer may still
 * move rows. The catalog writes only the cells the caller gave and never the key cells, so such a
 * late move leaves the key cells as they were, and a later read shows the rows as they are.
 * @module
 */
import { CancelledError, UpstreamError } from '../../errors/index.js';
import { backoffDelay, sleep } from '../../retry/index.js';
import { bottomUp } from '../sheet-update.js';
import type { CellValue, UpdateRequest } from '../types.js';
import { cellData, checkExpected, type AppendDeps, type SheetProperties } from './sheets-append.js';
import { classifySafe, describeFailure, outcomeUnknown, readGoogleError } from './errors.js';

/** Applies `request`; see the module comment. @internal */
export async function updateRows(deps: AppendDeps, request: UpdateRequest): Promise<void> {
  const { policy, signal } = deps;
  if (request.cells.length === 0 && request.deleteRows.length === 0) return;
  const before = await deps.properties(signal);
  const deletes = bottomUp(request.deleteRows).filter((row) => row < before.rowCount);
  const requestBody = { requests: buildRequests(before, request, deletes) };
  const where = `the update of sheet "${request.sheet_name}" of spreadsheet "${request.spreadsheet_id}"`;

  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw new CancelledError(`${capital(where)} was cancelled before it was sent`);
    await checkExpected(deps, request);
    try {
      await deps.batchUpdate(requestBody, signal);
      return;
    } catch (error) {
      // An answer came but cannot be trusted (see AppendDeps.batchUpdate): never sent again.
      if (error instanceof UpstreamError) throw error;
      if (signal?.aborted) {
        throw new CancelledError(
          `${capital(where)} was cancelled while in flight; it may or may not have been applied`,
          {
            cause: error,
          },
        );
      }
      const failure = readGoogleError(error);
      const last = attempt >= policy.attempts;
      const verdict = classifySafe(failure);
      if (!outcomeUnknown(failure)) {
        // Refused before processing: safe to send again (after checking the rows again).
        if (!verdict.retry || last) throw deps.fail(error, 'update');
        await sleep(backoffDelay(attempt, policy, verdict.afterMs), signal);
        continue;
      }
      // Writing the same cells again is harmless; deleting rows again is not, so check first.
      if (deletes.length > 0) {
        const check = await verifyDeletes(deps, before, deletes.length);
        if (check === 'present') return;
        if (check === 'unclear') {
          throw new UpstreamError(
            `The outcome of ${where} is unknown: ${describeFailure(failure)}. Reading the sheet back could not tell whether ` +
              'the rows were deleted, so nothing was sent again; check the sheet before retrying.',
            failure.status,
            { cause: error, retryable: false },
          );
        }
      }
      if (last) throw deps.fail(error, 'update');
      await sleep(backoffDelay(attempt, policy, failure.afterMs), signal);
    }
  }
}

/** Whether an attempt with an unknown outcome deleted the rows: the grid shrank by exactly them. */
async function verifyDeletes(
  deps: AppendDeps,
  before: SheetProperties,
  count: number,
): Promise<'present' | 'absent' | 'unclear'> {
  try {
    const after = await deps.properties(deps.signal);
    if (after.rowCount === before.rowCount) return 'absent';
    return after.rowCount === before.rowCount - count ? 'present' : 'unclear';
  } catch (error) {
    if (error instanceof CancelledError) throw error;
    return 'unclear';
  }
}

function buildRequests(grid: SheetProperties, request: UpdateRequest, deletes: number[]): object[] {
  const requests: object[] = request.cells
    .filter((run) => run.values.length > 0)
    .map((run) => ({
      updateCells: {
        start: { sheetId: grid.sheetId, rowIndex: run.row, columnIndex: run.col },
        rows: [{ values: run.values.map((value: CellValue) => cellData(value)) }],
        fields: 'userEnteredValue',
      },
    }));
  // Bottom up, neighbours merged: deleting a range never moves the ranges still to delete.
  for (let i = 0; i < deletes.length;) {
    let start = deletes[i]!;
    const end = start + 1;
    while (i + 1 < deletes.length && deletes[i + 1] === start - 1) start = deletes[++i]!;
    i++;
    requests.push({
      deleteDimension: {
        range: { sheetId: grid.sheetId, dimension: 'ROWS', startIndex: start, endIndex: end },
      },
    });
  }
  return requests;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
