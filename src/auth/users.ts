/**
 * People who sign in (`engine.users`): collection `users` holds each user by id with the
 * PHC string of its password, collection `user_emails` maps a lower-case e-mail address to the id
 * (claimed with `ifAbsent`, so two processes cannot give one address to two users). Neither the
 * password nor its hash ever leaves this file.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import type { Principal } from '../access/principal.js';
import { ConflictError, NotFoundError, ValidationError, type Issue } from '../errors/index.js';
import type { AuthStoreOptions } from './keys.js';
import { checkPassword, hashPassword, verifyPassword } from './passwords.js';
import { SignInAttempts, type SignInLimits } from './sign-in-attempts.js';
import { checkRoles, checkText, cleanRoles } from './fields.js';
import { randomToken } from './tokens.js';

export type { SignInLimits } from './sign-in-attempts.js';

/** What {@link Users.create} takes. */
export interface UserInput {
  /** The e-mail address the user signs in with; kept lower-case, one user per address. */
  email: string;
  /** A display name. */
  name?: string | undefined;
  /** The access policy's roles the user holds. */
  roles: string[];
  /** At least 12 characters; without one the user cannot sign in with a password (OpenID only). */
  password?: string | undefined;
}

/** A user as read: never its password nor the password's hash. */
export interface User {
  /** A random id: what sessions, runs and the audit log name. */
  id: string;
  /** The e-mail address, lower-case. */
  email: string;
  /** A display name, when given. */
  name?: string;
  /** The roles the user holds. */
  roles: string[];
  /** Whether sign-in is refused. */
  disabled: boolean;
  /** When the user was made. */
  created_at: string;
}

/** The outcome of {@link Users.signIn}. */
export type SignInResult =
  | { ok: true; principal: Principal & { kind: 'user'; email: string } }
  | {
      ok: false;
      /**
       * `invalid`: unknown address or wrong password (one answer for both); `locked`: too many
       * failed attempts for the account or the client address, try after the window; `disabled`:
       * the password was right but the user is disabled.
       */
      reason: 'invalid' | 'locked' | 'disabled';
    };

/** Options of {@link Users}. */
export interface UsersOptions extends AuthStoreOptions {
  /** How many sign-in attempts may fail. */
  limits?: SignInLimits;
}

/** A user as stored. */
interface StoredUser extends User {
  /** The PHC string of the password, when the user has one. */
  password_hash?: string;
}

/**
 * The users of an engine (`engine.users`).
 * @example
 * ```ts
 * const user = await engine.users.create({ email: 'ada@example.com', roles: ['admin'], password });
 * await engine.users.setRoles(user.id, ['sales']);
 * ```
 */
export class Users {
  #storage: StorageAdapter;
  #ready: () => Promise<void>;
  #now: () => number;
  #attempts: SignInAttempts;
  /** A hash of a random password, checked for an unknown address so it takes as long as a known one. */
  #dummy: Promise<string> | undefined;

  /** @internal */
  constructor(storage: StorageAdapter, ready: () => Promise<void>, options: UsersOptions = {}) {
    this.#storage = storage;
    this.#ready = ready;
    this.#now = options.now ?? Date.now;
    this.#attempts = new SignInAttempts(storage, this.#now, options.limits);
  }

  /**
   * Makes a user.
   * @throws {@link ValidationError} naming `email`, `name`, `roles` or `password` when one is wrong;
   *   {@link ConflictError} when a user has that e-mail address (in any case).
   */
  async create(input: UserInput): Promise<User> {
    const issues: Issue[] = [];
    const { email, name, roles, password } = (input ?? {}) as Partial<UserInput>;
    const address = checkEmail(email, issues);
    if (name !== undefined) checkText(name, 'name', issues);
    const roled = checkRoles(roles, 'roles', issues);
    if (password !== undefined) {
      try {
        checkPassword(password);
      } catch (error) {
        issues.push(...(error as ValidationError).issues);
      }
    }
    if (issues.length > 0 || address === undefined || !roled) throw new ValidationError(issues);
    await this.#ready();
    const user: StoredUser = {
      id: globalThis.crypto.randomUUID(),
      email: address,
      ...(name === undefined ? {} : { name: name.trim() }),
      roles: cleanRoles(roles),
      disabled: false,
      created_at: new Date(this.#now()).toISOString(),
      ...(password === undefined ? {} : { password_hash: await hashPassword(password) }),
    };
    if (!(await this.#storage.put('user_emails', address, { id: user.id }, { ifAbsent: true })))
      throw new ConflictError('user', address);
    await this.#storage.put('users', user.id, user);
    return publicUser(user);
  }

  /** The user with this id, or `undefined`. */
  async get(id: string): Promise<User | undefined> {
    const user = await this.#stored(id);
    return user && publicUser(user);
  }

  /** Every user, by e-mail address. */
  async list(): Promise<User[]> {
    await this.#ready();
    const stored = await this.#storage.list<StoredUser>('users');
    return stored.map(({ value }) => publicUser(value)).sort((a, b) => a.email.localeCompare(b.email));
  }

  /**
   * Replaces the user's roles; sessions already open keep the roles they started with until the
   * host ends them (`sessions.endFor(id)`).
   * @throws {@link ValidationError} naming `roles`; {@link NotFoundError} for an unknown id.
   */
  async setRoles(id: string, roles: string[]): Promise<User> {
    const issues: Issue[] = [];
    if (!checkRoles(roles, 'roles', issues)) throw new ValidationError(issues);
    return this.#change(id, (user) => ({ ...user, roles: cleanRoles(roles) }));
  }

  /**
   * Sets the user's password (at least 12 characters).
   * @throws {@link ValidationError} naming `password`; {@link NotFoundError} for an unknown id.
   */
  async setPassword(id: string, password: string): Promise<void> {
    checkPassword(password);
    const hash = await hashPassword(password);
    await this.#change(id, (user) => ({ ...user, password_hash: hash }));
  }

  /**
   * Refuses the user's sign-in from now on; the host ends its open sessions (`sessions.endFor(id)`).
   * @throws {@link NotFoundError} for an unknown id.
   */
  async disable(id: string): Promise<User> {
    return this.#change(id, (user) => ({ ...user, disabled: true }));
  }

  /** The user with this e-mail address (in any case), or `undefined`. @internal */
  async findByEmail(email: string): Promise<User | undefined> {
    const user = await this.#byEmail(email);
    return user && publicUser(user);
  }

  /**
   * The user an OpenID provider signed in: made (without a password) when the address is new, else
   * given these roles (and this name, when given). A disabled user stays disabled.
   * @internal
   */
  async upsertExternal(input: { email: string; name?: string | undefined; roles: string[] }): Promise<User> {
    for (let tries = 0; ; tries++) {
      const found = await this.#byEmail(input.email);
      if (found)
        return this.#change(found.id, (user) => {
          const issues: Issue[] = [];
          if (!checkRoles(input.roles, 'roles', issues)) throw new ValidationError(issues);
          const name = input.name?.trim() ? { name: input.name.trim() } : {};
          return { ...user, ...name, roles: cleanRoles(input.roles) };
        });
      try {
        return await this.create({ email: input.email, roles: input.roles, name: input.name });
      } catch (error) {
        // Another process made the user between the look-up and the claim: update that one.
        if (!(error instanceof ConflictError) || tries > 0) throw error;
      }
    }
  }

  /**
   * Checks a password sign-in. An unknown address and a wrong password get the same answer after
   * about the same time (a dummy hash is checked); each attempt counts against the account and
   * the client `address` until it succeeds (see {@link SignInLimits}).
   * @internal
   */
  async signIn(
    email: string,
    password: string,
    context: { address?: string | undefined },
  ): Promise<SignInResult> {
    await this.#ready();
    const account = typeof email === 'string' ? email.trim().toLowerCase() : '';
    const claim = await this.#attempts.claim(account, context?.address || undefined);
    if (claim === undefined) return { ok: false, reason: 'locked' };
    const user = account === '' ? undefined : await this.#byEmail(account);
    const hash = user?.password_hash ?? (await (this.#dummy ??= hashPassword(randomToken())));
    const matches = (await verifyPassword(String(password), hash)) && user?.password_hash !== undefined;
    if (!user || !matches) return { ok: false, reason: 'invalid' };
    await this.#attempts.succeeded(claim);
    if (user.disabled) return { ok: false, reason: 'disabled' };
    const { id, roles, name } = user;
    return {
      ok: true,
      principal: {
        id,
        kind: 'user',
        roles: [...roles],
        email: user.email,
        ...(name === undefined ? {} : { name }),
      },
    };
  }

  async #stored(id: string): Promise<StoredUser | undefined> {
    if (typeof id !== 'string' || id === '') return undefined;
    await this.#ready();
    return this.#storage.get<StoredUser>('users', id);
  }

  async #byEmail(email: string): Promise<StoredUser | undefined> {
    if (typeof email !== 'string') return undefined;
    await this.#ready();
    const claimed = await this.#storage.get<{ id: string }>('user_emails', email.trim().toLowerCase());
    return claimed && this.#storage.get<StoredUser>('users', claimed.id);
  }

  async #change(id: string, change: (user: StoredUser) => StoredUser): Promise<User> {
    const user = await this.#stored(id);
    if (user === undefined) throw new NotFoundError('user', id);
    const changed = change(user);
    await this.#storage.put('users', id, changed);
    return publicUser(changed);
  }
}

/** The most characters of an e-mail address (RFC 5321). */
const MAX_EMAIL = 254;
/** One `@` between a local part and a domain with a dot, no spaces or control characters. */
const EMAIL = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;

/** The address lower-case, or undefined after adding an issue naming `email`. */
function checkEmail(email: unknown, issues: Issue[]): string | undefined {
  const address = typeof email === 'string' ? email.trim().toLowerCase() : undefined;
  if (address !== undefined && address.length <= MAX_EMAIL && EMAIL.test(address)) return address;
  issues.push({
    code: 'invalid_type',
    path: 'email',
    message: 'email must be an e-mail address, e.g. ada@example.com',
  });
  return undefined;
}

/** The user without its password hash (a host's storage may hand back more fields: they stay out too). */
function publicUser(user: StoredUser): User {
  const { id, email, name, roles, disabled, created_at } = user;
  return { id, email, ...(name === undefined ? {} : { name }), roles: [...roles], disabled, created_at };
}
