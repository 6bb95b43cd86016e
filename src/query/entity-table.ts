/**
 * The columnar in-memory form of an entity's rows. `NUMBER` columns are `Float64Array`s (NaN is an
 * empty cell: sheet numbers are never NaN), `BOOLEAN` columns are `Uint8Array`s of codes (0 false,
 * 1 true, 2 empty), text columns (`STRING`, `DATE`, `DATETIME`) are arrays of `string | null`.
 * Buffers may be longer than the table (spare capacity for appends); only the first `length` rows count.
 * @module
 */
import type { EntityColumn } from '../schema/entity.js';

/** The data of one column; see the module comment for the encoding by column type. */
export type ColumnData = Float64Array | Uint8Array | (string | null)[];

/** Code of an empty cell in a `BOOLEAN` column's `Uint8Array`. */
export const BOOLEAN_NULL = 2;

/** Rows written into a set of buffers, shared by every table that uses them. @internal */
export interface TableBuffers {
  filled: number;
}

/** An entity's rows, column by column. Treat it as read only; grow it with {@link appendRows}. */
export interface EntityTable {
  /** The entity's columns, in entity order; `data[c]` holds column `c`. */
  readonly columns: readonly EntityColumn[];
  /** Number of rows. */
  readonly length: number;
  /** One buffer per column, each at least `length` long. */
  readonly data: readonly ColumnData[];
  /** @internal */
  readonly buffers: TableBuffers;
}

function allocate(column: EntityColumn, capacity: number): ColumnData {
  if (column.type === 'NUMBER') return new Float64Array(capacity);
  if (column.type === 'BOOLEAN') return new Uint8Array(capacity);
  return new Array<string | null>(capacity);
}

/**
 * A table of `length` rows whose cells are not written yet: the sheet mapping writes every cell
 * (text cells start out as holes, not `null`). @internal
 */
export function createTable(columns: readonly EntityColumn[], length: number): EntityTable {
  return {
    columns,
    length,
    data: columns.map((column) => allocate(column, length)),
    buffers: { filled: length },
  };
}

/** The value of row `row` of column data, decoded (`null` for an empty cell). @internal */
export function cellOf(data: ColumnData, row: number): string | number | boolean | null {
  if (data instanceof Float64Array) {
    const x = data[row]!;
    return x === x ? x : null;
  }
  if (data instanceof Uint8Array) {
    const b = data[row]!;
    return b === BOOLEAN_NULL ? null : b === 1;
  }
  return data[row] ?? null;
}

/** Row `i` of a table, as values in entity column order (`null` for empty cells). */
export function tableRow(table: EntityTable, i: number): unknown[] {
  if (!Number.isInteger(i) || i < 0 || i >= table.length)
    throw new RangeError(`row ${String(i)} is outside the table (${table.length} rows)`);
  return table.data.map((data) => cellOf(data, i));
}

function grow(data: ColumnData, keep: number, capacity: number): ColumnData {
  if (Array.isArray(data)) return data.slice(0, keep);
  const next = data instanceof Float64Array ? new Float64Array(capacity) : new Uint8Array(capacity);
  next.set(data.subarray(0, keep));
  return next;
}

/** Writes cell `c` of each of `rows` into `data` from row `from` on, the column's kind decided once. */
function putColumn(data: ColumnData, from: number, rows: readonly (readonly unknown[])[], c: number): void {
  const n = rows.length;
  if (data instanceof Float64Array)
    for (let r = 0; r < n; r++) {
      const value = rows[r]![c];
      data[from + r] = typeof value === 'number' ? value : NaN;
    }
  else if (data instanceof Uint8Array)
    for (let r = 0; r < n; r++) {
      const value = rows[r]![c];
      data[from + r] = value === true ? 1 : value === false ? 0 : BOOLEAN_NULL;
    }
  else
    for (let r = 0; r < n; r++) {
      const value = rows[r]![c];
      data[from + r] = typeof value === 'string' ? value : null;
    }
}

/**
 * A table with `rows` added at its end. `rows` are in entity column order and already coerced
 * (see `coerceCell`): numbers, strings, booleans or `null`. Cheap: typed buffers grow by doubling and
 * are shared with `table`, which stays valid with its old length. Appending twice to the same
 * (older) table copies the buffers instead of overwriting the rows added the first time.
 */
export function appendRows(table: EntityTable, rows: readonly (readonly unknown[])[]): EntityTable {
  if (rows.length === 0) return table;
  const length = table.length + rows.length;
  let data = table.data;
  let buffers = table.buffers;
  const shared = buffers.filled === table.length;
  const capacity = data.reduce(
    (least, column) => (Array.isArray(column) ? least : Math.min(least, column.length)),
    Infinity,
  );
  if (!shared || capacity < length) {
    const next = Math.max(length, Math.min(capacity === Infinity ? length : capacity * 2, length * 2), 16);
    data = data.map((column) => grow(column, table.length, next));
    buffers = { filled: table.length };
  }
  for (let c = 0; c < data.length; c++) putColumn(data[c]!, table.length, rows, c);
  buffers.filled = length;
  return { columns: table.columns, length, data, buffers };
}
