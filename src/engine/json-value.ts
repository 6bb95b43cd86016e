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
 * skipping functions, symbols and `undefined` as it does), without making the text; the path is
 * only spelled out for the place found.
 * @internal
 */
export function jsonProblem(value: unknown, code: string): Issue | undefined {
  const ancestors = new Set<object>();
  /** The keys and indexes from the root to the value being walked. */
  const trail: (string | number)[] = [];
  const issue = (what: string): Issue => {
    let path = '';
    for (const step of trail) path = typeof step === 'number' ? indexPath(path, step) : keyPath(path, step);
    return { code, path, message: `${subjectOf(path)} ${what}, which JSON cannot hold` };
  };
  const walk = (item: unknown): Issue | undefined => {
    if (typeof item !== 'object' || item === null)
      return typeof item === 'bigint' ? issue('is a BigInt') : undefined;
    if (typeof (item as { toJSON?: unknown }).toJSON === 'function') {
      const json = (item as { toJSON(key: string): unknown }).toJSON('');
      if (json !== item) return walk(json);
    }
    if (ancestors.has(item)) return issue('holds itself');
    ancestors.add(item);
    let found: Issue | undefined;
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length && !found; i++) {
        const child: unknown = item[i];
        if (typeof child === 'object' ? child !== null : typeof child === 'bigint') {
          trail.push(i);
          found = walk(child);
          trail.pop();
        }
      }
    } else
      for (const key in item) {
        if (!Object.hasOwn(item, key)) continue;
        const child: unknown = (item as Record<string, unknown>)[key];
        if (typeof child === 'object' ? child !== null : typeof child === 'bigint') {
          trail.push(key);
          found = walk(child);
          trail.pop();
          if (found) break;
        }
      }
    ancestors.delete(item);
    return found;
  };
  try {
    return walk(value);
  } catch (error) {
    if (error instanceof RangeError)
      return { code, path: '', message: 'the value is nested too deeply to be held as JSON' };
    throw error;
  }
}
