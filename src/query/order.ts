/**
 * Ordering of row indexes: comparators per column encoding (nulls last in both directions, ties
 * broken by row index so every sort is stable), and a bounded heap that keeps only the first `k` rows.
 * @module
 */
import { BOOLEAN_NULL, type ColumnData } from './entity-table.js';

/** Compares two row indexes; negative when row `a` comes first. @internal */
export type RowComparator = (a: number, b: number) => number;

function keyComparator(data: ColumnData, descending: boolean): RowComparator {
  const sign = descending ? -1 : 1;
  if (data instanceof Float64Array) {
    return (a, b) => {
      const x = data[a]!;
      const y = data[b]!;
      if (x < y) return -sign;
      if (x > y) return sign;
      if (x === y) return 0;
      return x !== x ? (y !== y ? 0 : 1) : -1; // NaN is an empty cell: last
    };
  }
  if (data instanceof Uint8Array) {
    // Codes 0 (false) < 1 (true); 2 (empty) last either way.
    return (a, b) => {
      const x = data[a]!;
      const y = data[b]!;
      if (x === y) return 0;
      if (x === BOOLEAN_NULL) return 1;
      if (y === BOOLEAN_NULL) return -1;
      return x < y ? -sign : sign;
    };
  }
  return (a, b) => {
    const x = data[a];
    const y = data[b];
    if (x === y) return 0;
    if (x == null) return 1;
    if (y == null) return -1;
    return x < y ? -sign : sign;
  };
}

/** A comparator over every key in sequence, then the row index. @internal */
export function compileOrder(keys: readonly { data: ColumnData; descending: boolean }[]): RowComparator {
  const parts = keys.map((key) => keyComparator(key.data, key.descending));
  if (parts.length === 1) {
    const first = parts[0]!;
    return (a, b) => first(a, b) || a - b;
  }
  if (parts.length === 2) {
    const first = parts[0]!;
    const second = parts[1]!;
    return (a, b) => first(a, b) || second(a, b) || a - b;
  }
  return (a, b) => {
    for (let p = 0; p < parts.length; p++) {
      const d = parts[p]!(a, b);
      if (d !== 0) return d;
    }
    return a - b;
  };
}

/**
 * The first `k` of the rows `idx[0..n)` in comparator order, sorted. With `k < n` a bounded max-heap
 * keeps the best `k` seen so far (O(n log k)); otherwise all `n` are sorted.
 * @internal
 */
export function firstRows(idx: Uint32Array, n: number, k: number, compare: RowComparator): Uint32Array {
  if (k >= n) return idx.slice(0, n).sort(compare);
  const heap = new Uint32Array(k);
  let size = 0;
  for (let j = 0; j < n; j++) {
    const row = idx[j]!;
    if (size < k) {
      // Sift up: the root holds the row that comes last among those kept.
      let at = size++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        const p = heap[parent]!;
        if (compare(p, row) >= 0) break;
        heap[at] = p;
        at = parent;
      }
      heap[at] = row;
    } else if (compare(row, heap[0]!) < 0) {
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        if (left >= k) break;
        const right = left + 1;
        let child = left;
        if (right < k && compare(heap[right]!, heap[left]!) > 0) child = right;
        const c = heap[child]!;
        if (compare(c, row) <= 0) break;
        heap[at] = c;
        at = child;
      }
      heap[at] = row;
    }
  }
  return heap.sort(compare);
}
