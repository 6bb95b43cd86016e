/**
 * In-process deduplication by idempotency key, shared by the adapters that cause effects.
 * @module
 */

/**
 * The results of recent calls by idempotency key: a call with a key already used returns the first
 * call's result without calling again, and a call whose key is still under way waits for that call.
 * A failed call is not remembered, so a retry with its key tries again. At most `max` keys are kept;
 * the least recently used goes first. It lives in one process: after a restart, or in another
 * process, every key is new. @internal
 */
export class RecentResults<T> {
  readonly #max: number;
  readonly #done = new Map<string, T>();
  readonly #pending = new Map<string, Promise<T>>();

  constructor(max = 1000) {
    if (!Number.isInteger(max) || max < 1)
      throw new TypeError(`RecentResults max must be a whole number >= 1, got ${String(max)}`);
    this.#max = max;
  }

  /**
   * `effect()`'s result, or the result of the first call with `key` (a copy). Without a key it
   * always calls `effect`.
   */
  async run(key: string | undefined, effect: () => Promise<T>): Promise<T> {
    if (key === undefined) return effect();
    if (this.#done.has(key)) {
      const result = this.#done.get(key) as T;
      this.#done.delete(key);
      this.#done.set(key, result);
      return structuredClone(result);
    }
    const under = this.#pending.get(key);
    if (under) return structuredClone(await under);
    const call = effect();
    this.#pending.set(key, call);
    try {
      const result = await call;
      this.#remember(key, result);
      return structuredClone(result);
    } finally {
      this.#pending.delete(key);
    }
  }

  /** Records `result` as the result of `key`, dropping the least recently used key when full. */
  #remember(key: string, result: T): void {
    this.#done.delete(key);
    this.#done.set(key, structuredClone(result));
    if (this.#done.size > this.#max) this.#done.delete(this.#done.keys().next().value as string);
  }
}
