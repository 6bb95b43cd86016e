/**
 * Local `$ref` support: JSON pointers, the runtime guard of a reference (depth and step budget),
 * and the search for reference loops that never move to a property or item.
 * @module
 */
import { isJsonObject, subjectOf } from './describe.js';
import type { Check, SchemaSegment } from './types.js';

/** Most `$ref`s followed within one another while validating one value (deeply nested data). @internal */
export const MAX_REF_DEPTH = 400;

/** Most `$ref`s followed while validating one value, so a schema cannot make validation exponential. @internal */
export const MAX_REF_STEPS = 1_000_000;

/**
 * Most schema objects checked (an `enum` value compared counts one too) while validating one value:
 * a schema of 20,000 `allOf` items over 200,000 array items would otherwise take a minute. @internal
 */
export const MAX_CHECK_STEPS = 20_000_000;

/** Most issues one pass lists; then it stops (a failing value could otherwise list billions). @internal */
export const MAX_VALIDATION_ISSUES = 1000;

/** A limit that stopped a pass over a value. @internal */
export type RefLimit = 'too_deep' | 'too_complex' | 'too_many_problems';

/** State of the validation under way; checks are synchronous, so one module-level record is enough. */
const run: { depth: number; steps: number; work: number; exhausted: RefLimit | null } = {
  depth: 0,
  steps: 0,
  work: 0,
  exhausted: null,
};

/** Resets the `$ref` and work budgets before each pass over a value. @internal */
export function startValidation(): void {
  run.depth = 0;
  run.steps = MAX_REF_STEPS;
  run.work = MAX_CHECK_STEPS;
  run.exhausted = null;
}

/**
 * Spends `amount` of the work budget of the pass under way; false (the pass stops, failing) once it
 * is spent or the issues list is full. @internal
 */
export function spend(amount: number, out: readonly unknown[] | null): boolean {
  run.work -= amount;
  if (run.work < 0) run.exhausted ??= 'too_complex';
  else if (out !== null && out.length >= MAX_VALIDATION_ISSUES) run.exhausted ??= 'too_many_problems';
  else return run.exhausted === null || run.exhausted === 'too_deep';
  return false;
}

/** The check of one schema object, within the work budget of the pass under way. @internal */
export function withinBudget(check: Check): Check {
  return function checkWithin(value, path, out) {
    // The common case first, in one test: budget left, nothing stopped, issues not full.
    if (--run.work >= 0 && run.exhausted === null && (out === null || out.length < MAX_VALIDATION_ISSUES))
      return check(value, path, out);
    return spend(0, out) && check(value, path, out);
  };
}

/** Which limit, if any, stopped the last pass over a value. @internal */
export function exhaustedLimit(): RefLimit | null {
  return run.exhausted;
}

/** The JSON pointer (`/properties/a~1b`) of a location given as segments. @internal */
export function toPointer(segments: readonly SchemaSegment[]): string {
  let pointer = '';
  for (const segment of segments) pointer = childPointer(pointer, segment);
  return pointer;
}

/** The pointer one segment below `pointer`. @internal */
export function childPointer(pointer: string, segment: SchemaSegment): string {
  const text = String(segment);
  const escaped =
    text.includes('~') || text.includes('/') ? text.replaceAll('~', '~0').replaceAll('/', '~1') : text;
  return `${pointer}/${escaped}`;
}

/** Result of {@link resolveReference}. @internal */
export type Resolved =
  { ok: true; segments: SchemaSegment[]; schema: unknown } | { ok: false; code: string; message: string };

/** Finds what a local `$ref` (`#`, `#/$defs/a`, percent-encoded or not) points to in `root`. @internal */
export function resolveReference(root: unknown, reference: string): Resolved {
  if (!reference.startsWith('#')) {
    return {
      ok: false,
      code: 'unsupported_keyword',
      message: `"$ref" "${reference}" is not supported: only local references such as "#/$defs/name" are`,
    };
  }
  let fragment: string;
  try {
    fragment = decodeURIComponent(reference.slice(1));
  } catch {
    return { ok: false, code: 'invalid_schema', message: `"$ref" "${reference}" is not a valid reference` };
  }
  if (fragment !== '' && !fragment.startsWith('/')) {
    return {
      ok: false,
      code: 'unsupported_keyword',
      message: `"$ref" "${reference}" uses an anchor, which is not supported; use a JSON pointer such as "#/$defs/name"`,
    };
  }
  const segments: SchemaSegment[] = [];
  let schema = root;
  for (const token of fragment === '' ? [] : fragment.slice(1).split('/')) {
    const name = token.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(schema) && /^(0|[1-9]\d*)$/.test(name) && Number(name) < schema.length) {
      schema = schema[Number(name)];
      segments.push(Number(name));
    } else if (isJsonObject(schema) && Object.hasOwn(schema, name)) {
      schema = schema[name];
      segments.push(name);
    } else {
      return {
        ok: false,
        code: 'unresolved_ref',
        message: `"$ref" "${reference}" does not point to anything in this schema`,
      };
    }
  }
  return { ok: true, segments, schema };
}

/**
 * The check of a `$ref`: follows `target()` (filled in once the target is compiled) unless the
 * references nest too deeply or the budget of the current validation is spent. @internal
 */
export function createRefCheck(target: () => Check): Check {
  return function checkRef(value, path, out) {
    run.steps -= 1;
    if (run.depth >= MAX_REF_DEPTH || run.steps < 0) {
      const limit: RefLimit = run.steps < 0 ? 'too_complex' : 'too_deep';
      if (out !== null && run.exhausted === null) {
        const message =
          limit === 'too_deep'
            ? `${subjectOf(path)} is nested too deeply to validate`
            : `${subjectOf(path)} takes too many steps to validate against this schema`;
        out.push({ code: limit, path, message });
      }
      run.exhausted ??= limit;
      return false;
    }
    run.depth += 1;
    try {
      return target()(value, path, out);
    } finally {
      run.depth -= 1;
    }
  };
}

/**
 * A loop in `edges` (schema pointer -> `$ref` targets it follows on the same value), as the list of
 * pointers around it, or `null`. Iterative, so a long chain cannot exhaust the stack. @internal
 */
export function findReferenceLoop(edges: ReadonlyMap<string, ReadonlySet<string>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  for (const start of edges.keys()) {
    if (state.has(start)) continue;
    const stack: { pointer: string; next: Iterator<string> }[] = [];
    const open = (pointer: string): void => {
      state.set(pointer, 'open');
      stack.push({ pointer, next: (edges.get(pointer) ?? new Set<string>()).values() });
    };
    open(start);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const step = top.next.next();
      if (step.done === true) {
        state.set(top.pointer, 'done');
        stack.pop();
      } else if (state.get(step.value) === 'open') {
        const from = stack.findIndex((frame) => frame.pointer === step.value);
        return [...stack.slice(from).map((frame) => frame.pointer), step.value];
      } else if (!state.has(step.value)) open(step.value);
    }
  }
  return null;
}
