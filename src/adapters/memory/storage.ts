import { pageOfRuns } from '../run-list.js';
import type { Collection, PutOptions, RunPage, RunQuery, StorageAdapter } from '../types.js';

/** In-memory storage of definitions, scripts and run records; the default of `new Engine()`. */
export class MemoryStorage implements StorageAdapter {
  #collections = new Map<Collection, Map<string, string>>();

  /** The value under `key`, or `undefined`. */
  get<T = unknown>(collection: Collection, key: string): T | undefined {
    const json = this.#collection(collection).get(key);
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  /** Stores a JSON copy of `value`. */
  put(collection: Collection, key: string, value: unknown, options: PutOptions = {}): boolean {
    const entries = this.#collection(collection);
    if (options.ifAbsent && entries.has(key)) return false;
    entries.set(key, JSON.stringify(value));
    return true;
  }

  /** Removes `key`. */
  delete(collection: Collection, key: string): boolean {
    return this.#collection(collection).delete(key);
  }

  /** Every entry, ordered by key. */
  list<T = unknown>(collection: Collection): { key: string; value: T }[] {
    return [...this.#collection(collection).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, json]) => ({ key, value: JSON.parse(json) as T }));
  }

  /** One page of run records, newest first by `started_at` then id; see {@link StorageAdapter.listRuns}. */
  listRuns<T = unknown>(query: RunQuery): RunPage<T> {
    const runs = [...this.#collection('runs')].map(([key, json]) => ({ key, value: JSON.parse(json) as T }));
    return pageOfRuns(runs, query);
  }

  #collection(name: Collection): Map<string, string> {
    let entries = this.#collections.get(name);
    if (!entries) this.#collections.set(name, (entries = new Map()));
    return entries;
  }
}
