import { TAKES_JSON_TEXT, toJson } from '../json-text.js';
import { auditId, pageOfAudit, type CheckedAuditQuery } from '../audit-list.js';
import { pageOfRuns, runSummary } from '../run-list.js';
import type { RunSummary } from '../../schema/index.js';
import type {
  AuditEntry,
  AuditPage,
  AuditRecord,
  Collection,
  PutOptions,
  RunPage,
  RunQuery,
  StorageAdapter,
} from '../types.js';

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
  /** The summary of each run record, made when it is put: a listing parses no record. */
  #summaries = new Map<string, RunSummary>();
  /** The audit log, as JSON text, in append order: entry `i` has id `auditId(i + 1)`. */
  #audit: string[] = [];

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
    if (collection === 'runs') this.#summaries.set(key, runSummary(key, value, json));
    return true;
  }

  /** Removes `key`. */
  delete(collection: Collection, key: string): boolean {
    if (collection === 'runs') this.#summaries.delete(key);
    return this.#collection(collection).delete(key);
  }

  /** A copy of every entry, ordered by key. */
  list<T = unknown>(collection: Collection): { key: string; value: T }[] {
    return [...this.#collection(collection).entries()]
      .sort(([a], [b]) => byCodePoint(a, b))
      .map(([key, json]) => ({ key, value: JSON.parse(json) as T }));
  }

  /**
   * One page of run summaries, newest first by `started_at` then id; see {@link StorageAdapter.listRuns}.
   * No record is read.
   */
  listRuns(query: RunQuery): RunPage<RunSummary> {
    const page = pageOfRuns(
      [...this.#summaries].map(([key, value]) => ({ key, value })),
      query,
    );
    return { ...page, runs: page.runs.map(copySummary) };
  }

  /** Appends an entry to the audit log; see {@link StorageAdapter.appendAudit}. */
  appendAudit(entry: AuditRecord & { at: string }): AuditEntry {
    const json = JSON.stringify({ id: auditId(this.#audit.length + 1), ...entry });
    this.#audit.push(json);
    return JSON.parse(json) as AuditEntry;
  }

  /** One page of the audit log, oldest first; see {@link StorageAdapter.listAudit}. */
  listAudit(query: CheckedAuditQuery): AuditPage {
    // Ids are positions: start right after `after` rather than at the first entry.
    const from = query.after === undefined ? 0 : Number(query.after);
    return pageOfAudit(parsedFrom(this.#audit, Number.isInteger(from) ? from : 0), query);
  }

  #collection(name: Collection): Map<string, string> {
    let entries = this.#collections.get(name);
    if (!entries) this.#collections.set(name, (entries = new Map()));
    return entries;
  }
}

/** The entries from position `from` on, each parsed only when the page reaches it. */
function* parsedFrom(texts: readonly string[], from: number): Generator<AuditEntry> {
  for (let i = Math.max(0, from); i < texts.length; i++) yield JSON.parse(texts[i]!) as AuditEntry;
}

/** A copy of a summary: its error is an object a caller may change. */
function copySummary(summary: RunSummary): RunSummary {
  return summary.error ? { ...summary, error: { ...summary.error } } : { ...summary };
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
