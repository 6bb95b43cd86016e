/**
 * Definition history: every change of a stored definition (entity, relationship, workflow, script,
 * application, trigger, the access policy) appends a numbered version, so the version a change
 * replaced is always there. One mechanism for every registry.
 * @module
 */
import type { StorageAdapter } from './types.js';
import { NotFoundError, ValidationError, type Issue } from '../errors/index.js';
import { KeyedLock } from '../locks/keyed-lock.js';

/** The kinds of definition that keep a history. */
export type DefinitionKind =
  'entity' | 'relationship' | 'workflow' | 'script' | 'application' | 'trigger' | 'access';

/** Who changed a definition: a principal's id and kind (a whole `Principal` will do; only these are kept). */
export interface DefinitionAuthor {
  id: string;
  kind: 'user' | 'key' | 'service';
}

/** One version of a definition: what it was after one change. */
export interface DefinitionVersion<T = unknown> {
  /** 1, 2, 3… per kind and name, in the order the changes were made. */
  version: number;
  /** When the change was made (ISO 8601, UTC). */
  at: string;
  /** Who made it, when known. */
  by?: DefinitionAuthor | undefined;
  /** What the change was. A create after a delete is `create` again, numbered on. */
  action: 'create' | 'replace' | 'delete';
  /** The stored definition after the change; `null` for `delete`. */
  definition: T | null;
}

/** Paging of a definition's versions. */
export interface VersionQuery {
  /** Only versions after this one (a page's `next`). @default 0 */
  after?: number;
  /** Most versions in the page, 1 to 1000. @default 100 */
  limit?: number;
}

/** A page of a definition's versions, oldest first. */
export interface VersionPage<T = unknown> {
  versions: DefinitionVersion<T>[];
  /** Where the next page starts (pass it as `after`); absent on the last page. */
  next?: number;
}

/**
 * What a registry's changing methods take as their last parameter: who is changing the definition,
 * kept in its history (`engine.as(p)` passes its principal).
 */
export interface DefinitionWriteOptions {
  by?: DefinitionAuthor | undefined;
}

const COLLECTION = 'definition_versions';
const MAX_LIMIT = 1000;

/** The storage key of a version: `<kind>/<name>/<version, ten digits>`, so keys sort by version. */
function versionKey(kind: DefinitionKind, name: string, version: number): string {
  return `${kind}/${name}/${String(version).padStart(10, '0')}`;
}

/**
 * The versions of definitions, kept in collection `definition_versions`. Versions of a name are
 * numbered without gaps, so the latest is found by a few key look-ups, never a listing. @internal
 */
export class DefinitionHistory {
  #storage: StorageAdapter;
  /** The latest version seen per `<kind>/<name>`: where the search for the latest starts. */
  #seen = new Map<string, number>();
  #changes = new KeyedLock();

  constructor(storage: StorageAdapter) {
    this.#storage = storage;
  }

  /**
   * Runs `work` (a change of a definition and its {@link DefinitionHistory.record}) after every earlier
   * change of that name in this process, so versions are numbered in the order the changes were stored.
   */
  changing<T>(kind: DefinitionKind, name: string, work: () => Promise<T>): Promise<T> {
    return this.#changes.run([`${kind}/${name}`], work);
  }

  /** Appends the next version of a definition, after the change was stored. */
  async record<T>(
    kind: DefinitionKind,
    name: string,
    action: DefinitionVersion['action'],
    definition: T | null,
    by?: DefinitionAuthor,
  ): Promise<DefinitionVersion<T>> {
    const entry: DefinitionVersion<T> = {
      version: (await this.#latestNumber(kind, name)) + 1,
      at: new Date().toISOString(),
      ...(by ? { by: { id: by.id, kind: by.kind } } : {}),
      action,
      definition,
    };
    // Another engine on the same storage may have taken the number: the next free one is ours.
    while (
      !(await this.#storage.put(COLLECTION, versionKey(kind, name, entry.version), entry, { ifAbsent: true }))
    )
      entry.version++;
    this.#seen.set(`${kind}/${name}`, entry.version);
    return entry;
  }

  /** The latest version of a definition, or undefined when it has none (never stored, or stored before history). */
  async latest<T = unknown>(kind: DefinitionKind, name: string): Promise<DefinitionVersion<T> | undefined> {
    const n = await this.#latestNumber(kind, name);
    return n === 0 ? undefined : this.#get<T>(kind, name, n);
  }

  /**
   * A page of a definition's versions, oldest first.
   * @throws {@link ValidationError} for a bad `after` or `limit`; {@link NotFoundError} when the
   *   definition has no version and `stored` finds none either (the name never existed).
   */
  async list<T = unknown>(
    kind: DefinitionKind,
    name: string,
    query: VersionQuery = {},
    stored?: () => unknown,
  ): Promise<VersionPage<T>> {
    const { after, limit } = checkQuery(query);
    const latest = await this.#latestNumber(kind, name);
    if (latest === 0 && stored && (await stored()) === undefined) throw new NotFoundError(kind, name);
    const last = Math.min(latest, after + limit);
    const numbers = Array.from({ length: Math.max(0, last - after) }, (_, i) => after + 1 + i);
    const found = await Promise.all(numbers.map((n) => this.#get<T>(kind, name, n)));
    const versions = found.filter((v): v is DefinitionVersion<T> => v !== undefined);
    return last < latest ? { versions, next: last } : { versions };
  }

  /** Version `n` of a definition, or undefined when it has none. */
  get<T = unknown>(kind: DefinitionKind, name: string, n: number): Promise<DefinitionVersion<T> | undefined> {
    return this.#get<T>(kind, name, n);
  }

  async #get<T>(kind: DefinitionKind, name: string, n: number): Promise<DefinitionVersion<T> | undefined> {
    return this.#storage.get<DefinitionVersion<T>>(COLLECTION, versionKey(kind, name, n));
  }

  async #has(kind: DefinitionKind, name: string, n: number): Promise<boolean> {
    return (await this.#get(kind, name, n)) !== undefined;
  }

  /** The latest version number (0: none): doubling steps up from the last one seen, then halving back. */
  async #latestNumber(kind: DefinitionKind, name: string): Promise<number> {
    const id = `${kind}/${name}`;
    let low = this.#seen.get(id) ?? 0;
    // The storage may have been emptied under us: then start from nothing.
    if (low > 0 && !(await this.#has(kind, name, low))) low = 0;
    let step = 1;
    while (await this.#has(kind, name, low + step)) {
      low += step;
      step *= 2;
    }
    let high = low + step;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (await this.#has(kind, name, middle)) low = middle;
      else high = middle;
    }
    this.#seen.set(id, low);
    return low;
  }
}

/** The query with its defaults. @throws {@link ValidationError} naming the field that is wrong. */
function checkQuery(query: VersionQuery): { after: number; limit: number } {
  const { after = 0, limit = 100 } = query;
  const issues: Issue[] = [];
  if (!Number.isSafeInteger(after) || after < 0)
    issues.push({
      code: 'invalid_value',
      path: 'after',
      message: 'after must be a version number, 0 or more',
    });
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    issues.push({
      code: 'invalid_value',
      path: 'limit',
      message: `limit must be a whole number from 1 to ${MAX_LIMIT}`,
    });
  if (issues.length > 0) throw new ValidationError(issues);
  return { after, limit };
}
