/**
 * API keys (`engine.keys`): a program signs in with `Authorization: Bearer <secret>`.
 * The secret is shown once, when the key is made; the storage keeps only its SHA-256, as the key of
 * the record in collection `api_keys`, so checking a secret is one read. Its last use is kept apart,
 * under `<sha256>/last_used`, so that noting a use can never write back a record a revoke changed.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import type { Principal } from '../access/principal.js';
import { ValidationError, type Issue } from '../errors/index.js';
import { checkFutureDateTime, checkRoles, checkText, cleanRoles } from './fields.js';
import { TOKEN_PATTERN, randomToken, tokenDigest } from './tokens.js';

/** What {@link ApiKeys.create} takes. */
export interface ApiKeyInput {
  /** What the key is for, e.g. `billing export`: shown in lists and the audit log. */
  name: string;
  /** The access policy's roles the key holds. */
  roles: string[];
  /** When the key stops working: an ISO date-time with a time zone, in the future. @default never */
  expires_at?: string | undefined;
}

/** An API key as listed: never its secret nor the secret's hash. */
export interface ApiKey {
  /** A random id (not derived from the secret): what `revoke` and the audit log name. */
  id: string;
  /** What the key is for. */
  name: string;
  /** The roles it holds. */
  roles: string[];
  /** When it stops working (UTC ISO date-time), or null for never. */
  expires_at: string | null;
  /** When it was made. */
  created_at: string;
  /** When it was last used, to the minute; null when never. */
  last_used_at: string | null;
  /** When it was revoked; null while it works. */
  revoked_at: string | null;
}

/** A key just made: the one time its `secret` is ever shown. */
export interface CreatedApiKey {
  /** The key's id. */
  id: string;
  /** What the key is for. */
  name: string;
  /** The roles it holds. */
  roles: string[];
  /** When it stops working, or null for never. */
  expires_at: string | null;
  /** `sw_` and 43 base64url characters: give it as `Authorization: Bearer <secret>`. Not kept. */
  secret: string;
}

/** Options of the stores of keys, users and sessions. */
export interface AuthStoreOptions {
  /** The clock, in milliseconds since the epoch (tests move it). @default Date.now */
  now?: () => number;
}

/** What a secret starts with, so that a leaked one is easy to recognise (and scan for). */
const PREFIX = 'sw_';
/**
 * How long a checked key is taken as it was without asking the storage again, in ms: a key revoked
 * by another process stops working within this time (at once in the process that revoked it).
 */
const RECENT_MS = 1000;
/** Most keys remembered as checked. */
const MAX_RECENT = 1000;
/** `last_used_at` is written at most this often, so checking a key is not a write per request. */
const TOUCH_MS = 60_000;
/** What follows a key's digest in the storage key of its last use. */
const LAST_USED = '/last_used';

/**
 * The API keys of an engine (`engine.keys`).
 * @example
 * ```ts
 * const { id, secret } = await engine.keys.create({ name: 'nightly import', roles: ['importer'] });
 * // give `secret` to the program once; later:
 * await engine.keys.revoke(id);
 * ```
 */
export class ApiKeys {
  #storage: StorageAdapter;
  #ready: () => Promise<void>;
  #now: () => number;
  /** When this process last wrote each key's last use (by key id). */
  #touched = new Map<string, number>();
  /** Secrets checked in the last {@link RECENT_MS}: their principal, and until when it holds. */
  #recent = new Map<string, { principal: Principal; until: number }>();

  /** @internal */
  constructor(storage: StorageAdapter, ready: () => Promise<void>, options: AuthStoreOptions = {}) {
    this.#storage = storage;
    this.#ready = ready;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Makes a key and resolves with its secret, which is not stored and cannot be shown again.
   * @throws {@link ValidationError} naming `name`, `roles` or `expires_at` when one is wrong.
   */
  async create(input: ApiKeyInput): Promise<CreatedApiKey> {
    const issues: Issue[] = [];
    const { name, roles, expires_at } = (input ?? {}) as Partial<ApiKeyInput>;
    const named = checkText(name, 'name', issues);
    const roled = checkRoles(roles, 'roles', issues);
    const expires =
      expires_at === undefined ? null : checkFutureDateTime(expires_at, 'expires_at', this.#now(), issues);
    if (issues.length > 0 || !named || !roled || expires === undefined) throw new ValidationError(issues);
    await this.#ready();
    const secret = `${PREFIX}${randomToken()}`;
    const record: ApiKey = {
      id: globalThis.crypto.randomUUID(),
      name: name.trim(),
      roles: cleanRoles(roles),
      expires_at: expires,
      created_at: new Date(this.#now()).toISOString(),
      last_used_at: null,
      revoked_at: null,
    };
    await this.#storage.put('api_keys', await tokenDigest(secret), record, { ifAbsent: true });
    const { id, roles: kept } = record;
    return { id, name: record.name, roles: [...kept], expires_at: expires, secret };
  }

  /** Every key, revoked and expired ones too, oldest first; never a secret or its hash. */
  async list(): Promise<ApiKey[]> {
    await this.#ready();
    const stored = await this.#storage.list<ApiKey | LastUse>('api_keys');
    const used = new Map<string, string>();
    for (const { key, value } of stored)
      if (key.endsWith(LAST_USED)) used.set(key.slice(0, -LAST_USED.length), (value as LastUse).at);
    return stored
      .filter(({ key }) => !key.endsWith(LAST_USED))
      .map(({ key, value }) => publicKey(value as ApiKey, used.get(key)))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /**
   * Revokes the key with this id: its secret stops working at once, and the key stays listed with
   * its `revoked_at`. Resolves with false when no key has that id or it was revoked already.
   */
  async revoke(id: string): Promise<boolean> {
    await this.#ready();
    const stored = await this.#storage.list<ApiKey>('api_keys');
    const found = stored.find(({ key, value }) => !key.endsWith(LAST_USED) && value.id === id);
    if (found === undefined || found.value.revoked_at !== null) return false;
    const revoked = { ...found.value, revoked_at: new Date(this.#now()).toISOString() };
    await this.#storage.put('api_keys', found.key, revoked);
    for (const [secret, seen] of this.#recent) if (seen.principal.id === id) this.#recent.delete(secret);
    return true;
  }

  /**
   * The principal of a secret given as a bearer token (a frozen object), or `undefined` when it is
   * malformed, unknown, revoked or expired (one answer for all, so a caller learns nothing from it).
   * @internal
   */
  async verify(secret: string): Promise<Principal | undefined> {
    return this.remembered(secret) ?? this.#verify(secret);
  }

  /**
   * The principal of a key checked a moment ago, taken as it was, or undefined: a request does not
   * pay a hash and a storage read each time (nor, through the HTTP handler, a turn of the event
   * loop). A revoke here ends it at once; one in another process within RECENT_MS.
   * @internal
   */
  remembered(secret: string): Principal | undefined {
    const recent = typeof secret === 'string' ? this.#recent.get(secret) : undefined;
    return recent !== undefined && this.#now() < recent.until ? recent.principal : undefined;
  }

  async #verify(secret: string): Promise<Principal | undefined> {
    if (typeof secret !== 'string' || !secret.startsWith(PREFIX)) return undefined;
    if (!TOKEN_PATTERN.test(secret.slice(PREFIX.length))) return undefined;
    const now = this.#now();
    await this.#ready();
    const digest = await tokenDigest(secret);
    const key = await this.#storage.get<ApiKey>('api_keys', digest);
    if (key === undefined || key.revoked_at !== null) return undefined;
    if (key.expires_at !== null && Date.parse(key.expires_at) <= now) return undefined;
    const touched = this.#touched.get(key.id);
    if (touched === undefined || now - touched >= TOUCH_MS) {
      this.#touched.set(key.id, now);
      const used: LastUse = { at: new Date(now).toISOString() };
      await this.#storage.put('api_keys', `${digest}${LAST_USED}`, used);
    }
    // Frozen: the same object is handed out while it is remembered (engine.as keeps its view by it).
    const principal: Principal = Object.freeze({
      id: key.id,
      kind: 'key',
      roles: Object.freeze([...key.roles]) as string[],
      name: key.name,
    });
    if (this.#recent.size >= MAX_RECENT) this.#recent.clear();
    const until = Math.min(now + RECENT_MS, key.expires_at === null ? Infinity : Date.parse(key.expires_at));
    this.#recent.set(secret, { principal, until });
    return principal;
  }
}

/** What `<sha256>/last_used` holds. */
interface LastUse {
  at: string;
}

/** The record's listed fields only (a host's storage may hand back more), with its last use. */
function publicKey(key: ApiKey, lastUsed: string | undefined): ApiKey {
  const { id, name, roles, expires_at, created_at, revoked_at } = key;
  return { id, name, roles: [...roles], expires_at, created_at, last_used_at: lastUsed ?? null, revoked_at };
}
