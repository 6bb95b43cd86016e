/**
 * Putting a checked write into its sheet, and taking it out again when a later entity of the same
 * all-or-nothing write fails.
 * @module
 */
import type { CallOptions, CellValue, SheetRef, SpreadsheetAdapter } from '../adapters/types.js';
import { StepwireError, ValidationError } from '../errors/index.js';
import { cellFromValue } from './sheet-mapping.js';
import { endOfData, type WritePlan } from './write-plan.js';

/** Puts the cells back as they were before a committed plan. @internal */
export type Undo = () => Promise<void> | void;

/**
 * Writes one plan's rows. With `undoable`, first keeps what it needs to put the sheet back (the cells a
 * replace overwrites; where an append's rows went) and returns that as an {@link Undo}.
 * @internal
 */
export async function commitPlan(
  sheets: SpreadsheetAdapter,
  plan: WritePlan,
  options: CallOptions,
  undoable: boolean,
): Promise<Undo | undefined> {
  const { entity, loaded } = plan;
  const config = entity.spreadsheet_config;
  const ref: SheetRef = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
  const values = sheetRows(plan);
  const first = config.origin.row + 1;
  if (plan.mode === 'replace') {
    const write = overwrite(sheets, 'write_mode "replace" is not available');
    const height = Math.max(values.length, loaded.table.length);
    if (height === 0) return undefined;
    const region = { ...ref, row: first, col: config.origin.col };
    const before = undoable
      ? ((await sheets.read([{ ...region, rows: height, cols: loaded.headerWidth }], options))[0] ?? [])
      : [];
    // Rows past the new ones are blanked (frozen, so the memory adapter keeps them as they are).
    const rows = values.length >= height ? values : values.slice();
    if (rows.length < height) {
      const blank = Object.freeze(new Array<CellValue>(loaded.headerWidth).fill(null)) as CellValue[];
      for (let i = values.length; i < height; i++) rows.push(blank);
    }
    await write({ ...region, values: rows }, options);
    return undoable
      ? () =>
          write({
            ...region,
            values: Array.from({ length: height }, (_, i) => widen(before[i], loaded.headerWidth)),
          })
      : undefined;
  }
  if (values.length === 0) return undefined;
  const at = { ...ref, row: first + loaded.table.length, col: config.origin.col };
  await sheets.append({ ...at, values, expect: endOfData(plan) }, options);
  if (!undoable) return undefined;
  const write = overwrite(sheets, 'a write to several entities cannot be undone');
  // The appended rows end the data region again once they are empty (a blank row ends an entity's rows).
  return () =>
    write({ ...at, values: values.map(() => new Array<CellValue>(loaded.headerWidth).fill(null)) });
}

/**
 * Takes back committed plans, newest first, after `failure`. When taking back fails too, the error
 * says which entities may hold a part of the write. @internal
 */
export async function undoPlans(
  undos: readonly { entity: string; undo: Undo }[],
  failure: unknown,
): Promise<void> {
  const stuck: string[] = [];
  for (const { entity, undo } of [...undos].reverse()) {
    try {
      await undo();
    } catch {
      stuck.push(entity);
    }
  }
  if (stuck.length > 0) {
    throw new StepwireError(
      'write_partial',
      `the write failed (${failure instanceof Error ? failure.message : String(failure)}) and the rows already ` +
        `written to ${stuck.map((e) => `"${e}"`).join(', ')} could not be taken back: check those sheets`,
      { cause: failure },
    );
  }
}

/**
 * The cells of a plan's rows as the sheet holds them, each row as wide as the header. Numbers, text
 * and booleans coerced to their column's type are their own cells, so where the header holds the
 * entity's columns in order and nothing else, the coerced rows are the cells (not copied); dates go
 * through `cellFromValue`.
 */
function sheetRows(plan: WritePlan): CellValue[][] {
  const { entity, loaded } = plan;
  const width = loaded.headerWidth;
  const at = loaded.headerIndexes;
  const types = entity.columns.map((column) => column.type);
  const m = types.length;
  const plain = types.every((type) => type === 'NUMBER' || type === 'STRING' || type === 'BOOLEAN');
  if (plain && width === m && at.every((h, c) => h === c)) {
    // Frozen, so an adapter may keep them without a copy (the memory adapter does).
    for (let r = 0; r < plan.rows.length; r++) Object.freeze(plan.rows[r]);
    return plan.rows as CellValue[][];
  }
  const values = new Array<CellValue[]>(plan.rows.length);
  for (let r = 0; r < plan.rows.length; r++) {
    const row = plan.rows[r]!;
    const cells = new Array<CellValue>(width).fill(null);
    for (let c = 0; c < m; c++) {
      const value = row[c];
      const type = types[c]!;
      cells[at[c]!] =
        value === null ||
        (type === 'NUMBER' && typeof value === 'number' && value - value === 0) ||
        (type === 'STRING' && typeof value === 'string' && visible(value)) ||
        (type === 'BOOLEAN' && typeof value === 'boolean')
          ? (value as CellValue)
          : cellFromValue(type, value);
    }
    Object.freeze(cells);
    values[r] = cells;
  }
  return values;
}

/** A string starting with a printable ASCII character, so never blank. */
function visible(text: string): boolean {
  const code = text.charCodeAt(0);
  return code > 32 && code < 127;
}

function overwrite(sheets: SpreadsheetAdapter, what: string): NonNullable<SpreadsheetAdapter['write']> {
  const write = sheets.write?.bind(sheets);
  if (!write)
    throw new ValidationError([
      {
        code: 'unsupported',
        path: 'write_mode',
        message: `this spreadsheet adapter cannot overwrite cells, so ${what}`,
      },
    ]);
  return write;
}

function widen(row: CellValue[] | undefined, width: number): CellValue[] {
  const cells = new Array<CellValue>(width).fill(null);
  row?.forEach((value, i) => {
    if (i < width) cells[i] = value ?? null;
  });
  return cells;
}
