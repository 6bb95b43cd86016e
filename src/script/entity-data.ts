/**
 * Input entities given column by column, and the row forms made from them on demand.
 * @module
 */
import { setOwn } from '../schema/own.js';
import type { ColumnCells, EntityData } from './types.js';

/** Entities whose column data never changes in its first `length` rows (see {@link columnarEntity}). */
const unchanging = new WeakSet<EntityData>();

/**
 * An {@link EntityData} over column data (the catalog's own form). Its `rows` are made from the
 * columns the first time they are read; they are not enumerable, so a copy sent to a worker
 * carries only the columns. `unchanging`: the caller never changes the first `length` cells of
 * these columns (true of the catalog's cached tables), so encodings made of them may be kept.
 */
export function columnarEntity(
  columns: EntityData['columns'],
  data: readonly ColumnCells[],
  length: number,
  options: { unchanging?: boolean } = {},
): EntityData {
  let rows: unknown[][] | undefined;
  const entity = { columns, data, length } as EntityData;
  Object.defineProperty(entity, 'rows', {
    enumerable: false,
    get: () => (rows ??= rowArrays(data, length)),
  });
  if (options.unchanging === true) unchanging.add(entity);
  return entity;
}

/** Whether an entity's column data was declared unchanging by {@link columnarEntity}. @internal */
export function hasUnchangingData(entity: EntityData): boolean {
  return unchanging.has(entity);
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
 * `getEntity` gives a trusted transform. Made by one generated object literal per row where the
 * runtime allows generated code, else column by column (edge runtimes); see `objectsOf`.
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
 * `null`. Each row is one generated object literal where the runtime allows it (see `literalMaker`);
 * else the first eight columns are set by statements of their own, so each statement always sets
 * one name and V8 keeps it fast. A column named `__proto__` is set as an own property.
 * @internal
 */
export function objectsOf(
  names: readonly string[],
  columns: readonly ArrayLike<unknown>[],
  length: number,
): Record<string, unknown>[] {
  const maker = literalMaker(names, columns);
  if (maker) return maker(columns, length);
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

/** Makes the row objects of one column list: `(columns, length) => rows`. */
type RowMaker = (columns: readonly ArrayLike<unknown>[], length: number) => Record<string, unknown>[];

/** Row makers by column list and kinds; `null` where the runtime refuses generated code. */
const makers = new Map<string, RowMaker | null>();
/** Column lists whose makers are kept; past this the cache starts again. */
const MAKERS_KEPT = 256;

/**
 * A function that makes each row with one object literal of the column names, generated once per
 * column list: every row then has one shape with its fields inside the object. Integers read from
 * a number column (a `Float64Array`) are stored as small integers, so V8 keeps them in the field
 * instead of boxing each one (-0 stays a boxed -0): about 40% less memory than boxed numbers, and
 * as much less garbage collection. Names enter the source as JSON string literals (`__proto__` as
 * a computed key, so it is an own property). `undefined` where the runtime refuses generated code
 * (edge runtimes, a strict CSP); the caller then builds rows key by key.
 */
function literalMaker(
  names: readonly string[],
  columns: readonly ArrayLike<unknown>[],
): RowMaker | undefined {
  const numeric = columns.map((column) => column instanceof Float64Array);
  const key = JSON.stringify([names, numeric]);
  let maker = makers.get(key);
  if (maker === undefined) {
    const locals = names.map((_, j) => `c${j} = c[${j}]`).join(', ');
    const fields = names
      .map((name, j) => {
        const quoted = JSON.stringify(name);
        const cell = numeric[j]
          ? `(x = c${j}[i]) === x ? ((x | 0) === x && (x !== 0 || 1 / x > 0) ? x | 0 : x) : null`
          : `(x = c${j}[i]) === x && x !== undefined ? x : null`;
        return `${name === '__proto__' ? `[${quoted}]` : quoted}: ${cell}`;
      })
      .join(', ');
    const body = `'use strict'; const ${locals || '_ = 0'}; const out = new Array(n); let x;
for (let i = 0; i < n; i++) out[i] = { ${fields} };
return out;`;
    try {
      // The source is built from quoted names only.
      maker = new Function('c', 'n', body) as RowMaker;
    } catch {
      maker = null;
    }
    if (makers.size >= MAKERS_KEPT) makers.clear();
    makers.set(key, maker);
  }
  return maker ?? undefined;
}

/** A cell as a row object holds it: `undefined` and NaN (an empty number cell) are `null`. */
function cell(x: unknown): unknown {
  return x === x && x !== undefined ? x : null;
}
