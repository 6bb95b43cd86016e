/**
 * Copying input entities into the sandbox: a small JSON header per entity plus one binary buffer
 * per number or dictionary-encoded column. Nothing is shared by reference; the guest prelude
 * turns what it receives into plain row objects.
 * @internal
 * @module
 */

import { hasUnchangingData } from './entity-data.js';
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

/** One column ready to copy into the guest. @internal */
export interface EncodedColumn {
  /** Its {@link ColumnKind}. */
  kind: number;
  /** Its dictionary (`DICT`), its values (`VALUES`), else 0. */
  extra: unknown;
  /** Its binary data (Float64Array, Int32Array or Uint32Array bytes); `undefined` for `VALUES`. */
  buffer: ArrayBufferLike | undefined;
}

/** An entity being copied into the guest: its columns are encoded when first asked for. @internal */
export interface EncodedEntity {
  entity: EntityData;
  /** Number of rows. */
  n: number;
  /** Per column, its encoding once made. */
  columns: (EncodedColumn | undefined)[];
}

/** An entity with every column encoded, to send whole to another process. @internal */
export interface PreEncodedEntity {
  columns: EntityData['columns'];
  /** Number of rows. */
  n: number;
  encoded: EncodedColumn[];
}

/** Encodes every column of `entity` (the catalog's tables reuse their encodings across runs). @internal */
export function preEncode(entity: EntityData): PreEncodedEntity {
  const encoding = encodingOf(entity);
  return {
    columns: entity.columns,
    n: encoding.n,
    encoded: entity.columns.map((_, c) => encodedColumn(encoding, c)),
  };
}

/** The {@link EncodedEntity} of an entity encoded by {@link preEncode}. @internal */
export function fromPreEncoded(entity: PreEncodedEntity): EncodedEntity {
  return { entity: { columns: entity.columns, rows: [] }, n: entity.n, columns: entity.encoded };
}

/** A dictionary is abandoned once it holds more distinct values than this share of the rows. */
function dictionaryLimit(rowCount: number): number {
  return (rowCount >>> 1) + 16;
}

/** Starts copying an entity; nothing is encoded yet. @internal */
export function encodingOf(entity: EntityData): EncodedEntity {
  const n = entity.data !== undefined ? (entity.length ?? 0) : entity.rows.length;
  return { entity, n, columns: entity.columns.map(() => undefined) };
}

/**
 * The JSON header of an entity: `{"c":[names],"n":rows,"r":[1 or 0 per column],"k":[kinds],"d":[per
 * column: dictionary, values or 0]}`, with the columns `read[c]` is false for left out (`r` 0,
 * kind -1): the guest asks for those one by one if it needs them.
 * @internal
 */
export function entityHeader(encoded: EncodedEntity, read: readonly boolean[] | undefined): string {
  const names = encoded.entity.columns.map((column) => column.name);
  const flags: number[] = [];
  const kinds: number[] = [];
  const extra: unknown[] = [];
  for (let c = 0; c < names.length; c++) {
    if (read !== undefined && !read[c]) {
      flags.push(0);
      kinds.push(-1);
      extra.push(0);
      continue;
    }
    const column = encodedColumn(encoded, c);
    flags.push(1);
    kinds.push(column.kind);
    extra.push(column.extra);
  }
  return JSON.stringify({ c: names, n: encoded.n, r: flags, k: kinds, d: extra });
}

/** Column `c` of an entity, encoded on first use. @internal */
export function encodedColumn(encoded: EncodedEntity, c: number): EncodedColumn {
  return (encoded.columns[c] ??= encodeShared(encoded.entity, c, encoded.n));
}

/**
 * Encodings of unchanging column data (the catalog's cached tables, which never change their first
 * `length` rows: appends write past them or copy the buffers), by the column's own array and the
 * number of rows encoded. An encoding is only read (the guest gets a copy of its bytes), so the
 * next run over the same table reuses it.
 */
const sharedEncodings = new WeakMap<object, { n: number; column: EncodedColumn }>();

function encodeShared(entity: EntityData, c: number, n: number): EncodedColumn {
  const cells = entity.data?.[c];
  if (cells === undefined || !hasUnchangingData(entity)) return encodeColumn(entity, c, n);
  const known = sharedEncodings.get(cells);
  if (known !== undefined && known.n === n) return known.column;
  const column = encodeColumn(entity, c, n);
  sharedEncodings.set(cells, { n, column });
  return column;
}

/**
 * Encodes one column. Number columns (numbers and missing cells) go as Float64Array bytes,
 * non-finite numbers and missing cells as NaN, which the guest reads as `null` (as JSON would make
 * them); whole numbers as Int32Array bytes when every one fits. Columns of strings, booleans and
 * missing cells go dictionary-encoded when repetitive; anything else as a JSON array, so values
 * JSON cannot carry behave as `JSON.stringify` makes them. Missing cells become `null`. Entities
 * given by column (`data`) are read as they are, without row arrays.
 */
function encodeColumn(entity: EntityData, c: number, n: number): EncodedColumn {
  const cells: ArrayLike<unknown> = entity.data?.[c] ?? rowCells(entity.rows, c);
  if (cells instanceof Uint8Array) {
    const { values, indexes } = booleanColumn(cells, n);
    return { kind: ColumnKind.DICT, extra: values, buffer: indexes.buffer };
  }
  const numbers = cells instanceof Float64Array ? numberFacts(cells, n) : numberColumn(cells, n);
  if (numbers !== undefined) {
    if (numbers.integers && !numbers.nulls)
      return { kind: ColumnKind.I32, extra: 0, buffer: new Int32Array(numbers.values).buffer };
    return {
      kind: numbers.nulls ? ColumnKind.F64_NULLS : ColumnKind.F64,
      extra: 0,
      buffer: numbers.values.buffer,
    };
  }
  const dictionary = dictionaryColumn(cells, n);
  if (dictionary !== undefined)
    return { kind: ColumnKind.DICT, extra: dictionary.values, buffer: dictionary.indexes.buffer };
  const values = new Array<unknown>(n);
  for (let r = 0; r < n; r++) {
    const cell = cells[r];
    values[r] = cell === undefined ? null : cell;
  }
  return { kind: ColumnKind.VALUES, extra: values, buffer: undefined };
}

/** Column `c` of row arrays. */
function rowCells(rows: readonly (readonly unknown[])[], c: number): unknown[] {
  const cells = new Array<unknown>(rows.length);
  for (let r = 0; r < rows.length; r++) cells[r] = rows[r]![c];
  return cells;
}

interface NumberFacts {
  values: Float64Array;
  nulls: boolean;
  integers: boolean;
}

/** A catalog number column (NaN for an empty cell): its first `n` values copied, and what they hold. */
function numberFacts(cells: Float64Array, n: number): NumberFacts {
  const values = cells.slice(0, n);
  let nulls = false;
  let integers = true;
  for (let r = 0; r < n; r++) {
    const cell = values[r]!;
    if ((cell | 0) !== cell) {
      integers = false;
      if (cell - cell !== 0) {
        values[r] = NaN; // empty, or not finite: null to the script
        nulls = true;
      }
    } else if (cell === 0 && 1 / cell < 0) integers = false;
  }
  return { values, nulls, integers };
}

function numberColumn(cells: ArrayLike<unknown>, n: number): NumberFacts | undefined {
  const values = new Float64Array(n);
  let nulls = false;
  let integers = true;
  for (let r = 0; r < n; r++) {
    const cell = cells[r];
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

/** A catalog boolean column (0 false, 1 true, 2 empty) as a dictionary of its three values. */
function booleanColumn(cells: Uint8Array, n: number): { values: unknown[]; indexes: Uint32Array } {
  const indexes = Uint32Array.from(cells.subarray(0, n));
  for (let r = 0; r < n; r++) if (indexes[r]! > 2) indexes[r] = 2;
  return { values: [false, true, null], indexes };
}

function dictionaryColumn(
  cells: ArrayLike<unknown>,
  n: number,
): { values: unknown[]; indexes: Uint32Array } | undefined {
  const limit = dictionaryLimit(n);
  const indexes = new Uint32Array(n);
  const seen = new Map<unknown, number>();
  const values: unknown[] = [];
  for (let r = 0; r < n; r++) {
    let cell = cells[r];
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
