/**
 * Column values of lookups, rollups and formulas, computed over column data.
 * @module
 */
import { BOOLEAN_NULL, cellOf, type ColumnData } from '../query/entity-table.js';
import type { EntityColumn } from '../schema/index.js';
import { MAX_RESULT_LENGTH, type RowExpression } from './expression.js';
import { numberKernel } from './kernel.js';

/** A column of `length` empty cells. */
export function empty(column: EntityColumn, length: number): ColumnData {
  if (column.type === 'NUMBER') return new Float64Array(length).fill(NaN);
  if (column.type === 'BOOLEAN') return new Uint8Array(length).fill(BOOLEAN_NULL);
  return new Array<string | null>(length).fill(null);
}

/** The key of row `i` as one Map key (`undefined` when a key cell is empty). */
export function keyAt(columns: readonly ColumnData[], i: number): unknown {
  if (columns.length === 1) {
    const v = cellOf(columns[0]!, i);
    return v === null ? undefined : v;
  }
  const parts: unknown[] = [];
  for (const data of columns) {
    const v = cellOf(data, i);
    if (v === null) return undefined;
    parts.push(v);
  }
  return JSON.stringify(parts);
}

/** A lookup: for each of `n` rows, the value of the first target row (seen by the principal) with its key. */
export function lookupValues(
  column: EntityColumn,
  n: number,
  ownKeys: readonly ColumnData[],
  targetKeys: readonly ColumnData[],
  targetLength: number,
  visible: Uint8Array | undefined,
  values: ColumnData,
): ColumnData {
  const rowOf = new Map<unknown, number>();
  for (let i = 0; i < targetLength; i++) {
    if (visible && visible[i] !== 1) continue;
    const key = keyAt(targetKeys, i);
    if (key !== undefined && !rowOf.has(key)) rowOf.set(key, i);
  }
  const out = empty(column, n);
  for (let i = 0; i < n; i++) {
    const key = keyAt(ownKeys, i);
    const row = key === undefined ? undefined : rowOf.get(key);
    if (row !== undefined) put(out, i, cellOf(values, row));
  }
  return out;
}

/** A rollup: for each of `n` rows, the count, sum, min, max or mean over the source rows `rows` with its key. */
export function rollupValues(
  column: EntityColumn,
  n: number,
  ownKeys: readonly ColumnData[],
  sourceKeys: readonly ColumnData[],
  rows: { idx: Uint32Array; n: number },
  values: ColumnData | undefined,
): ColumnData {
  const rollup = column.rollup!;
  const targets = new Map<unknown, number[] | number>();
  for (let i = 0; i < n; i++) {
    const key = keyAt(ownKeys, i);
    if (key === undefined) continue;
    const known = targets.get(key);
    if (known === undefined) targets.set(key, i);
    else if (typeof known === 'number') targets.set(key, [known, i]);
    else known.push(i);
  }
  const count = new Float64Array(n);
  const sum = new Float64Array(n);
  const best: unknown[] = new Array<unknown>(n).fill(null);
  const fn = rollup.function;
  const numbers = values instanceof Float64Array ? values : undefined;
  const add = (t: number, r: number) => {
    if (fn === 'count' && !values) {
      count[t]!++;
      return;
    }
    const v = numbers ? numbers[r]! : cellOf(values!, r);
    if (v === null || v !== v) return;
    count[t]!++;
    if (fn === 'sum' || fn === 'avg') sum[t]! += v as number;
    else if (fn === 'min' || fn === 'max') {
      const b = best[t];
      if (b === null || (fn === 'min' ? (v as number) < (b as number) : (v as number) > (b as number)))
        best[t] = v;
    }
  };
  for (let j = 0; j < rows.n; j++) {
    const r = rows.idx[j]!;
    const key = keyAt(sourceKeys, r);
    if (key === undefined) continue;
    const t = targets.get(key);
    if (t === undefined) continue;
    if (typeof t === 'number') add(t, r);
    else for (const target of t) add(target, r);
  }
  const out = empty(column, n);
  for (let i = 0; i < n; i++) {
    if (fn === 'count') put(out, i, count[i]!);
    else if (fn === 'sum') put(out, i, sum[i]!);
    else if (fn === 'avg') put(out, i, count[i]! > 0 ? sum[i]! / count[i]! : null);
    else put(out, i, best[i]);
  }
  return out;
}

/** A formula's value for each of `n` rows; empty where it needs an empty cell or fails. */
export function formulaValues(
  column: EntityColumn,
  n: number,
  expression: RowExpression,
  reads: readonly (readonly [string, ColumnData])[],
): ColumnData {
  const out = empty(column, n);
  if (out instanceof Float64Array) {
    const kernel = numberKernel(expression.ast, (name) => {
      const data = reads.find(([r]) => r === name)?.[1];
      return data instanceof Float64Array ? data : undefined;
    });
    if (kernel) {
      for (let i = 0; i < n; i++) {
        const x = kernel(i);
        out[i] = x - x === 0 ? x : NaN;
      }
      return out;
    }
  }
  const values: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    for (const [name, data] of reads) values[name] = cellOf(data, i);
    const result = expression.evaluate(values);
    if (result && 'value' in result) put(out, i, cellValue(column, result.value));
  }
  return out;
}

/** A formula's value as its column holds it, or null when it has none (not finite, too long). */
function cellValue(column: EntityColumn, value: unknown): unknown {
  switch (column.type) {
    case 'NUMBER':
      return typeof value === 'number' && Number.isFinite(value) ? value : null;
    case 'STRING':
      return typeof value === 'string' && value.length <= MAX_RESULT_LENGTH ? value : null;
    case 'BOOLEAN':
      return typeof value === 'boolean' ? value : null;
    case 'DATE':
    case 'DATETIME':
      if (!(value instanceof Date) || Number.isNaN(value.getTime())) return null;
      return column.type === 'DATE' ? value.toISOString().slice(0, 10) : value.toISOString();
  }
}

/** Writes a decoded value into column data. */
function put(data: ColumnData, i: number, value: unknown): void {
  if (data instanceof Float64Array) data[i] = typeof value === 'number' ? value : NaN;
  else if (data instanceof Uint8Array) data[i] = value === true ? 1 : value === false ? 0 : BOOLEAN_NULL;
  else data[i] = typeof value === 'string' ? value : null;
}
