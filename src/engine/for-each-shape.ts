/**
 * The plan side of `for_each`: the roots that name the current item, and the shape of a `for_each`
 * step's output `{ items, succeeded, failed, skipped }` that references into it must fit.
 * @module
 */
import type { OnError, PathSegment, Step, Workflow } from '../schema/index.js';
import { parsePath } from '../schema/index.js';
import { stepType } from './steps/index.js';

/** The reference root of the current item of a `for_each` step. @internal */
export const ITEM_ROOT = 'item';
/** The reference root of the current item's index, from 0. @internal */
export const ITEM_INDEX_ROOT = 'item_index';

const COUNTS: ReadonlySet<PathSegment> = new Set(['succeeded', 'failed', 'skipped']);

/** True when `root` names the current item or its index. @internal */
export function isItemRoot(root: string): boolean {
  return root === ITEM_ROOT || root === ITEM_INDEX_ROOT;
}

/**
 * Why `path` does not fit the output of a `for_each` step, or undefined when it fits: a count, the
 * items, `items.length`, or `items[i]` and below. With `on_error: "continue"` the whole step's
 * failure is `{ error }`, so `error` fits too.
 * @internal
 */
export function forEachPathProblem(
  path: readonly PathSegment[],
  onError: OnError | undefined,
): string | undefined {
  const [head, next] = path;
  if (head === undefined) return undefined;
  if (COUNTS.has(head)) return path.length === 1 ? undefined : `"${head}" is a count and has no fields`;
  if (head === 'items') {
    if (next === undefined || typeof next === 'number' || /^\d+$/.test(next)) return undefined;
    if (next === 'length' && path.length === 2) return undefined;
    return '"items" is a list: use items[<index>] or items.length';
  }
  if (head === 'error' && onError === 'continue') return undefined;
  return `"${head}" is not part of it; it has items, succeeded, failed and skipped`;
}

/**
 * The JSON Schema of the value at `path` in a step's output when it is known: a `for_each` step's
 * counts, and an item's output when every item has the step type's output.
 * @internal
 */
export function stepOutputSchema(step: Step, path: readonly string[]): Record<string, unknown> | undefined {
  if (step.for_each === undefined) return stepType(step).outputSchema?.(step, path);
  const [head, index, ...rest] = path;
  if (head !== undefined && COUNTS.has(head) && path.length === 1) return { type: 'integer' };
  const everyItemRuns = !step.conditions?.length && step.on_error !== 'continue';
  if (head === 'items' && index !== undefined && /^\d+$/.test(index) && everyItemRuns)
    return stepType(step).outputSchema?.(step, rest);
  return undefined;
}

/**
 * True when a step may be skipped: it has conditions, or it is a `for_each` step whose list comes
 * from a step that may be skipped.
 * @internal
 */
export function maySkip(step: Step, workflow: Workflow): boolean {
  const seen = new Set<string>();
  for (let current: Step | undefined = step; current && !seen.has(current.name);) {
    seen.add(current.name);
    if (current.conditions && current.conditions.length > 0) return true;
    if (current.for_each === undefined) return false;
    const parsed = parsePath(current.for_each.replace(/^\{\{\s*|\s*\}\}$/g, ''));
    const root = parsed.ok ? parsed.segments[0] : undefined;
    current = workflow.steps.find((s) => s.name === root);
  }
  return false;
}
