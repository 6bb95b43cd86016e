/**
 * Filters compiled to tight loops: each narrows a list of row indexes in place and returns how many
 * remain. One loop per operator and column encoding keeps every loop monomorphic.
 * @module
 */
import type { FilterOperator } from '../schema/get-entity.js';
import { BOOLEAN_NULL, type ColumnData } from './entity-table.js';
import type { FilterPlan, Scalar } from './plan.js';

/** Keeps the indexes `idx[0..n)` whose rows match, compacted to the front; returns their count. @internal */
export type Refine = (idx: Uint32Array, n: number) => number;

const NONE: Refine = () => 0;

/** Compiles one planned filter against its column's data. @internal */
export function compileFilter(data: ColumnData, filter: FilterPlan): Refine {
  const { operator: op, value } = filter;
  const needsValue = op !== 'IS_NULL' && op !== 'IS_NOT_NULL' && op !== 'IN' && op !== 'NOT_IN';
  // SQL: a comparison with NULL is never true; NOT IN a list holding NULL is never true.
  if (needsValue && value === null) return NONE;
  if (op === 'NOT_IN' && filter.listHasNull) return NONE;
  if (data instanceof Float64Array) return numberFilter(data, op, value as number, filter.list as number[]);
  if (data instanceof Uint8Array) return booleanFilter(data, filter);
  return textFilter(data, op, value as string, filter.list as string[]);
}

function numberFilter(col: Float64Array, op: FilterOperator, v: number, list: number[]): Refine {
  switch (op) {
    case 'EQUALS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (col[i] === v) idx[k++] = i;
        }
        return k;
      };
    case 'NOT_EQUALS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const x = col[i]!;
          if (x === x && x !== v) idx[k++] = i;
        }
        return k;
      };
    case 'GREATER_THAN':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (col[i]! > v) idx[k++] = i;
        }
        return k;
      };
    case 'GREATER_THAN_OR_EQUALS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (col[i]! >= v) idx[k++] = i;
        }
        return k;
      };
    case 'LESS_THAN':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (col[i]! < v) idx[k++] = i;
        }
        return k;
      };
    case 'LESS_THAN_OR_EQUALS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (col[i]! <= v) idx[k++] = i;
        }
        return k;
      };
    case 'IN': {
      const set = new Set(list);
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (set.has(col[i]!)) idx[k++] = i;
        }
        return k;
      };
    }
    case 'NOT_IN': {
      const set = new Set(list);
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const x = col[i]!;
          if (x === x && !set.has(x)) idx[k++] = i;
        }
        return k;
      };
    }
    case 'IS_NULL':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const x = col[i]!;
          if (x !== x) idx[k++] = i;
        }
        return k;
      };
    case 'IS_NOT_NULL':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const x = col[i]!;
          if (x === x) idx[k++] = i;
        }
        return k;
      };
    default:
      return NONE; // text operators are refused on NUMBER columns by the plan
  }
}

function textFilter(col: readonly (string | null)[], op: FilterOperator, v: string, list: string[]): Refine {
  switch (op) {
    case 'EQUALS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (col[i] === v) idx[k++] = i;
        }
        return k;
      };
    case 'NOT_EQUALS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && s !== v) idx[k++] = i;
        }
        return k;
      };
    case 'GREATER_THAN':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && s > v) idx[k++] = i;
        }
        return k;
      };
    case 'GREATER_THAN_OR_EQUALS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && s >= v) idx[k++] = i;
        }
        return k;
      };
    case 'LESS_THAN':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && s < v) idx[k++] = i;
        }
        return k;
      };
    case 'LESS_THAN_OR_EQUALS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && s <= v) idx[k++] = i;
        }
        return k;
      };
    case 'CONTAINS':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && s.includes(v)) idx[k++] = i;
        }
        return k;
      };
    case 'STARTS_WITH':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && s.startsWith(v)) idx[k++] = i;
        }
        return k;
      };
    case 'ENDS_WITH':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && s.endsWith(v)) idx[k++] = i;
        }
        return k;
      };
    case 'IN': {
      const set = new Set<string | null | undefined>(list);
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (set.has(col[i])) idx[k++] = i;
        }
        return k;
      };
    }
    case 'NOT_IN': {
      const set = new Set<string | null | undefined>(list);
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          const s = col[i];
          if (s != null && !set.has(s)) idx[k++] = i;
        }
        return k;
      };
    }
    case 'IS_NULL':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (col[i] == null) idx[k++] = i;
        }
        return k;
      };
    case 'IS_NOT_NULL':
      return (idx, n) => {
        let k = 0;
        for (let j = 0; j < n; j++) {
          const i = idx[j]!;
          if (col[i] != null) idx[k++] = i;
        }
        return k;
      };
  }
}

/**
 * Whether a non-null cell value matches a comparison, as SQL compares two non-null values of one type.
 * Used for `BOOLEAN` columns, where it is evaluated once per possible value. @internal
 */
export function compareMatches(op: FilterOperator, x: Scalar, v: Scalar): boolean {
  switch (op) {
    case 'EQUALS':
      return x === v;
    case 'NOT_EQUALS':
      return x !== v;
    case 'GREATER_THAN':
      return x > v;
    case 'GREATER_THAN_OR_EQUALS':
      return x >= v;
    case 'LESS_THAN':
      return x < v;
    case 'LESS_THAN_OR_EQUALS':
      return x <= v;
    default:
      return false;
  }
}

function booleanFilter(col: Uint8Array, filter: FilterPlan): Refine {
  // Three possible cells (false, true, empty): decide each once, then look the answer up per row.
  const keep = new Uint8Array(3);
  for (const code of [0, 1] as const) {
    const x = code === 1;
    const op = filter.operator;
    let match: boolean;
    if (op === 'IS_NULL') match = false;
    else if (op === 'IS_NOT_NULL') match = true;
    else if (op === 'IN') match = filter.list.includes(x);
    else if (op === 'NOT_IN') match = !filter.list.includes(x);
    else match = compareMatches(op, x, filter.value as boolean);
    keep[code] = match ? 1 : 0;
  }
  keep[BOOLEAN_NULL] = filter.operator === 'IS_NULL' ? 1 : 0;
  return (idx, n) => {
    let k = 0;
    for (let j = 0; j < n; j++) {
      const i = idx[j]!;
      if (keep[col[i]!] === 1) idx[k++] = i;
    }
    return k;
  };
}
