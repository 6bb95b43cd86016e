/**
 * Input entities given column by column, and the row forms made from them on demand.
 * @module
 */
import { setOwn } from '../schema/own.js';
import type { ColumnCells, EntityData } from './types.js';

/**
 * An {@link EntityData} over column data (the catalog's own form). Its `rows` are made from the
 * columns the first time they are read; they are not enumerable, so a copy sent to a worker
 * carries only the columns.
 */
export function columnarEntity(
  columns: EntityData['columns'],
  data: readonly ColumnCells[],
  length: number,
): EntityData {
  let rows: unknown[][] | undefined;
  const entity = { columns, data, length } as EntityData;
  Object.defineProperty(entity, 'rows', {
    enumerable: false,
    get: () => (rows ??= rowArrays(data, length)),
  });
  return entity;
}

/** The cells of column `c` as plain values (`null` for an empty cell), `length` of them. */
export function columnValues(cells: ColumnCells, length: number): unknown[] {
  const out = new Array<unknown>(length);
  if (cells instanceof Float64Array) {
    for (let i = 0; i < length; i++) {
      const x = cells[i]!;
      out[i] = x === x ? x : null;
    }
  } else if (cells instanceof Uint8Array) {
    for (let i = 0; i < length; i++) {
      const b = cells[i]!;
      out[i] = b === 0 ? false : b === 1 ? true : null;
    }
  } else for (let i = 0; i < length; i++) out[i] = cells[i] ?? null;
  return out;
}

function rowArrays(data: readonly ColumnCells[], length: number): unknown[][] {
  const columns = data.map((cells) => columnValues(cells, length));
  const rows = new Array<unknown[]>(length);
  for (let i = 0; i < length; i++) rows[i] = columns.map((column) => column[i]);
  return rows;
}

/**
 * The rows of an entity as objects keyed by column name (`null` for an empty or missing cell): what
 * `getEntity` gives a trusted transform. Built column by column without generated code, so it runs
 * on edge runtimes too.
 */
export function rowObjectsOf(entity: EntityData): Record<string, unknown>[] {
  const names = entity.columns.map((column) => column.name);
  if (entity.data !== undefined) {
    const length = entity.length ?? 0;
    // Numbers are read from their Float64Array (NaN is null below), text as it is; booleans decoded.
    const columns = entity.data.map((cells) =>
      cells instanceof Uint8Array ? columnValues(cells, length) : (cells as ArrayLike<unknown>),
    );
    return objectsOf(names, columns, length);
  }
  const rows = entity.rows;
  const columns = names.map((_, c) => {
    const column = new Array<unknown>(rows.length);
    for (let i = 0; i < rows.length; i++) column[i] = rows[i]![c];
    return column;
  });
  return objectsOf(names, columns, rows.length);
}

/**
 * `length` objects whose property `names[j]` holds `columns[j][i]`, with `undefined` and NaN read as
 * `null`. The first eight columns are set by statements of their own, so each statement always sets
 * one name and V8 keeps it fast; a column named `__proto__` is set as an own property.
 * @internal
 */
export function objectsOf(
  names: readonly string[],
  columns: readonly ArrayLike<unknown>[],
  length: number,
): Record<string, unknown>[] {
  const out = new Array<Record<string, unknown>>(length);
  const m = names.length;
  if (names.includes('__proto__')) {
    for (let i = 0; i < length; i++) {
      const row: Record<string, unknown> = {};
      for (let j = 0; j < m; j++) setOwn(row, names[j]!, cell(columns[j]![i]));
      out[i] = row;
    }
    return out;
  }
  const [k0 = '', k1 = '', k2 = '', k3 = '', k4 = '', k5 = '', k6 = '', k7 = ''] = names;
  const none: ArrayLike<unknown> = [];
  const [c0 = none, c1 = none, c2 = none, c3 = none, c4 = none, c5 = none, c6 = none, c7 = none] = columns;
  // Rows start as copies of one object holding every name, so each gets room for all of them at once.
  const template: Record<string, unknown> = {};
  for (const name of names) template[name] = null;
  for (let i = 0; i < length; i++) {
    const row: Record<string, unknown> = { ...template };
    let x: unknown;
    if (m > 0) row[k0] = (x = c0[i]) === x && x !== undefined ? x : null;
    if (m > 1) row[k1] = (x = c1[i]) === x && x !== undefined ? x : null;
    if (m > 2) row[k2] = (x = c2[i]) === x && x !== undefined ? x : null;
    if (m > 3) row[k3] = (x = c3[i]) === x && x !== undefined ? x : null;
    if (m > 4) row[k4] = (x = c4[i]) === x && x !== undefined ? x : null;
    if (m > 5) row[k5] = (x = c5[i]) === x && x !== undefined ? x : null;
    if (m > 6) row[k6] = (x = c6[i]) === x && x !== undefined ? x : null;
    if (m > 7) row[k7] = (x = c7[i]) === x && x !== undefined ? x : null;
    for (let j = 8; j < m; j++) row[names[j]!] = cell(columns[j]![i]);
    out[i] = row;
  }
  return out;
}

/** A cell as a row object holds it: `undefined` and NaN (an empty number cell) are `null`. */
function cell(x: unknown): unknown {
  return x === x && x !== undefined ? x : null;
}
