/**
 * Cookie sessions, kept in collection `sessions` so that every process on one database
 * shares them: under the SHA-256 of the token (the cookie's value is never stored) the principal,
 * the session's form token and its absolute expiry; under `<sha256>/seen` when it was last used, kept
 * apart so that noting a use can never bring back a session that ended meanwhile.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import { checkPrincipal, type Principal } from '../access/principal.js';
import type { AuthStoreOptions } from './keys.js';
import { TOKEN_PATTERN, randomToken, tokenDigest } from './tokens.js';

/** How long a session lasts. */
export interface SessionOptions {
  /** It ends after this many minutes without a request. @default 120 */
  idleMinutes?: number;
  /** It ends this many hours after sign-in, however busy. @default 12 */
  absoluteHours?: number;
}

/** A session just begun: `token` goes in the cookie, `csrf` in the forms rendered for it. */
export interface CreatedSession {
  /** 43 base64url characters; only its SHA-256 is stored. */
  token: string;
  /** The session's form token. */
  csrf: string;
  /** When the session ends at the latest (UTC ISO date-time): the cookie's expiry. */
  expires_at: string;
}

/** A live session, as {@link Sessions.get} finds it. */
export interface Session {
  /** Who signed in. */
  principal: Principal;
  /** The form token every form of the session carries. */
  csrf: string;
  /** The user's id, when a user signed in. */
  user_id?: string;
  /** When the session ends at the latest. */
  expires_at: string;
}

/** A session as stored under the digest of its token. */
interface StoredSession {
  principal: Principal;
  csrf: string;
  user_id?: string;
  created_at: string;
  expires_at: string;
  idle_ms: number;
}

/** The last use of a session is written at most this often. */
const TOUCH_MS = 60_000;
const SEEN = '/seen';

/**
 * The sessions of an engine's handler.
 * @internal
 */
export class Sessions {
  #storage: StorageAdapter;
  #ready: () => Promise<void>;
  #now: () => number;

  constructor(storage: StorageAdapter, ready: () => Promise<void>, options: AuthStoreOptions = {}) {
    this.#storage = storage;
    this.#ready = ready;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Begins a session for `principal` with a new random token (a sign-in never reuses one).
   * @throws a `TypeError` naming the option or the principal's field that is wrong.
   */
  async create(principal: Principal, options: SessionOptions = {}): Promise<CreatedSession> {
    const checked = checkPrincipal(principal);
    const idle = positive(options.idleMinutes ?? 120, 'idleMinutes') * 60_000;
    const absolute = positive(options.absoluteHours ?? 12, 'absoluteHours') * 3_600_000;
    await this.#ready();
    const now = this.#now();
    const token = randomToken();
    const session: StoredSession = {
      principal: checked,
      csrf: randomToken(),
      ...(checked.kind === 'user' ? { user_id: checked.id } : {}),
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + absolute).toISOString(),
      idle_ms: idle,
    };
    const digest = await tokenDigest(token);
    await this.#storage.put('sessions', digest, session, { ifAbsent: true });
    await this.#storage.put('sessions', `${digest}${SEEN}`, { at: now });
    return { token, csrf: session.csrf, expires_at: session.expires_at };
  }

  /**
   * The live session of a cookie's token, or `undefined` (malformed, unknown, ended, or expired:
   * an expired one is deleted). Notes the use at most once a minute.
   */
  async get(token: string): Promise<Session | undefined> {
    if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) return undefined;
    await this.#ready();
    const digest = await tokenDigest(token);
    const [session, seen] = await Promise.all([
      this.#storage.get<StoredSession>('sessions', digest),
      this.#storage.get<{ at: number }>('sessions', `${digest}${SEEN}`),
    ]);
    if (session === undefined) return undefined;
    const now = this.#now();
    const last = seen?.at ?? Date.parse(session.created_at);
    if (now >= Date.parse(session.expires_at) || now - last >= session.idle_ms) {
      await this.#delete(digest);
      return undefined;
    }
    if (now - last >= TOUCH_MS) await this.#storage.put('sessions', `${digest}${SEEN}`, { at: now });
    const { principal, csrf, user_id, expires_at } = session;
    return { principal, csrf, ...(user_id === undefined ? {} : { user_id }), expires_at };
  }

  /** Ends the session of this token (sign-out); resolves with whether there was one. */
  async end(token: string): Promise<boolean> {
    if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) return false;
    await this.#ready();
    return this.#delete(await tokenDigest(token));
  }

  /** Ends every session of the principal with this id (a user disabled, its password changed); resolves with how many. */
  async endFor(principalId: string): Promise<number> {
    await this.#ready();
    let ended = 0;
    for (const { key, value } of await this.#storage.list<StoredSession>('sessions'))
      if (!key.endsWith(SEEN) && value.principal?.id === principalId && (await this.#delete(key))) ended++;
    return ended;
  }

  async #delete(digest: string): Promise<boolean> {
    const existed = await this.#storage.delete('sessions', digest);
    await this.#storage.delete('sessions', `${digest}${SEEN}`);
    return existed;
  }
}

/** `value`, when it is a positive number. */
function positive(value: number, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`sessions: ${option} must be a positive number, got ${String(value)}`);
  return value;
}
