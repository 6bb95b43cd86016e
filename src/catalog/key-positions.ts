/**
 * Where each primary key of a write was first seen: a `Map` from key to position, with a faster
 * form for the common case of integer ids close together.
 * @module
 */

/** The most slots per key a dense table may take before the keys go to a `Map`. */
const SLOTS_PER_KEY = 4;
/** Slots a dense table starts with around its first key. */
const FIRST_SLOTS = 1024;

/**
 * A `Map<unknown, number>` for the keys of one write (see `rowKey`), whose positions are integers
 * from -1 up. While every key is an int32 and the keys stay within a few slots per key of each
 * other, positions live in an `Int32Array` indexed by key (no hashing, no entry objects); the first
 * key that breaks this moves every position to a `Map`. @internal
 */
export class KeyPositions {
  /** Position + 2 of each key (0: not seen), from key `#base` up; undefined once in `#map`. */
  #dense: Int32Array | undefined;
  #base = 0;
  #count = 0;
  #map: Map<unknown, number> | undefined;

  /** The position `key` was set with, or undefined. */
  get(key: unknown): number | undefined {
    if (this.#map !== undefined) return this.#map.get(key);
    if (typeof key !== 'number' || (key | 0) !== key || this.#dense === undefined) return undefined;
    const at = this.#dense[key - this.#base];
    return at === undefined || at === 0 ? undefined : at - 2;
  }

  /** Sets the position of `key` (an integer of -1 or more). */
  set(key: unknown, position: number): void {
    if (this.#map === undefined && typeof key === 'number' && (key | 0) === key && this.#fit(key)) {
      const at = key - this.#base;
      if (this.#dense![at] === 0) this.#count++;
      this.#dense![at] = position + 2;
      return;
    }
    this.#toMap().set(key, position);
  }

  /** Makes room for `key` in the dense table; false when it would grow too sparse. */
  #fit(key: number): boolean {
    const dense = this.#dense;
    if (dense === undefined) {
      this.#base = key - FIRST_SLOTS / 2;
      this.#dense = new Int32Array(FIRST_SLOTS);
      return true;
    }
    const at = key - this.#base;
    if (at >= 0 && at < dense.length) return true;
    const low = Math.min(this.#base, key);
    const high = Math.max(this.#base + dense.length, key + 1);
    if (high - low > SLOTS_PER_KEY * (this.#count + 1) + FIRST_SLOTS) return false;
    // Doubling, so a run of rising ids grows the table a logarithmic number of times.
    const size = Math.max(high - low, 2 * dense.length);
    const base = key < this.#base ? high - size : low;
    const grown = new Int32Array(size);
    grown.set(dense, this.#base - base);
    this.#dense = grown;
    this.#base = base;
    return true;
  }

  #toMap(): Map<unknown, number> {
    if (this.#map !== undefined) return this.#map;
    const map = new Map<unknown, number>();
    const dense = this.#dense;
    if (dense !== undefined)
      for (let at = 0; at < dense.length; at++) if (dense[at] !== 0) map.set(this.#base + at, dense[at]! - 2);
    this.#dense = undefined;
    this.#map = map;
    return map;
  }
}
