/**
 * Whether JSON can hold a value given in code (a run's input, an action's output): run records keep
 * it as JSON text.
 * @internal
 * @module
 */
import type { Issue } from '../errors/index.js';
import { indexPath, keyPath, subjectOf } from '../json-schema/describe.js';
import { setOwn } from '../schema/own.js';
import type { RunError } from './record.js';

/**
 * The first place in `value` that JSON cannot hold, as an issue, or `undefined` when it can: a
 * BigInt, or an object that holds itself; or an issue `too_large` when its JSON would take more
 * than `maxChars` characters (counted as `JSON.stringify` repeats an object held in several places,
 * each object walked once). Walked as `JSON.stringify` walks (through `toJSON`,
 * skipping functions, symbols and `undefined` as it does), without making the text; the path is
 * only spelled out for the place found.
 * @internal
 */
export function jsonProblem(
  value: unknown,
  code: string,
  maxChars = MAX_OUTPUT_JSON_CHARS,
): Issue | undefined {
  // Most values are small trees of plain data (a step's output of a few fields): counted at once,
  // with nothing allocated. Anything else (larger, shared, a BigInt, a toJSON) is walked in full.
  treeBudget = SMALL_TREE_OBJECTS;
  const chars = treeChars(value);
  if (chars >= 0 && chars <= maxChars) return undefined;
  const walker = new JsonWalker(code, maxChars);
  try {
    return walker.walk(value);
  } catch (error) {
    if (error instanceof RangeError)
      return { code, path: '', message: 'the value is nested too deeply to be held as JSON' };
    throw error;
  }
}

/** One walk of {@link jsonProblem}: a class, so a call allocates one object and no closures. */
class JsonWalker {
  /** Characters of JSON counted so far. */
  #chars = 0;
  /** The objects from the root to the one being walked (made when first needed). */
  #ancestors: Set<object> | undefined;
  /**
   * Objects holding objects walked already, by the characters of their JSON: an object held in
   * several places is walked once, but counts each time, as JSON repeats it (a value that doubles at
   * every step of a chain would otherwise cost 2^n to walk, and to store).
   */
  #sizes: Map<object, number> | undefined;
  /** The keys and indexes from the root to the value being walked. */
  readonly #trail: (string | number)[] = [];

  constructor(
    readonly code: string,
    readonly maxChars: number,
  ) {}

  walk(item: unknown): Issue | undefined {
    if (typeof item !== 'object' || item === null)
      return typeof item === 'bigint' ? this.#issue('is a BigInt') : this.#count(plainChars(item));
    if (typeof (item as { toJSON?: unknown }).toJSON === 'function') {
      const json = (item as { toJSON(key: string): unknown }).toJSON('');
      if (json !== item) return this.walk(json);
    }
    const known = this.#sizes?.get(item);
    if (known !== undefined) return this.#count(known);
    if (this.#ancestors?.has(item)) return this.#issue('holds itself');
    const before = this.#chars;
    let found: Issue | undefined;
    // Only an object holding objects is kept track of (a row of cells is walked again, at its cost).
    let nested = false;
    this.#chars += 2;
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length && !found; i++) {
        const child: unknown = item[i];
        if (typeof child === 'object' ? child !== null : typeof child === 'bigint') {
          if (!nested) (this.#ancestors ??= new Set()).add(item);
          nested = true;
          found = this.#into(child, i);
        } else this.#chars += plainChars(child);
      }
    } else
      for (const key in item) {
        if (!Object.hasOwn(item, key)) continue;
        const child: unknown = (item as Record<string, unknown>)[key];
        this.#chars += key.length + 3;
        if (typeof child === 'object' ? child !== null : typeof child === 'bigint') {
          if (!nested) (this.#ancestors ??= new Set()).add(item);
          nested = true;
          found = this.#into(child, key);
          if (found) break;
        } else this.#chars += plainChars(child);
      }
    if (nested) {
      this.#ancestors!.delete(item);
      (this.#sizes ??= new Map()).set(item, this.#chars - before);
    }
    return found ?? this.#count(0);
  }

  #into(child: unknown, step: string | number): Issue | undefined {
    this.#trail.push(step);
    const found = this.walk(child);
    this.#trail.pop();
    return found;
  }

  /** Counts `n` characters of JSON; an issue once there are more than `maxChars`. */
  #count(n: number): Issue | undefined {
    this.#chars += n;
    if (this.#chars <= this.maxChars) return undefined;
    return {
      code: 'too_large',
      path: '',
      message: `it would take more than ${this.maxChars / MIB} MiB of JSON`,
    };
  }

  #issue(what: string): Issue {
    let path = '';
    for (const step of this.#trail)
      path = typeof step === 'number' ? indexPath(path, step) : keyPath(path, step);
    return { code: this.code, path, message: `${subjectOf(path)} ${what}, which JSON cannot hold` };
  }
}

/** Objects and arrays {@link treeChars} counts before it leaves a value to the full walk. */
const SMALL_TREE_OBJECTS = 32;
/** Objects {@link treeChars} may still count in this call (one counter, so the count makes no closure). */
let treeBudget = 0;

/**
 * The characters of JSON a small tree of plain values takes, counted as {@link JsonWalker} counts
 * them; -1 when the tree holds more than {@link SMALL_TREE_OBJECTS} objects (an object held twice,
 * or one holding itself, counts each time it is met, so it runs past the budget), a BigInt or a
 * `toJSON`, which the full walk decides.
 */
function treeChars(item: unknown): number {
  if (typeof item !== 'object' || item === null) return typeof item === 'bigint' ? -1 : plainChars(item);
  if (--treeBudget < 0 || typeof (item as { toJSON?: unknown }).toJSON === 'function') return -1;
  let chars = 2;
  if (Array.isArray(item)) {
    for (let i = 0; i < item.length; i++) {
      const n = treeChars(item[i]);
      if (n < 0) return -1;
      chars += n;
    }
    return chars;
  }
  for (const key in item) {
    if (!Object.hasOwn(item, key)) continue;
    const n = treeChars((item as Record<string, unknown>)[key]);
    if (n < 0) return -1;
    chars += key.length + 3 + n;
  }
  return chars;
}

/**
 * A copy of a JSON value (a definition's `default_data`): objects and arrays copied, the rest as
 * it is. A key `__proto__` is copied as an own property. @internal
 */
export function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(copy, key, copyJson((value as Record<string, unknown>)[key]));
  return copy as T;
}

/** Characters a value that is no object takes in JSON, about (a number's at most 24). */
function plainChars(item: unknown): number {
  return typeof item === 'string' ? item.length + 3 : 9;
}

const MIB = 1024 * 1024;

/**
 * The most characters of JSON a step's (or an item's) output may take: its run record keeps it as
 * JSON text, and JSON text has a size limit (about 512 Mi characters in V8) the whole record must
 * stay under. @internal
 */
export const MAX_OUTPUT_JSON_CHARS = 16 * MIB;

/**
 * Why JSON cannot hold a step's (or an item's) output, as the step's `invalid_output` error, or
 * `undefined` when it can. A run record could not store the output (nor a durable commit, which
 * would leave the job to be delivered again until the step counted as lost).
 * @internal
 */
export function outputProblem(output: unknown): RunError | undefined {
  let reason: string;
  try {
    const issue = jsonProblem(output, 'invalid_output');
    if (!issue) return undefined;
    // The issue names its place by its last key ("n is a BigInt"): name it by its whole path.
    const subject = subjectOf(issue.path);
    reason = issue.message.startsWith(`${subject} `)
      ? `${issue.path || 'the output'}${issue.message.slice(subject.length)}`
      : issue.message;
  } catch (error) {
    // A `toJSON` that throws: JSON.stringify would throw the same when the record is saved.
    reason = error instanceof Error ? `${error.name}: ${error.message}` : 'its toJSON threw';
  }
  return { code: 'invalid_output', message: `its output cannot be stored as JSON (${reason})` };
}

/** Deepest nesting of objects and arrays a definition (a workflow, a trigger) may hold. */
export const MAX_DEFINITION_DEPTH = 512;

/**
 * The first place in a definition nested deeper than `max` objects and arrays, as an issue naming
 * where it starts, or `undefined`. Walked without recursion, so any depth is told, never a stack
 * overflow (planning and storing a definition recurse through it).
 * @internal
 */
export function depthProblem(value: unknown, max = MAX_DEFINITION_DEPTH): Issue | undefined {
  /** Each value still to walk, its depth, and the entry it hangs from (for the path). */
  interface Entry {
    value: unknown;
    depth: number;
    key: string | number | undefined;
    parent: Entry | undefined;
  }
  const stack: Entry[] = [{ value, depth: 0, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const item = entry.value;
    if (typeof item !== 'object' || item === null) continue;
    if (entry.depth === max) {
      const trail: (string | number)[] = [];
      for (let at: Entry | undefined = entry; at?.key !== undefined; at = at.parent) trail.push(at.key);
      // The first few keys say where; the hundreds after them, all alike as a rule, would not.
      let path = '';
      for (const step of trail.reverse().slice(0, 4))
        path = typeof step === 'number' ? indexPath(path, step) : keyPath(path, step);
      return {
        code: 'too_deep',
        path,
        message: `${subjectOf(path)} is nested more than ${max} levels deep`,
      };
    }
    const depth = entry.depth + 1;
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push({ value: item[i], depth, key: i, parent: entry });
    } else
      for (const key of Object.keys(item).reverse())
        stack.push({ value: (item as Record<string, unknown>)[key], depth, key, parent: entry });
  }
  return undefined;
}
