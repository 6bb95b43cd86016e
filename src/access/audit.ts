/**
 * The audit log: one append-only entry per definition change, policy change, run start, cancel or
 * retry, row write and sign-in, listed oldest first a page at a time. Kept by the storage adapter:
 * in its own table or array when it has `appendAudit` and `listAudit`, else in collection `audit`
 * (where each page reads the whole collection: a host's storage for a long log should have both).
 * @module
 */
import { auditId, checkAuditQuery, pageOfAudit } from '../adapters/audit-list.js';
import type { AuditEntry, AuditPage, AuditQuery, AuditRecord, StorageAdapter } from '../adapters/types.js';
import { ConflictError, ValidationError, type Issue } from '../errors/index.js';

export type { AuditEntry, AuditPage, AuditQuery, AuditRecord } from '../adapters/types.js';

/** Most characters of an entry's `detail` as JSON; a larger one is cut down and says so. */
const MAX_DETAIL_CHARS = 4000;
/** How a larger detail is cut: at most this many items per list or object, characters per string. */
const CUTS = [
  { items: 50, chars: 500 },
  { items: 10, chars: 100 },
  { items: 3, chars: 40 },
] as const;
/** Appends to collection `audit` that find their id taken (by another engine) before one gives up. */
const MAX_CLAIMS = 100;
const ID = /^\d{16}$/;
const KINDS = new Set(['user', 'key', 'service']);
const OUTCOMES = new Set(['success', 'failure', 'denied']);

/**
 * The append-only audit log of an engine (`engine.audit`). Entries are ordered by when they were
 * appended, not by their clock time; none is ever changed or deleted. Entries hold names, ids,
 * counts and error codes: the code recording one must never put cell values or secrets in it.
 * @example
 * ```ts
 * const { entries, next } = await engine.audit.list({ action: 'run.start', limit: 50 });
 * const more = next ? await engine.audit.list({ action: 'run.start', limit: 50, after: next }) : undefined;
 * ```
 */
export class AuditLog {
  #storage: StorageAdapter;
  #ready: () => Promise<void>;
  /** Collection `audit`: the sequence number the next append tries (0 until the last one is read). */
  #next = 0;
  #reading: Promise<void> | undefined;

  /**
   * @param storage Where entries are kept: by its `appendAudit` and `listAudit` when it has both,
   *   else in its collection `audit`.
   * @param ready Resolves when the engine may use the storage; every call awaits it first.
   */
  constructor(storage: StorageAdapter, ready: () => Promise<void>) {
    this.#storage = storage;
    this.#ready = ready;
  }

  /**
   * Appends an entry, stamped with its `id` and the time now (`at`); only the principal's id and
   * kind are kept. A `detail` over about 4,000 characters of JSON is cut down (lists and objects to
   * their first items, long strings to their start) and then holds `truncated: true`.
   * @throws {@link ValidationError} naming each field of the wrong shape.
   */
  async record(entry: AuditRecord): Promise<AuditEntry> {
    const appended = { at: new Date().toISOString(), ...checkRecord(entry) };
    await this.#ready();
    const storage = this.#storage;
    if (storage.appendAudit && storage.listAudit) return storage.appendAudit(appended);
    return this.#appendToCollection(appended);
  }

  /**
   * One page of entries, oldest first, filtered by `action`, `principal` (id) and `resource` when
   * given. Pass a page's `next` as `after` for the page that follows; `next` is absent on the last page.
   * @throws {@link ValidationError} naming `limit` (not a whole number from 1 to 1000), `after` (not
   *   an id this log gave) or a filter that is not a string.
   */
  async list(query: AuditQuery = {}): Promise<AuditPage> {
    const checked = checkAuditQuery(query);
    await this.#ready();
    const storage = this.#storage;
    if (storage.appendAudit && storage.listAudit) return storage.listAudit(checked);
    const stored = await storage.list<AuditEntry>('audit');
    const entries = stored.filter(({ key }) => ID.test(key)).map(({ key, value }) => ({ ...value, id: key }));
    return pageOfAudit(entries, checked);
  }

  /**
   * Puts the entry under the next free sequence number. Two engines on one storage may try the same
   * number: `ifAbsent` lets one of them have it, and the other reads the last number again and tries
   * the one after it, so nothing appended is ever lost or overwritten.
   */
  async #appendToCollection(entry: AuditRecord & { at: string }): Promise<AuditEntry> {
    for (let claim = 0; claim < MAX_CLAIMS; claim++) {
      if (claim > 0 || this.#next === 0)
        await (this.#reading ??= this.#readNext().finally(() => (this.#reading = undefined)));
      const stored: AuditEntry = { id: auditId(this.#next++), ...entry };
      if (await this.#storage.put('audit', stored.id, stored, { ifAbsent: true }))
        return JSON.parse(JSON.stringify(stored)) as AuditEntry;
    }
    throw new ConflictError('audit entry', auditId(this.#next));
  }

  /** Moves the next sequence number past the last entry stored. */
  async #readNext(): Promise<void> {
    const keys = (await this.#storage.list('audit')).map(({ key }) => key);
    const last = keys.findLast((key) => ID.test(key));
    this.#next = Math.max(this.#next, 1, last === undefined ? 1 : Number(last) + 1);
  }
}

/** The entry as appended: checked, the principal cut to its id and kind, the detail bounded. */
function checkRecord(entry: AuditRecord): AuditRecord {
  const issues: Issue[] = [];
  const fail = (path: string, message: string) => issues.push({ code: 'invalid_type', path, message });
  if (typeof entry !== 'object' || entry === null)
    throw new ValidationError([
      { code: 'invalid_type', path: '', message: 'an audit entry must be an object' },
    ]);
  const { principal, action, resource, outcome, detail } = entry;
  if (typeof principal?.id !== 'string' || principal.id === '')
    fail('principal.id', 'must be a non-empty string');
  if (!KINDS.has(principal?.kind)) fail('principal.kind', 'must be one of user, key, service');
  if (typeof action !== 'string' || action === '') fail('action', 'must be a non-empty string');
  if (typeof resource !== 'string' || resource === '') fail('resource', 'must be a non-empty string');
  if (!OUTCOMES.has(outcome)) fail('outcome', 'must be one of success, failure, denied');
  if (detail !== undefined && (typeof detail !== 'object' || detail === null || Array.isArray(detail)))
    fail('detail', 'must be an object');
  const bounded = detail === undefined || issues.length > 0 ? undefined : boundedDetail(detail, fail);
  if (issues.length > 0) throw new ValidationError(issues);
  return {
    principal: { id: principal.id, kind: principal.kind },
    action,
    resource,
    outcome,
    ...(bounded === undefined ? {} : { detail: bounded }),
  };
}

/** A JSON copy of `detail`, cut down until its JSON is at most {@link MAX_DETAIL_CHARS} characters. */
function boundedDetail(
  detail: Record<string, unknown>,
  fail: (path: string, message: string) => void,
): Record<string, unknown> | undefined {
  let json: string;
  try {
    json = JSON.stringify(detail);
  } catch (error) {
    fail('detail', `must be JSON data (${(error as Error).message})`);
    return undefined;
  }
  const copy = JSON.parse(json) as Record<string, unknown>;
  if (json.length <= MAX_DETAIL_CHARS) return copy;
  for (const cut of CUTS) {
    const shrunk = { ...(shrink(copy, cut.items, cut.chars) as Record<string, unknown>), truncated: true };
    if (JSON.stringify(shrunk).length <= MAX_DETAIL_CHARS) return shrunk;
  }
  return { truncated: true, size: json.length };
}

/**
 * The value with lists and objects cut to their first `items` (a list then ends with a note of how
 * many more there were, an object gets a `…` key saying so) and strings to `chars` characters.
 */
function shrink(value: unknown, items: number, chars: number): unknown {
  if (typeof value === 'string') {
    if (value.length <= chars) return value;
    // Never half of a surrogate pair: Postgres refuses one in JSON.
    const end = /[\uD800-\uDBFF]/.test(value.charAt(chars - 1)) ? chars - 1 : chars;
    return `${value.slice(0, end)}…`;
  }
  if (Array.isArray(value)) {
    const kept = value.slice(0, items).map((item) => shrink(item, items, chars));
    return value.length > items ? [...kept, `… ${value.length - items} more`] : kept;
  }
  if (typeof value !== 'object' || value === null) return value;
  const fields = Object.entries(value);
  // Object.fromEntries defines own properties, so a `__proto__` key stays a plain key.
  const kept = Object.fromEntries(
    fields.slice(0, items).map(([key, field]) => [key, shrink(field, items, chars)]),
  );
  return fields.length > items ? { ...kept, '…': `${fields.length - items} more` } : kept;
}
