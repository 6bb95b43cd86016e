import { checkRunQuery, runColumns, runCursor } from '../run-list.js';
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
    const { workflow, status, limit, after } = checkRunQuery(query);
    const listed: { id: string; started_at: string; json: string }[] = [];
    for (const [id, json] of this.#collection('runs')) {
      const columns = runColumns(JSON.parse(json));
      if (columns.started_at === null) continue;
      if (workflow !== undefined && columns.workflow !== workflow) continue;
      if (status !== undefined && columns.status !== status) continue;
      if (after && !before([columns.started_at, id], [after.started_at, after.id])) continue;
      listed.push({ id, started_at: columns.started_at, json });
    }
    listed.sort((a, b) => (before([a.started_at, a.id], [b.started_at, b.id]) ? 1 : -1));
    const page = listed.slice(0, limit);
    const last = page.at(-1);
    return {
      runs: page.map((run) => JSON.parse(run.json) as T),
      ...(listed.length > limit && last ? { next: runCursor(last.started_at, last.id) } : {}),
    };
  }

  #collection(name: Collection): Map<string, string> {
    let entries = this.#collections.get(name);
    if (!entries) this.#collections.set(name, (entries = new Map()));
    return entries;
  }
}

/** Whether `a` sorts before `b`, comparing (started_at, id) pairs. */
function before(a: [string, string], b: [string, string]): boolean {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}
