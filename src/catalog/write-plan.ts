/**
 * Planning one entity's part of a write: rows checked and coerced, keys found in the table, and
 * what will change (rows appended, rows updated in place, rows deleted). Nothing is written here.
 * @module
 */
import type { CellValue } from '../adapters/types.js';
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
import { tableRow, type EntityTable } from './sheet-mapping.js';

/** A sheet as the catalog last read it. @internal */
export interface LoadedSheet {
  table: EntityTable;
  /** Column positions of the header row, relative to the origin column, by entity column order. */
  headerIndexes: number[];
  headerWidth: number;
  revision: string | number | undefined;
  /** The primary-key cells of each data row as read (raw), in key order: what a write by key expects there. */
  keyCells: CellValue[][];
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
}

/** Rows a plan writes or deletes. @internal */
export function planSize(plan: WritePlan): number {
  return plan.rows.length + plan.updates.length + plan.deletes.length;
}

/** Column positions of the primary key, in key order. @internal */
export function keyColumns(entity: Entity): number[] {
  return entity.primary_key.map((k) => entity.columns.findIndex((c) => c.name === k));
}

/**
 * Plans one entity's write. `earlier` holds the rows earlier parts of the same write append to this
 * entity (their keys count as taken). Problems go to `issues`, each naming the input row.
 * @internal
 */
export function planEntityWrite(
  entity: Entity,
  mode: WriteMode,
  input: EntityRows,
  loaded: LoadedSheet,
  earlier: readonly unknown[][],
  issues: Issue[],
): WritePlan {
  const plan: WritePlan = { entity, mode, loaded, rows: [], inputs: [], updates: [], deletes: [] };
  if (mode === 'append' || mode === 'replace') planRows(plan, input, earlier, issues);
  else if (mode === 'delete') planDeletes(plan, input, issues);
  else planPatches(plan, input, issues);
  return plan;
}

/** Where a key was first seen, in `planRows`: this write's rows are their index, table rows `-1 - index`. */
const EARLIER = Number.NEGATIVE_INFINITY;

function planRows(plan: WritePlan, input: EntityRows, earlier: readonly unknown[][], issues: Issue[]): void {
  const { entity, loaded } = plan;
  const columns = keyColumns(entity);
  const seen = new Map<unknown, number>();
  if (plan.mode === 'append') {
    const { table } = loaded;
    const key: unknown[] = new Array<unknown>(entity.columns.length).fill(null);
    for (let r = 0; r < table.length; r++) {
      for (const c of columns) key[c] = cellOf(table.data[c]!, r);
      seen.set(rowKey(key, columns), -1 - r);
    }
  }
  for (const row of earlier) seen.set(rowKey(row, columns), EARLIER);
  const check = rowChecker(entity);
  for (let i = 0; i < input.length; i++) {
    const row = check.row(input[i], i, issues);
    if (!row) continue;
    if (columns.some((c) => row[c] === null)) {
      issues.push({
        code: 'null_key',
        path: `${entity.name}[${i}]`,
        message: `row ${i + 1} of "${entity.name}" has an empty primary key column (${entity.primary_key.join(', ')})`,
      });
      continue;
    }
    const key = rowKey(row, columns);
    const clash = seen.get(key);
    if (clash !== undefined) {
      const where =
        clash === EARLIER
          ? 'an earlier row of this write'
          : clash < 0
            ? `existing row ${-clash}`
            : `row ${clash + 1} of this write`;
      issues.push(duplicate(entity, i, columns, row, where));
      continue;
    }
    seen.set(key, i);
    plan.rows.push(row);
    plan.inputs.push(i);
  }
}

function planPatches(plan: WritePlan, input: EntityRows, issues: Issue[]): void {
  const { entity, loaded } = plan;
  const columns = keyColumns(entity);
  const where = rowIndex(loaded.table, columns);
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
    const index = found(plan, where.get(key), i, columns, patch.values, issues);
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
  const where = rowIndex(loaded.table, columns);
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
    const index = found(plan, where.get(text), i, columns, key, issues);
    if (index === 'ambiguous') return;
    if (index === undefined) issues.push(missing(entity, i, columns, key));
    else plan.deletes.push({ index, input: i, row: tableRow(loaded.table, index) });
  });
}

/** The one table row holding a key; `ambiguous` (with an issue) when the sheet holds it twice. */
function found(
  plan: WritePlan,
  rows: number[] | undefined,
  i: number,
  columns: number[],
  values: unknown[],
  issues: Issue[],
): number | 'ambiguous' | undefined {
  if (rows === undefined) return undefined;
  if (rows.length === 1) return rows[0];
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

/** Table rows by key. */
function rowIndex(table: EntityTable, columns: number[]): Map<string, number[]> {
  const index = new Map<string, number[]>();
  for (let r = 0; r < table.length; r++) {
    const key = keyOf(tableRow(table, r), columns);
    const list = index.get(key);
    if (list) list.push(r);
    else index.set(key, [r]);
  }
  return index;
}

function duplicate(entity: Entity, i: number, columns: number[], row: unknown[], clash: string): Issue {
  return {
    code: 'duplicate_key',
    path: `${entity.name}[${i}]`,
    message: `row ${i + 1} of "${entity.name}" repeats primary key ${describeKey(entity.primary_key, columns, row)} of ${clash}`,
  };
}

function missing(entity: Entity, i: number, columns: number[], row: unknown[]): Issue {
  return {
    code: 'missing_key',
    path: `${entity.name}[${i}]`,
    message: `row ${i + 1} of "${entity.name}" names primary key ${describeKey(entity.primary_key, columns, row)}, which no row of "${entity.name}" holds`,
  };
}
