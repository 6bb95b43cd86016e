/**
 * Whether JSON can hold a value given in code (a run's input): run records keep it as JSON text.
 * @internal
 * @module
 */
import type { Issue } from '../errors/index.js';
import { indexPath, keyPath, subjectOf } from '../json-schema/describe.js';

/**
 * The first place in `value` that JSON cannot hold, as an issue, or `undefined` when it can: a
 * BigInt, or an object that holds itself. Walked as `JSON.stringify` walks (through `toJSON`,
 * skipping functions, symbols and `undefined` as it does), without making the text.
 * @internal
 */
export function jsonProblem(value: unknown, code: string): Issue | undefined {
  const ancestors = new Set<object>();
  const walk = (item: unknown, path: string): Issue | undefined => {
    if (
      item !== null &&
      typeof item === 'object' &&
      typeof (item as { toJSON?: unknown }).toJSON === 'function'
    )
      item = (item as { toJSON(key: string): unknown }).toJSON('');
    if (typeof item === 'bigint')
      return { code, path, message: `${subjectOf(path)} is a BigInt, which JSON cannot hold` };
    if (item === null || typeof item !== 'object') return undefined;
    if (ancestors.has(item))
      return { code, path, message: `${subjectOf(path)} holds itself, which JSON cannot hold` };
    ancestors.add(item);
    try {
      if (Array.isArray(item)) {
        for (let i = 0; i < item.length; i++) {
          const found = walk(item[i], indexPath(path, i));
          if (found) return found;
        }
      } else
        for (const key of Object.keys(item)) {
          const found = walk((item as Record<string, unknown>)[key], keyPath(path, key));
          if (found) return found;
        }
      return undefined;
    } finally {
      ancestors.delete(item);
    }
  };
  try {
    return walk(value, '');
  } catch (error) {
    if (error instanceof RangeError)
      return { code, path: '', message: 'the value is nested too deeply to be held as JSON' };
    throw error;
  }
}
