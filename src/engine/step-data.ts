import { StepwireError } from '../errors/index.js';
import type { PathSegment } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { readPath, type Reference } from './references.js';
import type { PlannedCondition } from './plan-types.js';

/** Whether the value at `path` equals `expected` (a missing path compares as null). @internal */
export function conditionHolds(root: unknown, path: readonly PathSegment[], expected: unknown): boolean {
  const found = readPath(root, path);
  return jsonEqual(found.ok ? (found.value ?? null) : null, expected ?? null);
}

/**
 * Whether an expression condition holds, its roots' values read with `value` (a skipped step's as
 * null). @internal
 */
export function expressionHolds(condition: PlannedCondition, value: (ref: Reference) => unknown): boolean {
  const values: Record<string, unknown> = {};
  for (const ref of condition.references ?? []) values[ref.root] = value(ref);
  return condition.expression!.holds(values);
}

/** Equality of JSON values: objects by their keys regardless of order. @internal */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => jsonEqual(item, other[i]));
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  return (
    keysA.length === keysB.length &&
    keysA.every(
      (k) =>
        Object.prototype.hasOwnProperty.call(b, k) &&
        jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

/** Places `value` at `path` inside a copy of `data`; an empty path merges an object into the root. @internal */
export function placeAt(data: unknown, path: readonly PathSegment[], value: unknown): unknown {
  if (path.length === 0) {
    if (isPlainObject(value) && (isPlainObject(data) || data === undefined || data === null)) {
      const merged: Record<string, unknown> = { ...(data as Record<string, unknown> | null) };
      for (const [k, v] of Object.entries(value)) setOwn(merged, k, v);
      return merged;
    }
    return value;
  }
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const array = Array.isArray(data) ? data.slice() : [];
    array[head] = placeAt(array[head], rest, value);
    return array;
  }
  const object: Record<string, unknown> = isPlainObject(data) ? { ...data } : {};
  setOwn(object, head!, placeAt(object[head!], rest, value));
  return object;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

/** Fails a wire whose source path does not exist. @internal */
export function missingWire(source: string, path: readonly PathSegment[]): never {
  throw new StepwireError(
    'reference_error',
    `wire from "${source}" reads "${path.join('.')}", which does not exist in its output`,
  );
}

/** Fails a wire without `target_data_path` whose value is not an object to merge into the step's data. @internal */
export function unmergeableWire(source: string, value: unknown): never {
  const kind = Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  throw new StepwireError(
    'invalid_input',
    `wire from "${source}" has no target_data_path, so its value is merged into the step's data, which takes an object; it is ${kind} (give the wire a target_data_path)`,
  );
}
