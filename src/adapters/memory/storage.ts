import { TAKES_JSON_TEXT, toJson } from '../json-text.js';
import { pageOfRuns } from '../run-list.js';
import type { Collection, PutOptions, RunPage, RunQuery, StorageAdapter } from '../types.js';

/**
 * In-memory storage of definitions, scripts and run records; the default of `new Engine()`.
 *
 * Values are kept as JSON text, taken when they are put: a string cannot be changed, and holds no
 * objects for the garbage collector to trace however many runs are kept. The engine saves run
 * records whose finished steps are already text (see `json-text.ts`), so saving a run again
 * serializes only its running steps, and a large output is serialized once. Reads parse the text:
 * each read is a fresh copy, so changing a value read, or the value written, changes nothing stored.
 */
export class MemoryStorage implements StorageAdapter {
  /** Its `put` writes JSON text as it is (see `TAKES_JSON_TEXT`). @internal */
  static readonly [TAKES_JSON_TEXT] = true;
  #collections = new Map<Collection, Map<string, string>>();
  /** What listing reads of each run record (and its key), so a listing parses only its page's records. */
  #runFields = new Map<string, ListedFields & { key: string }>();

  /** A copy of the value under `key`, or `undefined`. */
  get<T = unknown>(collection: Collection, key: string): T | undefined {
    const json = this.#collection(collection).get(key);
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  /** The JSON text stored under `key`, or `undefined`. */
  getText(collection: Collection, key: string): string | undefined {
    return this.#collection(collection).get(key);
  }

  /** Stores `value` as JSON text. */
  put(collection: Collection, key: string, value: unknown, options: PutOptions = {}): boolean {
    const entries = this.#collection(collection);
    if (options.ifAbsent && entries.has(key)) return false;
    // JSON has no text for `undefined` (or a function): stored as `null`, as Postgres stores it.
    const json = toJson(value) ?? 'null';
    entries.set(key, json);
    if (collection === 'runs') this.#runFields.set(key, { ...listedFields(value, json), key });
    return true;
  }

  /** Removes `key`. */
  delete(collection: Collection, key: string): boolean {
    if (collection === 'runs') this.#runFields.delete(key);
    return this.#collection(collection).delete(key);
  }

  /** A copy of every entry, ordered by key. */
  list<T = unknown>(collection: Collection): { key: string; value: T }[] {
    return [...this.#collection(collection).entries()]
      .sort(([a], [b]) => byCodePoint(a, b))
      .map(([key, json]) => ({ key, value: JSON.parse(json) as T }));
  }

  /**
   * One page of run records, newest first by `started_at` then id; see {@link StorageAdapter.listRuns}.
   * Only the page's records are parsed.
   */
  listRuns<T = unknown>(query: RunQuery): RunPage<T> {
    const runs = this.#collection('runs');
    const page = pageOfRuns(
      [...this.#runFields].map(([key, value]) => ({ key, value })),
      query,
    );
    return { ...page, runs: page.runs.map((fields) => JSON.parse(runs.get(fields.key)!) as T) };
  }

  #collection(name: Collection): Map<string, string> {
    let entries = this.#collections.get(name);
    if (!entries) this.#collections.set(name, (entries = new Map()));
    return entries;
  }
}

/** The fields of a run record that listing reads (see `runColumns`), as its JSON text holds them. */
interface ListedFields {
  workflow: unknown;
  status: unknown;
  started_at: unknown;
}

/** The listed fields of a run record put as `value`, whose JSON text is `json`. */
function listedFields(value: unknown, json: string | undefined): ListedFields {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !('toJSON' in value)) {
    // A plain object: its fields as JSON gives them (a string as it is, anything else through JSON).
    const record = value as Record<string, unknown>;
    const field = (name: string): unknown => {
      const v = record[name];
      return typeof v === 'string' || v === undefined || v === null
        ? v
        : JSON.parse(JSON.stringify(v) ?? 'null');
    };
    return { workflow: field('workflow'), status: field('status'), started_at: field('started_at') };
  }
  const parsed: unknown = json === undefined ? undefined : JSON.parse(json);
  const record = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  return { workflow: record.workflow, status: record.status, started_at: record.started_at };
}

/**
 * Orders text by code point, as Postgres does (`collate "C"` on UTF-8): UTF-16 order differs past
 * U+FFFF, whose surrogates sort below U+E000-U+FFFF.
 */
function byCodePoint(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const surrogateX = x >= 0xd800 && x <= 0xdfff;
    const surrogateY = y >= 0xd800 && y <= 0xdfff;
    // A surrogate starts a code point above every one a single unit holds.
    if (surrogateX !== surrogateY) return surrogateX ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
