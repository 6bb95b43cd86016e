/**
 * Planning one entity's part of a write: rows checked and coerced, keys found in the table, and
 * what will change (rows appended, rows updated in place, rows deleted). Nothing is written here.
 * @module
 */
import type { CellRun, CellValue } from '../adapters/types.js';
import type { Issue } from '../errors/index.js';
import type { Entity, WriteMode } from '../schema/index.js';
import {
  coerceKeys,
  coercePatches,
  describeKey,
  keyOf,
  rowChecker,
  rowKey,
  type EntityRows,
} from './rows.js';
import { cellOf } from '../query/entity-table.js';
import { KeyPositions } from './key-positions.js';
import { rowRules } from '../computed/rules.js';
import { rowsWithKey } from '../query/hash-index.js';
import { tableRow, type EntityTable } from './sheet-mapping.js';

/** A sheet as the catalog last read it. @internal */
export interface LoadedSheet {
  table: EntityTable;
  /** Column positions of the header row, relative to the origin column, by entity column order. */
  headerIndexes: number[];
  headerWidth: number;
  revision: string | number | undefined;
  /**
   * The primary-key cells as read (raw, in key order) of the data rows where they differ from the
   * table's values (say `" 5 "` read as 5), by table row. A write by key expects these cells
   * there; see {@link keyCellsOf}.
   */
  keyCells: ReadonlyMap<number, readonly CellValue[]>;
}

/** The primary-key cells of table row `index` as read, in key order. @internal */
export function keyCellsOf(entity: Entity, loaded: LoadedSheet, index: number): readonly CellValue[] {
  return loaded.keyCells.get(index) ?? keyColumns(entity).map((c) => cellOf(loaded.table.data[c]!, index));
}

/** The key cells of table row `index` as they were read, one run each: what must still be there when writing. @internal */
export function keyCellRuns(plan: WritePlan, index: number): CellRun[] {
  const { entity, loaded } = plan;
  const first = entity.spreadsheet_config.origin.row + 1;
  const origin = entity.spreadsheet_config.origin.col;
  const raw = keyCellsOf(entity, loaded, index);
  // Key columns need not be neighbours: one run per key cell.
  return keyColumns(entity).map((c, k) => ({
    row: first + index,
    col: origin + loaded.headerIndexes[c]!,
    values: [raw[k] ?? null],
  }));
}

/**
 * What an append after the table's last row expects: that row's key cells where they were read. Had
 * another writer deleted rows since, the rows would land below a blank row, which ends the data, and
 * be lost to every read; the append fails with `rows_moved` instead and the write is planned again.
 * @internal
 */
export function endOfData(plan: WritePlan): CellRun[] {
  const length = plan.loaded.table.length;
  return length === 0 ? [] : keyCellRuns(plan, length - 1);
}

/** A row changed in place: its table index, the input row it came from, before and after. @internal */
export interface RowUpdate {
  index: number;
  input: number;
  before: unknown[];
  row: unknown[];
  /** Columns the caller gave; only their cells are written. */
  given: boolean[];
}

/** A row deleted: its table index, the key it was named by, and what it held. @internal */
export interface RowDelete {
  index: number;
  input: number;
  row: unknown[];
}

/** One entity's checked change, ready to be written. @internal */
export interface WritePlan {
  entity: Entity;
  mode: WriteMode;
  loaded: LoadedSheet;
  /** Rows appended (append, upsert's new keys), or every row of a replace. */
  rows: unknown[][];
  /** Input row of each of `rows`. */
  inputs: number[];
  updates: RowUpdate[];
  deletes: RowDelete[];
  /**
   * Input rows of a repeatable append that the sheet already holds, key and values alike: they
   * count as written and are not written again.
   */
  present: number[];
}

/** Rows a plan writes or deletes (rows already present not included). @internal */
export function planSize(plan: WritePlan): number {
  return plan.rows.length + plan.updates.length + plan.deletes.length;
}

/** Column positions of the primary key, in key order. @internal */
export function keyColumns(entity: Entity): number[] {
  return entity.primary_key.map((k) => entity.columns.findIndex((c) => c.name === k));
}

/**
 * Plans one entity's write. `earlier` holds the rows earlier parts of the same write append to this
 * entity (their keys count as taken). Problems go to `issues`, each naming the input row. When
 * `repeatable` (the write carries an idempotency key, so it may be a delivery of a write already
 * done), an appended row whose key the sheet holds with the same values counts as written instead
 * of being a duplicate key.
 * @internal
 */
export function planEntityWrite(
  entity: Entity,
  mode: WriteMode,
  input: EntityRows,
  loaded: LoadedSheet,
  earlier: readonly unknown[][],
  issues: Issue[],
  repeatable = false,
): WritePlan {
  const plan: WritePlan = {
    entity,
    mode,
    loaded,
    rows: [],
    inputs: [],
    updates: [],
    deletes: [],
    present: [],
  };
  if (mode === 'append' || mode === 'replace') planRows(plan, input, earlier, issues, repeatable);
  else if (mode === 'delete') planDeletes(plan, input, issues);
  else planPatches(plan, input, issues);
  const rules = rowRules(entity);
  if (rules) {
    plan.rows.forEach((row, k) => rules.check(row, undefined, plan.inputs[k]!, issues));
    for (const update of plan.updates) rules.check(update.row, update.given, update.input, issues);
  }
  return plan;
}

/** Where a key was first seen, in `planRows`: this write's rows are their index. */
const EARLIER = -1;

function planRows(
  plan: WritePlan,
  input: EntityRows,
  earlier: readonly unknown[][],
  issues: Issue[],
  repeatable: boolean,
): void {
  const { entity, loaded } = plan;
  const columns = keyColumns(entity);
  const all = entity.columns.map((_, c) => c);
  const seen = new KeyPositions();
  for (const row of earlier) seen.set(rowKey(row, columns), EARLIER);
  const check = rowChecker(entity);
  for (let i = 0; i < input.length; i++) {
    const row = check.row(input[i], i, issues);
    if (!row) continue;
    if (hasNull(row, columns)) {
      issues.push({
        code: 'null_key',
        path: `${entity.name}[${i}]`,
        message: `row ${i + 1} of "${entity.name}" has an empty primary key column (${entity.primary_key.join(', ')})`,
      });
      continue;
    }
    const key = rowKey(row, columns);
    const taken = seen.get(key);
    const existing =
      taken !== undefined || plan.mode !== 'append' ? undefined : keyRows(loaded.table, columns, row).at(-1);
    // A write delivered again finds its own rows: the same key and values count as written.
    const present =
      repeatable &&
      existing !== undefined &&
      keyOf(tableRow(loaded.table, existing), all) === keyOf(row, all);
    if ((taken !== undefined || existing !== undefined) && !present) {
      const where =
        taken === EARLIER
          ? 'an earlier row of this write'
          : taken !== undefined
            ? `row ${taken + 1} of this write`
            : `row ${entity.spreadsheet_config.origin.row + 2 + existing!} of sheet "${entity.spreadsheet_config.sheet_name}"`;
      issues.push(duplicate(entity, i, columns, row, where));
      continue;
    }
    seen.set(key, i);
    if (present) plan.present.push(i);
    else {
      plan.rows.push(row);
      plan.inputs.push(i);
    }
  }
}

function planPatches(plan: WritePlan, input: EntityRows, issues: Issue[]): void {
  const { entity, loaded } = plan;
  const columns = keyColumns(entity);
  const seen = new Map<string, number>();
  coercePatches(entity, input, issues).forEach((patch, i) => {
    if (!patch) return;
    const key = keyOf(patch.values, columns);
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push(duplicate(entity, i, columns, patch.values, `row ${first + 1} of this write`));
      return;
    }
    seen.set(key, i);
    const index = found(plan, keyRows(loaded.table, columns, patch.values), i, columns, patch.values, issues);
    if (index === 'ambiguous') return;
    if (index === undefined) {
      if (plan.mode === 'update') {
        issues.push(missing(entity, i, columns, patch.values));
        return;
      }
      plan.rows.push(patch.values);
      plan.inputs.push(i);
      return;
    }
    const before = tableRow(loaded.table, index);
    const row = before.map((value, c) => (patch.given[c] ? patch.values[c] : value));
    plan.updates.push({ index, input: i, before, row, given: patch.given });
  });
}

function planDeletes(plan: WritePlan, input: EntityRows, issues: Issue[]): void {
  const { entity, loaded } = plan;
  const columns = keyColumns(entity);
  const seen = new Map<string, number>();
  coerceKeys(entity, input, issues).forEach((key, i) => {
    if (!key) return;
    const text = keyOf(key, columns);
    const first = seen.get(text);
    if (first !== undefined) {
      issues.push(duplicate(entity, i, columns, key, `key ${first + 1} of this delete`));
      return;
    }
    seen.set(text, i);
    const index = found(plan, keyRows(loaded.table, columns, key), i, columns, key, issues);
    if (index === 'ambiguous') return;
    if (index === undefined) issues.push(missing(entity, i, columns, key));
    else plan.deletes.push({ index, input: i, row: tableRow(loaded.table, index) });
  });
}

/** The one table row holding a key; `ambiguous` (with an issue) when the sheet holds it twice. */
function found(
  plan: WritePlan,
  rows: readonly number[],
  i: number,
  columns: number[],
  values: unknown[],
  issues: Issue[],
): number | 'ambiguous' | undefined {
  if (rows.length <= 1) return rows[0];
  const { entity } = plan;
  const first = entity.spreadsheet_config.origin.row + 2;
  const lines = rows.map((r) => String(first + r));
  issues.push({
    code: 'ambiguous_key',
    path: `${entity.name}[${i}]`,
    message: `row ${i + 1} of "${entity.name}" names primary key ${describeKey(entity.primary_key, columns, values)}, which rows ${lines.slice(0, -1).join(', ')} and ${lines.at(-1)} of sheet "${entity.spreadsheet_config.sheet_name}" both hold; remove the duplicate from the sheet first`,
  });
  return 'ambiguous';
}

/** Whether one of `columns` of `row` is empty. */
function hasNull(row: readonly unknown[], columns: readonly number[]): boolean {
  for (let k = 0; k < columns.length; k++) if (row[columns[k]!] === null) return true;
  return false;
}

/** The table rows holding the key of `row` (values in entity column order), through the key columns' indexes. */
function keyRows(table: EntityTable, columns: readonly number[], row: readonly unknown[]): number[] {
  return rowsWithKey(
    table,
    columns,
    columns.map((c) => row[c]),
  );
}

/** The issue of a key written twice, or already taken (`clash` says where). @internal */
export function duplicate(
  entity: Entity,
  i: number,
  columns: number[],
  row: unknown[],
  clash: string,
): Issue {
  return {
    code: 'duplicate_key',
    path: `${entity.name}[${i}]`,
    message: `row ${i + 1} of "${entity.name}" repeats primary key ${describeKey(entity.primary_key, columns, row)} of ${clash}`,
  };
}

/** The issue of a key no row holds. @internal */
export function missing(entity: Entity, i: number, columns: number[], row: unknown[]): Issue {
  return {
    code: 'missing_key',
    path: `${entity.name}[${i}]`,
    message: `row ${i + 1} of "${entity.name}" names primary key ${describeKey(entity.primary_key, columns, row)}, which no row of "${entity.name}" holds`,
  };
}
