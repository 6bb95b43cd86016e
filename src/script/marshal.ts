/**
 * Copying input entities into the sandbox: a small JSON header per entity plus one binary buffer
 * per number or dictionary-encoded column. Nothing is shared by reference; the guest prelude
 * turns what it receives into plain row objects.
 * @internal
 * @module
 */

import type { EntityData } from './types.js';

/**
 * How one column crosses the boundary (same codes both ways).
 * - `F64`: a Float64Array buffer with no missing cell.
 * - `F64_NULLS`: a Float64Array buffer where NaN stands for `null`.
 * - `DICT`: a Uint32Array buffer of indexes into a JSON array of distinct values.
 * - `VALUES`: the values themselves, as a JSON array in the header.
 * - `I32`: an Int32Array buffer with no missing cell (inputs only: QuickJS computes faster on
 *   the integers it reads from it than on the doubles a Float64Array gives).
 * @internal
 */
export const ColumnKind = { F64: 0, F64_NULLS: 1, DICT: 2, VALUES: 3, I32: 4 } as const;

/** An entity ready to copy into the guest. @internal */
export interface EncodedEntity {
  /**
   * JSON `{"c":[names],"n":rows,"k":[kinds],"d":[per column: dictionary, values or 0]}`.
   */
  header: string;
  /** Per column, its binary data (Float64Array or Uint32Array bytes); `undefined` for `VALUES`. */
  buffers: (ArrayBufferLike | undefined)[];
}

/** A dictionary is abandoned once it holds more distinct values than this share of the rows. */
function dictionaryLimit(rowCount: number): number {
  return (rowCount >>> 1) + 16;
}

/**
 * Encodes an entity column by column. Number columns (numbers and missing cells) go as
 * Float64Array bytes, non-finite numbers and missing cells as NaN, which the guest reads as
 * `null` (as JSON would make them). Columns of strings, booleans and missing cells go
 * dictionary-encoded when repetitive; anything else as a JSON array, so values JSON cannot carry
 * behave as `JSON.stringify` makes them. Missing cells become `null`.
 * @internal
 */
export function encodeEntity(entity: EntityData): EncodedEntity {
  const names = entity.columns.map((column) => column.name);
  const rows = entity.rows;
  const n = rows.length;
  const kinds: number[] = [];
  const extra: unknown[] = [];
  const buffers: (ArrayBufferLike | undefined)[] = [];
  for (let c = 0; c < names.length; c++) {
    const numbers = numberColumn(rows, c);
    if (numbers !== undefined) {
      extra.push(0);
      if (numbers.integers && !numbers.nulls) {
        kinds.push(ColumnKind.I32);
        buffers.push(Int32Array.from(numbers.values).buffer);
      } else {
        kinds.push(numbers.nulls ? ColumnKind.F64_NULLS : ColumnKind.F64);
        buffers.push(numbers.values.buffer);
      }
      continue;
    }
    const dictionary = dictionaryColumn(rows, c);
    if (dictionary !== undefined) {
      kinds.push(ColumnKind.DICT);
      extra.push(dictionary.values);
      buffers.push(dictionary.indexes.buffer);
      continue;
    }
    const values = new Array<unknown>(n);
    for (let r = 0; r < n; r++) {
      const cell = (rows[r] as readonly unknown[])[c];
      values[r] = cell === undefined ? null : cell;
    }
    kinds.push(ColumnKind.VALUES);
    extra.push(values);
    buffers.push(undefined);
  }
  return { header: JSON.stringify({ c: names, n, k: kinds, d: extra }), buffers };
}

function numberColumn(
  rows: readonly (readonly unknown[])[],
  c: number,
): { values: Float64Array; nulls: boolean; integers: boolean } | undefined {
  const n = rows.length;
  const values = new Float64Array(n);
  let nulls = false;
  let integers = true;
  for (let r = 0; r < n; r++) {
    const cell = (rows[r] as readonly unknown[])[c];
    if (typeof cell === 'number') {
      if (Number.isFinite(cell)) {
        values[r] = cell;
        if (integers && ((cell | 0) !== cell || Object.is(cell, -0))) integers = false;
      } else {
        values[r] = NaN;
        nulls = true;
      }
    } else if (cell === null || cell === undefined) {
      values[r] = NaN;
      nulls = true;
    } else return undefined;
  }
  return { values, nulls, integers };
}

function dictionaryColumn(
  rows: readonly (readonly unknown[])[],
  c: number,
): { values: unknown[]; indexes: Uint32Array } | undefined {
  const n = rows.length;
  const limit = dictionaryLimit(n);
  const indexes = new Uint32Array(n);
  const seen = new Map<unknown, number>();
  const values: unknown[] = [];
  for (let r = 0; r < n; r++) {
    let cell = (rows[r] as readonly unknown[])[c];
    const type = typeof cell;
    if (cell === undefined) cell = null;
    else if (cell !== null && type !== 'string' && type !== 'boolean') return undefined;
    let index = seen.get(cell);
    if (index === undefined) {
      if (values.length >= limit) return undefined;
      index = values.length;
      values.push(cell);
      seen.set(cell, index);
    }
    indexes[r] = index;
  }
  return { values, indexes };
}
