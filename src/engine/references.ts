import { LimitError, StepwireError } from '../errors/index.js';
import { jsonProblem } from './json-value.js';
import { findReferences, isWholeReference, parsePath, type PathSegment } from '../schema/index.js';
import { setOwn } from '../schema/own.js';

/** A reference failed to resolve; the step that holds it fails. */
export class StepReferenceError extends StepwireError {
  /** Always `"StepReferenceError"`, so guards also work across package copies. */
  override name = 'StepReferenceError';
  constructor(
    message: string,
    /** The reference as written, e.g. `{{read.body.table}}`. */
    readonly reference: string,
  ) {
    super('reference_error', message);
  }
}

/** A parsed reference: its root (a step or the input) and the path inside it. @internal */
export interface Reference {
  text: string;
  root: string;
  path: PathSegment[];
  /**
   * For a reference to the input: how many leading segments of `path` the input schema declares
   * (see `declaredDepth`). One of them that the input leaves out resolves to null.
   */
  declared?: number;
  /** For a reference to a step: the step's index in the plan, so a run finds its output without a look-up by name. */
  step?: number;
}

/** Looks up the value of a root (a step's output or the workflow input). @internal */
export interface Scope {
  /**
   * The value of `root`, `undefined` when there is none yet; `step` is the index of the step
   * `root` names, when the planner knows it.
   */
  value(root: string, step?: number): unknown;
  /** True when `root` is a step that was skipped (references into it resolve to null). */
  skipped(root: string): boolean;
}

/** A compiled value: resolves references against a scope. @internal */
export type Resolver = (scope: Scope) => unknown;

/** Parses the text between `{{` and `}}`. Returns a message when it is not a plain path. @internal */
export function parseReference(expression: string, text: string): Reference | string {
  const parsed = parsePath(expression);
  if (!parsed.ok) return parsed.message;
  const [root, ...path] = parsed.segments;
  if (typeof root !== 'string') return `reference ${text} must start with a step name or the input name`;
  return { text, root, path };
}

/**
 * Reads `path` inside `value`. A last segment `length` of an array or string gives its length. When
 * the path does not exist, `at` is the first segment that does not, and `missing` says whether that
 * segment is a property an object leaves out (rather than an index past the end, or a field of a
 * value that has none). @internal
 */
export function readPath(
  value: unknown,
  path: readonly PathSegment[],
): { ok: true; value: unknown } | { ok: false; at: number; missing: boolean } {
  let current = value;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    if (current === null || current === undefined) return { ok: false, at: i, missing: false };
    if (segment === 'length' && (Array.isArray(current) || typeof current === 'string')) {
      current = current.length;
      continue;
    }
    if (Array.isArray(current)) {
      const index = typeof segment === 'number' ? segment : /^\d+$/.test(segment) ? Number(segment) : -1;
      if (index < 0 || index >= current.length) return { ok: false, at: i, missing: false };
      current = current[index];
    } else if (typeof current === 'object') {
      const key = String(segment);
      if (!Object.prototype.hasOwnProperty.call(current, key)) return { ok: false, at: i, missing: true };
      current = (current as Record<string, unknown>)[key];
    } else {
      return { ok: false, at: i, missing: false };
    }
  }
  return { ok: true, value: current };
}

/**
 * Resolves one reference against a scope. A reference into a skipped step, or to an input property
 * the input schema declares and the input leaves out, resolves to null.
 * @throws {@link StepReferenceError} when its path does not exist. @internal
 */
export function resolveReference(ref: Reference, scope: Scope): unknown {
  const root = scope.value(ref.root, ref.step);
  if (root === null && scope.skipped(ref.root)) return null;
  const found = readPath(root, ref.path);
  if (found.ok) return found.value === undefined ? null : found.value;
  if (scope.skipped(ref.root)) return null;
  if (found.missing && found.at < (ref.declared ?? 0)) return null;
  const upTo = [ref.root, ...ref.path.slice(0, found.at + 1)]
    .map((s) => (typeof s === 'number' ? `[${s}]` : s))
    .join('.')
    .replace(/\.\[/g, '[');
  throw new StepReferenceError(
    `reference ${ref.text} does not resolve: "${upTo}" does not exist in the output of "${ref.root}"`,
    ref.text,
  );
}

/** A compiled value: its resolver, and whether it holds no reference at all. @internal */
export interface Compiled {
  resolve: Resolver;
  constant: boolean;
}

/**
 * Compiles a value holding `{{...}}` references into a resolver, once per definition. Strings that
 * are exactly one reference keep the referenced value's type; references inside longer text are
 * interpolated as text. Parts without references are returned as they are, not copied.
 * @internal
 */
export function compileValue(
  value: unknown,
  onReference: (ref: Reference) => void,
  onError: (message: string) => void,
): Compiled {
  const constant: Compiled = { resolve: () => value, constant: true };
  if (typeof value === 'string') {
    const matches = findReferences(value);
    if (matches.length === 0) return constant;
    const refs: Reference[] = [];
    for (const match of matches) {
      const parsed = parseReference(match.expression, value.slice(match.start, match.end));
      if (typeof parsed === 'string') {
        onError(parsed);
        return constant;
      }
      onReference(parsed);
      refs.push(parsed);
    }
    if (isWholeReference(value)) {
      const ref = refs[0]!;
      const [segment, ...rest] = ref.path;
      if (typeof segment !== 'string' || segment === 'length' || rest.length > 0)
        return { resolve: (scope) => resolveReference(ref, scope), constant: false };
      // The usual reference, `{{step.field}}`: read straight from a plain object, else as any other.
      // (The planner has named the step by then: its index is read here once, not at every run.)
      const { root: name, step } = ref;
      return {
        resolve: (scope) => {
          const root = scope.value(name, step);
          if (
            typeof root === 'object' &&
            root !== null &&
            !Array.isArray(root) &&
            Object.hasOwn(root, segment)
          ) {
            const found = (root as Record<string, unknown>)[segment];
            return found === undefined ? null : found;
          }
          return resolveReference(ref, scope);
        },
        constant: false,
      };
    }
    const pieces: (string | Reference)[] = [];
    let last = 0;
    matches.forEach((match, i) => {
      pieces.push(value.slice(last, match.start), refs[i]!);
      last = match.end;
    });
    pieces.push(value.slice(last));
    return {
      resolve: (scope) => {
        const texts = pieces.map((piece) =>
          typeof piece === 'string' ? piece : toText(resolveReference(piece, scope)),
        );
        let length = 0;
        for (const text of texts) length += text.length;
        if (length > MAX_TEXT_CHARS) throw textTooLong(value);
        return texts.join('');
      },
      constant: false,
    };
  }
  if (Array.isArray(value)) {
    const items = value.map((item) => compileValue(item, onReference, onError));
    if (items.every((item) => item.constant)) return constant;
    return { resolve: (scope) => items.map((item) => item.resolve(scope)), constant: false };
  }
  if (typeof value === 'object' && value !== null && !(value instanceof Uint8Array)) {
    const entries = Object.entries(value).map(
      ([key, item]) => [key, compileValue(item, onReference, onError)] as const,
    );
    if (entries.every(([, item]) => item.constant)) return constant;
    const keys = entries.map(([key]) => key);
    const resolvers = entries.map(([, item]) => item.resolve);
    if (keys.includes('__proto__'))
      return {
        resolve: (scope) => {
          const out: Record<string, unknown> = {};
          for (let i = 0; i < keys.length; i++) setOwn(out, keys[i]!, resolvers[i]!(scope));
          return out;
        },
        constant: false,
      };
    // Each result starts as a copy of one object with every key (in order) and the values without
    // references (returned as they are, as elsewhere), then gets the others: cheaper than adding the
    // keys one by one to an empty object.
    const template: Record<string, unknown> = {};
    const resolved: string[] = [];
    const resolving: Resolver[] = [];
    for (const [key, item] of entries) {
      template[key] = item.constant ? item.resolve(EMPTY_SCOPE) : null;
      if (item.constant) continue;
      resolved.push(key);
      resolving.push(item.resolve);
    }
    return {
      resolve: (scope) => {
        const out = { ...template };
        for (let i = 0; i < resolved.length; i++) out[resolved[i]!] = resolving[i]!(scope);
        return out;
      },
      constant: false,
    };
  }
  return constant;
}

/** The scope a value without references is resolved in (it reads none). */
const EMPTY_SCOPE: Scope = { value: () => undefined, skipped: () => false };

/** The text form of a value placed inside a longer string: strings as they are, null as "", others as JSON. @internal */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // Walked first, cheaply: an object held in many places could make JSON text past any size.
  if (jsonProblem(value, 'invalid_value', MAX_TEXT_CHARS)?.code === 'too_large') throw textTooLong();
  return JSON.stringify(value);
}

/** The most characters a string with references in it may come to once they are filled in. @internal */
export const MAX_TEXT_CHARS = 16 * 1024 * 1024;

function textTooLong(template?: string): LimitError {
  const where = template === undefined ? 'a value placed in text' : `"${template.slice(0, 60)}"`;
  return new LimitError(
    'reference.text',
    `${where} would come to more than ${MAX_TEXT_CHARS / (1024 * 1024)} Mi characters once its references are filled in`,
  );
}
