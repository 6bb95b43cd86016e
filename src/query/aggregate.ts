/**
 * Grouping and aggregates of the entity read (`operation.group_by`, `operation.aggregates`): the rows
 * a read's filters kept are numbered by group (groups in the order their first row comes in the
 * sheet), each aggregate is one pass over them into per-group typed arrays, and the groups are then
 * ordered and paged as rows are.
 * @module
 */
import type { Column } from '../schema/data-table.js';
import type { EntityColumn } from '../schema/entity.js';
import { BOOLEAN_NULL, cellOf, type ColumnData, type EntityTable } from './entity-table.js';
import { compileOrder, firstRows } from './order.js';
import type { AggregatePlan, GroupPlan } from './plan.js';

/** The groups of some rows: `ids[j]` is the group of the `j`-th row, `first[g]` the first row of group `g`. */
interface Groups {
  ids: Int32Array;
  first: number[];
}

/** Above this many combinations of two columns' groups, combining them goes through a `Map`. */
const DENSE_PAIRS = 1 << 20;

/**
 * The groups of rows `idx[0..n)` by one column's values: a `Map` by value for numbers (NaN, the empty
 * cell, is one group; 0 and -0 are one) and text (`null` one group), the code for booleans.
 */
function groupsOf(data: ColumnData, idx: Uint32Array, n: number): Groups {
  const ids = new Int32Array(n);
  const first: number[] = [];
  if (data instanceof Uint8Array) {
    const slot = [-1, -1, -1];
    for (let j = 0; j < n; j++) {
      const r = idx[j]!;
      const code = data[r]!;
      let g = slot[code]!;
      if (g < 0) {
        g = slot[code] = first.length;
        first.push(r);
      }
      ids[j] = g;
    }
    return { ids, first };
  }
  if (data instanceof Float64Array) {
    const seen = new Map<number, number>();
    for (let j = 0; j < n; j++) {
      const r = idx[j]!;
      const value = data[r]!;
      let g = seen.get(value);
      if (g === undefined) {
        g = first.length;
        seen.set(value, g);
        first.push(r);
      }
      ids[j] = g;
    }
    return { ids, first };
  }
  const seen = new Map<string | null, number>();
  for (let j = 0; j < n; j++) {
    const r = idx[j]!;
    const value = data[r] ?? null;
    let g = seen.get(value);
    if (g === undefined) {
      g = first.length;
      seen.set(value, g);
      first.push(r);
    }
    ids[j] = g;
  }
  return { ids, first };
}

/**
 * The groups by two groupings together (rows in the same group of both): the pair `a * kb + b` looked
 * up in a dense array when there are few pairs, else in a `Map` (at most n² pairs: exact as a double).
 */
function combine(a: Groups, b: Groups, idx: Uint32Array, n: number): Groups {
  const kb = b.first.length;
  const pairs = a.first.length * kb;
  const ids = new Int32Array(n);
  const first: number[] = [];
  if (pairs <= DENSE_PAIRS) {
    const slot = new Int32Array(pairs).fill(-1);
    for (let j = 0; j < n; j++) {
      const pair = a.ids[j]! * kb + b.ids[j]!;
      let g = slot[pair]!;
      if (g < 0) {
        g = slot[pair] = first.length;
        first.push(idx[j]!);
      }
      ids[j] = g;
    }
    return { ids, first };
  }
  const seen = new Map<number, number>();
  for (let j = 0; j < n; j++) {
    const pair = a.ids[j]! * kb + b.ids[j]!;
    let g = seen.get(pair);
    if (g === undefined) {
      g = first.length;
      seen.set(pair, g);
      first.push(idx[j]!);
    }
    ids[j] = g;
  }
  return { ids, first };
}

/** The values of column data at the given rows, in the same encoding. */
function pick(data: ColumnData, rows: readonly number[]): ColumnData {
  const k = rows.length;
  if (data instanceof Float64Array) {
    const out = new Float64Array(k);
    for (let g = 0; g < k; g++) out[g] = data[rows[g]!]!;
    return out;
  }
  if (data instanceof Uint8Array) {
    const out = new Uint8Array(k);
    for (let g = 0; g < k; g++) out[g] = data[rows[g]!]!;
    return out;
  }
  const out = new Array<string | null>(k);
  for (let g = 0; g < k; g++) out[g] = data[rows[g]!] ?? null;
  return out;
}

/**
 * One aggregate per group, in the encoding of its output column: a `Float64Array` (NaN for an empty
 * result) for `count`, `sum` and `avg`, the column's own encoding for `min` and `max`. Empty cells are
 * skipped; a group whose cells are all empty has `count` 0 and every other aggregate empty.
 */
function aggregate(
  plan: AggregatePlan,
  data: ColumnData | undefined,
  groups: Groups,
  idx: Uint32Array,
  n: number,
): ColumnData {
  const k = groups.first.length;
  const ids = groups.ids;
  if (plan.fn === 'count') {
    const count = new Float64Array(k);
    // One group (no group columns): it counts every row.
    if (!data && k === 1) count[0] = n;
    else if (!data) for (let j = 0; j < n; j++) count[ids[j]!]!++;
    else if (data instanceof Float64Array)
      for (let j = 0; j < n; j++) {
        const x = data[idx[j]!]!;
        if (x === x) count[ids[j]!]!++;
      }
    else if (data instanceof Uint8Array)
      for (let j = 0; j < n; j++) {
        if (data[idx[j]!] !== BOOLEAN_NULL) count[ids[j]!]!++;
      }
    else
      for (let j = 0; j < n; j++) {
        if (data[idx[j]!] != null) count[ids[j]!]!++;
      }
    return count;
  }
  if (data instanceof Float64Array) {
    const out = new Float64Array(k).fill(NaN);
    if (plan.fn === 'sum' || plan.fn === 'avg') {
      const count = new Uint32Array(k);
      const sum = new Float64Array(k);
      for (let j = 0; j < n; j++) {
        const x = data[idx[j]!]!;
        if (x !== x) continue;
        const g = ids[j]!;
        sum[g]! += x;
        count[g]!++;
      }
      for (let g = 0; g < k; g++)
        if (count[g]! > 0) out[g] = plan.fn === 'sum' ? sum[g]! : sum[g]! / count[g]!;
      return out;
    }
    const max = plan.fn === 'max';
    for (let j = 0; j < n; j++) {
      const x = data[idx[j]!]!;
      if (x !== x) continue;
      const g = ids[j]!;
      const best = out[g]!;
      // NaN (nothing yet) fails both comparisons.
      if (!(max ? best >= x : best <= x)) out[g] = x;
    }
    return out;
  }
  if (data instanceof Uint8Array) {
    const out = new Uint8Array(k).fill(BOOLEAN_NULL);
    const max = plan.fn === 'max';
    for (let j = 0; j < n; j++) {
      const x = data[idx[j]!]!;
      if (x === BOOLEAN_NULL) continue;
      const g = ids[j]!;
      const best = out[g]!;
      if (best === BOOLEAN_NULL || (max ? x > best : x < best)) out[g] = x;
    }
    return out;
  }
  const out = new Array<string | null>(k).fill(null);
  const max = plan.fn === 'max';
  for (let j = 0; j < n; j++) {
    const x = data![idx[j]!];
    if (x == null) continue;
    const g = ids[j]!;
    const best = out[g];
    if (best == null || (max ? x > best : x < best)) out[g] = x;
  }
  return out;
}

/** The output column of an aggregate: a plain number for `count`, `sum`, `avg`; the column's own for `min`, `max`. */
function aggregateColumn(
  plan: AggregatePlan,
  columns: readonly EntityColumn[],
  outputColumn: (name: string, column: Pick<EntityColumn, 'type' | 'number'>) => Column,
): Column {
  if (plan.fn === 'min' || plan.fn === 'max') return outputColumn(plan.name, columns[plan.column]!);
  return outputColumn(plan.name, { type: 'NUMBER' });
}

/** Zeros, shared: the group of every row when there are no group columns (only ever read). */
let ZEROS = new Int32Array(0);

/** `n` zeros, from the shared array (grown as needed). */
function zeros(n: number): Int32Array {
  if (ZEROS.length < n) ZEROS = new Int32Array(Math.max(n, 2 * ZEROS.length));
  return ZEROS.subarray(0, n);
}

/**
 * The page of an aggregate read over rows `idx[0..n)` (ascending): the group columns, then one column
 * per aggregate. Without group columns there is one group, even over no rows. Groups come in the
 * order of `group.order`, ties (and all of them without an order) in the order of their first row.
 * @internal
 */
export function groupedPage(
  table: EntityTable,
  group: GroupPlan,
  idx: Uint32Array,
  n: number,
  page: { pageSize: number; pageNumber: number },
  outputColumn: (name: string, column: Pick<EntityColumn, 'type' | 'number'>) => Column,
): { columns: Column[]; rows: unknown[][] } {
  let groups: Groups | undefined;
  for (const key of group.by) {
    const next = groupsOf(table.data[key.column]!, idx, n);
    groups = groups ? combine(groups, next, idx, n) : next;
  }
  // No group columns: every row in group 0, which exists even when there are no rows.
  groups ??= { ids: zeros(n), first: [n > 0 ? (idx[0] ?? 0) : -1] };
  const first = groups.first;
  const outputs: ColumnData[] = [
    ...group.by.map((key) => pick(table.data[key.column]!, first)),
    ...group.aggregates.map((plan) =>
      aggregate(plan, plan.column >= 0 ? table.data[plan.column] : undefined, groups, idx, n),
    ),
  ];
  const columns = [
    ...group.by.map((key) => outputColumn(key.name, table.columns[key.column]!)),
    ...group.aggregates.map((plan) => aggregateColumn(plan, table.columns, outputColumn)),
  ];
  const k = first.length;
  const offset = (page.pageNumber - 1) * page.pageSize;
  const end = Math.min(offset + page.pageSize, k);
  if (offset >= k) return { columns, rows: [] };
  let order: Uint32Array | undefined;
  if (group.order.length > 0) {
    const all = new Uint32Array(k);
    for (let g = 0; g < k; g++) all[g] = g;
    const compare = compileOrder(
      group.order.map((key) => ({ data: outputs[key.output]!, descending: key.descending })),
    );
    order = firstRows(all, k, end, compare).subarray(offset);
  }
  const rows: unknown[][] = new Array<unknown[]>(end - offset);
  for (let r = 0; r < rows.length; r++) {
    const g = order ? order[r]! : offset + r;
    const row = new Array<unknown>(outputs.length);
    for (let c = 0; c < outputs.length; c++) row[c] = cellOf(outputs[c]!, g);
    rows[r] = row;
  }
  return { columns, rows };
}
