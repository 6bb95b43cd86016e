/**
 * Hash indexes over the columns of an {@link EntityTable}: for each value, the rows holding it, in
 * row order. An index is built on first use of its column and kept with the table object (tables
 * never change their rows, see `appendRows`), so it goes when the catalog replaces the table.
 *
 * Equality is `===` on the decoded cell values (see `cellOf`): a number matches only a number of
 * `NUMBER` column (`0` and `-0` alike), a string only the same string of a text column, a boolean
 * only a `BOOLEAN` cell; empty cells are in no index and `null` matches nothing. That is exactly the
 * `EQUALS` / `IN` filters' rule and the writes' key rule, so a plan may use an index or not and get
 * the same rows.
 * @module
 */
import { BOOLEAN_NULL, type ColumnData, type EntityTable } from './entity-table.js';

/** The most slots per row a dense integer index may take (else the column is hashed). */
const DENSE_SLOTS_PER_ROW = 2;
const scratch = new Float64Array(1);
const words = new Int32Array(scratch.buffer);

/** Int32s per slot: the value's first row + 1 (0: free slot), its row count, its hash. */
const STRIDE = 3;

/**
 * The index of one column. Each distinct value has a slot holding its first row, its row count and
 * its hash, side by side (one cache line read per probe); `next` chains each row to the next row
 * of the same value. Row numbers are stored plus one, so 0 means none and nothing needs filling.
 */
export class ColumnIndex {
  readonly #data: ColumnData;
  /** `STRIDE` int32s per slot, see {@link STRIDE}. */
  #slots: Int32Array;
  /** `next[r]` is the next row + 1 holding the value of row `r` (0: none). */
  readonly #next: Int32Array;
  /** Slots - 1 (a power of two - 1 when hashed). */
  #mask: number;
  #used = 0;
  /** Smallest value of a dense integer index (slot = value - base); NaN for a hashed one. */
  readonly #base: number;

  /** Indexes the first `length` rows of a column. @internal */
  constructor(data: ColumnData, length: number) {
    this.#data = data;
    this.#next = new Int32Array(length);
    const dense = data instanceof Uint8Array ? { min: 0, max: 1 } : denseRange(data, length);
    this.#base = dense ? dense.min : NaN;
    const size = dense ? dense.max - dense.min + 1 : 16;
    this.#slots = new Int32Array(size * STRIDE);
    this.#mask = size - 1;
    // From the last row up, so that every chain runs in row order.
    if (data instanceof Float64Array) {
      if (dense) for (let r = length - 1; r >= 0; r--) this.#push(data[r]! - this.#base, r);
      else
        for (let r = length - 1; r >= 0; r--) {
          const x = data[r]!;
          if (x === x) this.#push(this.#claim(numberHash(x), x), r);
        }
    } else if (data instanceof Uint8Array) {
      for (let r = length - 1; r >= 0; r--) if (data[r] !== BOOLEAN_NULL) this.#push(data[r]!, r);
    } else {
      for (let r = length - 1; r >= 0; r--) {
        const s = data[r];
        if (s != null) this.#push(this.#claim(textHash(s), s), r);
      }
    }
  }

  /** Number of rows holding `value`. */
  count(value: unknown): number {
    const slot = this.#slotOf(value);
    return slot < 0 ? 0 : this.#slots[slot * STRIDE + 1]!;
  }

  /** The first row holding `value`, or -1. */
  first(value: unknown): number {
    const slot = this.#slotOf(value);
    return slot < 0 ? -1 : this.#slots[slot * STRIDE]! - 1;
  }

  /** The next row after `row` that holds the same value as `row`, or -1. */
  next(row: number): number {
    return this.#next[row]! - 1;
  }

  /** Every row holding `value`, in row order. */
  rows(value: unknown): number[] {
    const out: number[] = [];
    for (let r = this.first(value); r >= 0; r = this.next(r)) out.push(r);
    return out;
  }

  #push(slot: number, row: number): void {
    const at = slot * STRIDE;
    this.#next[row] = this.#slots[at]!;
    this.#slots[at] = row + 1;
    this.#slots[at + 1]!++;
  }

  /** The slot of a value being indexed: its own, or a free one taken for it. */
  #claim(hash: number, value: number | string): number {
    let slot = this.#find(hash, value);
    if (this.#slots[slot * STRIDE] !== 0) return slot;
    if (2 * ++this.#used > this.#mask) {
      this.#grow();
      slot = this.#find(hash, value);
    }
    this.#slots[slot * STRIDE + 2] = hash;
    return slot;
  }

  /** The slot holding `value`, else the free slot where it would go (linear probing). */
  #find(hash: number, value: number | string): number {
    const data = this.#data as ArrayLike<unknown>;
    const slots = this.#slots;
    let slot = hash & this.#mask;
    for (;;) {
      const head = slots[slot * STRIDE]!;
      if (head === 0 || (slots[slot * STRIDE + 2] === hash && data[head - 1] === value)) return slot;
      slot = (slot + 1) & this.#mask;
    }
  }

  #grow(): void {
    const old = this.#slots;
    const size = ((this.#mask + 1) * 2) | 0;
    const slots = new Int32Array(size * STRIDE);
    this.#slots = slots;
    this.#mask = size - 1;
    for (let at = 0; at < old.length; at += STRIDE) {
      if (old[at] === 0) continue;
      let slot = old[at + 2]! & this.#mask;
      while (slots[slot * STRIDE] !== 0) slot = (slot + 1) & this.#mask;
      for (let k = 0; k < STRIDE; k++) slots[slot * STRIDE + k] = old[at + k]!;
    }
  }

  /** The slot of a value looked up, or -1 when no row holds it (wrong type, `null`, absent). */
  #slotOf(value: unknown): number {
    const data = this.#data;
    let slot: number;
    if (data instanceof Float64Array) {
      if (typeof value !== 'number' || value !== value) return -1;
      if (this.#base === this.#base) {
        // Only int32 values are in a dense index; their slots are exact (no rounding of value - base).
        if ((value | 0) !== value) return -1;
        slot = value - this.#base;
        if (slot < 0 || slot > this.#mask) return -1;
      } else slot = this.#find(numberHash(value), value);
    } else if (data instanceof Uint8Array) {
      if (typeof value !== 'boolean') return -1;
      slot = value ? 1 : 0;
    } else {
      if (typeof value !== 'string') return -1;
      slot = this.#find(textHash(value), value);
    }
    return this.#slots[slot * STRIDE] === 0 ? -1 : slot;
  }
}

/**
 * The `[min, max]` of a number column whose values are all integers close together (ids), so that
 * a plain array indexed by value serves as the index; `undefined` otherwise.
 */
function denseRange(data: ColumnData, length: number): { min: number; max: number } | undefined {
  if (!(data instanceof Float64Array)) return undefined;
  let min = Infinity;
  let max = -Infinity;
  for (let r = 0; r < length; r++) {
    const x = data[r]!;
    if (x !== x) continue;
    if ((x | 0) !== x) return undefined; // not an int32 (-0 passes: it is slot 0 - min, as 0 is)
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (min > max) return { min: 0, max: 0 };
  return max - min < DENSE_SLOTS_PER_ROW * length + 16 ? { min, max } : undefined;
}

/** A 32-bit hash of a number; `0` and `-0` hash alike. */
function numberHash(x: number): number {
  let h: number;
  if ((x | 0) === x) h = x | 0;
  else {
    scratch[0] = x;
    h = words[0]! ^ Math.imul(words[1]!, 0x9e3779b1);
  }
  return mix(h);
}

/** A 32-bit FNV-1a hash of a string's code units. */
function textHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix(h);
}

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

const built = new WeakMap<EntityTable, Map<number, ColumnIndex>>();

/** The index of column `column` of a table, built on first use and kept while the table lives. */
export function columnIndex(table: EntityTable, column: number): ColumnIndex {
  let indexes = built.get(table);
  if (!indexes) built.set(table, (indexes = new Map()));
  let index = indexes.get(column);
  if (!index) indexes.set(column, (index = new ColumnIndex(table.data[column]!, table.length)));
  return index;
}

/** Whether a column's index is built already. @internal */
export function hasColumnIndex(table: EntityTable, column: number): boolean {
  return built.get(table)?.has(column) ?? false;
}

/**
 * The rows holding any of `values` in one column, in row order (each row once).
 * @internal
 */
export function rowsHolding(index: ColumnIndex, values: readonly unknown[], length: number): Uint32Array {
  const distinct = values.length > 1 ? [...new Set(values)] : values;
  let total = 0;
  for (const value of distinct) total += index.count(value);
  const out = new Uint32Array(total);
  if (distinct.length === 1 || total * 16 < length) {
    let k = 0;
    for (const value of distinct) for (let r = index.first(value); r >= 0; r = index.next(r)) out[k++] = r;
    return distinct.length === 1 ? out : out.sort();
  }
  // Many rows: mark them, then collect in row order (cheaper than sorting them).
  const marks = new Uint8Array(length);
  for (const value of distinct) for (let r = index.first(value); r >= 0; r = index.next(r)) marks[r] = 1;
  let k = 0;
  for (let r = 0; r < length; r++) if (marks[r] === 1) out[k++] = r;
  return out;
}

/**
 * The rows of `table` whose `columns` hold `values` (decoded cell values, compared with `===`), in
 * row order. The most selective column's index gives the candidates. A `null` value matches nothing.
 */
export function rowsWithKey(
  table: EntityTable,
  columns: readonly number[],
  values: readonly unknown[],
): number[] {
  if (columns.length === 0 || values.some((v) => v === null || v === undefined)) return [];
  let best = 0;
  let bestIndex = columnIndex(table, columns[0]!);
  for (let k = 1; k < columns.length && bestIndex.count(values[best]) > 1; k++) {
    const index = columnIndex(table, columns[k]!);
    if (index.count(values[k]) < bestIndex.count(values[best])) [best, bestIndex] = [k, index];
  }
  const out: number[] = [];
  for (let r = bestIndex.first(values[best]); r >= 0; r = bestIndex.next(r))
    if (columns.every((c, k) => k === best || holds(table.data[c]!, r, values[k]))) out.push(r);
  return out;
}

/** Whether row `r` of column data holds `value` (decoded, `===`). */
function holds(data: ColumnData, r: number, value: unknown): boolean {
  if (data instanceof Float64Array) return data[r] === value;
  if (data instanceof Uint8Array) return data[r] === (value === true ? 1 : value === false ? 0 : -1);
  return data[r] === value;
}
