/** Serializes async work per key: work for one key runs one at a time, in call order. @internal */
export class KeyedLock {
  #tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier work for each of `keys` (taken in sorted order, so no deadlock). */
  async run<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const previous = sorted.map((key) => this.#tails.get(key) ?? Promise.resolve());
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    for (const key of sorted) this.#tails.set(key, done);
    try {
      await Promise.all(previous.map((p) => p.catch(() => undefined)));
      return await work();
    } finally {
      release();
      for (const key of sorted) if (this.#tails.get(key) === done) this.#tails.delete(key);
    }
  }
}
