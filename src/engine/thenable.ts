/**
 * Telling work that finished at once from work still under way.
 * @internal
 * @module
 */

/** True when `value` is a promise or another thenable: work whose result comes later. @internal */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
