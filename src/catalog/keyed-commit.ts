/**
 * Putting a write by key (upsert, update, delete) into its sheet: the cells of the columns given,
 * in the rows found by key, and the deleted rows, as one adapter `update` that first checks the key
 * cells are still where they were read; then the new rows of an upsert, appended.
 * @module
 */
import type {
  CallOptions,
  CellRun,
  CellValue,
  SheetRef,
  SpreadsheetAdapter,
  UpdateRequest,
} from '../adapters/types.js';
import { SheetError, ValidationError } from '../errors/index.js';
import { undoPlans, type Undo } from './sheet-commit.js';
import { cellFromValue } from './sheet-mapping.js';
import { endOfData, keyCellRuns, keyColumns, type WritePlan } from './write-plan.js';

/**
 * Writes a keyed plan. With `undoable`, also returns how to take it back: old cells written again,
 * deleted rows inserted again (whole sheet rows, as read before), appended rows emptied. With
 * `planAgain` (the caller plans the write again after `rows_moved`), an upsert whose append finds the
 * rows moved keeps its updates. @internal
 */
export async function commitKeyed(
  sheets: SpreadsheetAdapter,
  plan: WritePlan,
  options: CallOptions,
  undoable: boolean,
  planAgain = false,
): Promise<Undo | undefined> {
  const update = sheets.update?.bind(sheets);
  if (!update) throw cannotUpdate(plan.mode);
  const { entity, loaded } = plan;
  const config = entity.spreadsheet_config;
  const ref: SheetRef = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
  const first = config.origin.row + 1;
  const keys = new Set(keyColumns(entity));
  const expect = [...plan.updates, ...plan.deletes].flatMap((change) => keyCellRuns(plan, change.index));
  const cells = plan.updates.flatMap((u) =>
    runs(plan, first + u.index, (c) => (u.given[c] && !keys.has(c) ? u.row[c] : SKIP)),
  );
  const deleteRows = plan.deletes.map((d) => first + d.index);
  const deleted = undoable ? await readRows(sheets, plan, deleteRows, options) : [];
  const request: UpdateRequest = { ...ref, cells, deleteRows, expect };
  if (cells.length > 0 || deleteRows.length > 0) await update(request, options);
  const restore: UpdateRequest = {
    ...ref,
    cells: plan.updates.flatMap((u) =>
      runs(plan, first + u.index, (c) => (u.given[c] && !keys.has(c) ? u.before[c] : SKIP)),
    ),
    deleteRows: [],
    expect: plan.updates.flatMap((u) => keyCellRuns(plan, u.index)),
  };
  const width = loaded.headerWidth;
  const at = { ...ref, row: first + loaded.table.length, col: config.origin.col };
  if (plan.rows.length > 0) {
    const values = plan.rows.map((row) => sheetRow(plan, row));
    try {
      await sheets.append({ ...at, values, expect: endOfData(plan) }, options);
    } catch (error) {
      // Rows moved (another writer deleted some): the write is planned again from a fresh read, which
      // updates these rows again with the same cells, so they stay as they are (taking them back would
      // find them moved too). Otherwise the updated rows go back to what they were, so the upsert stays
      // all or nothing; when they cannot, the error says so (`write_partial`).
      if (planAgain && error instanceof SheetError && error.code === 'rows_moved') throw error;
      if (restore.cells.length > 0)
        await undoPlans([{ entity: entity.name, undo: () => update(restore, options) }], error);
      throw error;
    }
  }
  if (!undoable) return undefined;
  return async () => {
    if (plan.rows.length > 0) {
      const blank = plan.rows.map((_, i) => ({
        row: at.row + i,
        col: at.col,
        values: new Array<CellValue>(width).fill(null),
      }));
      await update({ ...ref, cells: blank, deleteRows: [], expect: [] });
    }
    if (restore.cells.length > 0) await update(restore);
    // Deleted rows go back where they were, top down, each as it was read.
    const order = deleteRows.map((row, i) => ({ row, cells: deleted[i]! })).sort((a, b) => a.row - b.row);
    for (const { row, cells: values } of order)
      await sheets.append({ ...ref, row, col: 0, values: [values.length > 0 ? values : [null]] });
  };
}

/** The error for a write by key on an adapter without `update`. @internal */
export function cannotUpdate(mode: string): ValidationError {
  return new ValidationError([
    {
      code: 'unsupported',
      path: 'write_mode',
      message: `this spreadsheet adapter cannot change rows in place (it has no update), so write_mode "${mode}" is not available`,
    },
  ]);
}

/** True for the modes that find rows by key. @internal */
export function isKeyed(mode: string): boolean {
  return mode === 'upsert' || mode === 'update' || mode === 'delete';
}

const SKIP = Symbol('skip');

/** The cells of one sheet row, left to right: runs of neighbouring entity columns whose value is not SKIP. */
function runs(plan: WritePlan, sheetRow: number, value: (c: number) => unknown): CellRun[] {
  const { entity, loaded } = plan;
  const origin = entity.spreadsheet_config.origin.col;
  const cells = entity.columns
    .map((column, c) => ({ at: loaded.headerIndexes[c]!, c, type: column.type, value: value(c) }))
    .filter((cell) => cell.value !== SKIP)
    .sort((a, b) => a.at - b.at);
  const out: CellRun[] = [];
  for (const cell of cells) {
    const written = cellFromValue(cell.type, cell.value);
    const last = out.at(-1);
    if (last && last.col + last.values.length === origin + cell.at) last.values.push(written);
    else out.push({ row: sheetRow, col: origin + cell.at, values: [written] });
  }
  return out;
}

/** A row in header order, as appended. */
function sheetRow(plan: WritePlan, row: readonly unknown[]): CellValue[] {
  const cells = new Array<CellValue>(plan.loaded.headerWidth).fill(null);
  plan.entity.columns.forEach((column, c) => {
    cells[plan.loaded.headerIndexes[c]!] = cellFromValue(column.type, row[c]);
  });
  return cells;
}

/** The whole sheet rows about to be deleted, to insert them again on undo. */
async function readRows(
  sheets: SpreadsheetAdapter,
  plan: WritePlan,
  rows: readonly number[],
  options: CallOptions,
): Promise<CellValue[][]> {
  if (rows.length === 0) return [];
  const config = plan.entity.spreadsheet_config;
  // A loop, not a spread: a large write's rows would overflow the stack as arguments.
  let [top, bottom] = [rows[0]!, rows[0]!];
  for (const row of rows) [top, bottom] = [Math.min(top, row), Math.max(bottom, row)];
  const height = bottom - top + 1;
  const ref = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
  const [box = []] = await sheets.read([{ ...ref, row: top, col: 0, rows: height }], options);
  return rows.map((row) => (box[row - top] ?? []).map((cell) => cell ?? null));
}
