/**
 * Sign-in attempts limited per account and per address, kept in collection `sign_in_attempts` so
 * that every process on one database counts together. Each attempt claims a slot before its password
 * is checked: `<account|address>/<name>/<window>/<n>` put with `ifAbsent`, `n` below the limit. With
 * no slot left the attempt is refused as `locked` until the window (15 minutes by default) ends, so
 * even many attempts sent at once get at most the limit of password checks. A successful attempt
 * gives its address slot back and clears the account's slots; a failed one keeps both.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';

/** How many sign-in attempts may fail, and over which window. */
export interface SignInLimits {
  /** Failed attempts per account (e-mail address, known or not) in a window. @default 5 */
  account?: number;
  /** Failed attempts per client address in a window. @default 20 */
  address?: number;
  /** Length of a window in minutes; a locked account or address is free again when it ends. @default 15 */
  window_minutes?: number;
}

/** Slots of windows before the current one are deleted at most this often by a process. */
const PRUNE_MS = 60 * 60_000;

/** The slots an attempt holds: given back or kept once its outcome is known. @internal */
export interface AttemptClaim {
  /** Storage keys of the slots claimed. */
  account: string;
  address: string | undefined;
}

/** The counter of sign-in attempts of a `Users`. @internal */
export class SignInAttempts {
  #storage: StorageAdapter;
  #now: () => number;
  #limits: Required<SignInLimits>;
  #pruned = 0;
  /** Where this process last found a free slot under each prefix: the next claim starts there. */
  #hints = new Map<string, number>();

  constructor(storage: StorageAdapter, now: () => number, limits: SignInLimits = {}) {
    this.#storage = storage;
    this.#now = now;
    this.#limits = {
      account: limits.account ?? 5,
      address: limits.address ?? 20,
      window_minutes: limits.window_minutes ?? 15,
    };
  }

  /** Claims a slot of the account and one of the address; undefined (nothing claimed) when either is full. */
  async claim(email: string, address: string | undefined): Promise<AttemptClaim | undefined> {
    const window = this.#window();
    this.#prune(window);
    const at = new Date(this.#now()).toISOString();
    const addressSlot =
      address === undefined
        ? undefined
        : await this.#claimSlot(scope('address', address, window), this.#limits.address, at);
    if (address !== undefined && addressSlot === undefined) return undefined;
    const accountSlot = await this.#claimSlot(scope('account', email, window), this.#limits.account, at);
    if (accountSlot === undefined) {
      if (addressSlot !== undefined) await this.#storage.delete('sign_in_attempts', addressSlot);
      return undefined;
    }
    return { account: accountSlot, address: addressSlot };
  }

  /** After a successful attempt: its address slot given back, every slot of the account's window cleared. */
  async succeeded(claim: AttemptClaim): Promise<void> {
    if (claim.address !== undefined) await this.#storage.delete('sign_in_attempts', claim.address);
    const prefix = claim.account.slice(0, claim.account.lastIndexOf('/') + 1);
    for (let n = 0; n < this.#limits.account; n++)
      await this.#storage.delete('sign_in_attempts', `${prefix}${n}`);
  }

  /** The first free slot under `prefix`, claimed; undefined when all `limit` are taken. */
  async #claimSlot(prefix: string, limit: number, at: string): Promise<string | undefined> {
    const start = this.#hints.get(prefix) ?? 0;
    for (let tried = 0; tried < limit; tried++) {
      const n = (start + tried) % limit;
      const key = `${prefix}${n}`;
      if (await this.#storage.put('sign_in_attempts', key, { at }, { ifAbsent: true })) {
        this.#hints.set(prefix, n + 1);
        return key;
      }
    }
    return undefined;
  }

  /** The number of the current window. */
  #window(): number {
    return Math.floor(this.#now() / (this.#limits.window_minutes * 60_000));
  }

  /** Deletes slots of past windows, in the background and at most once an hour per process. */
  #prune(window: number): void {
    const now = this.#now();
    if (now - this.#pruned < PRUNE_MS) return;
    this.#pruned = now;
    this.#hints.clear();
    const storage = this.#storage;
    void (async () => {
      for (const { key } of await storage.list('sign_in_attempts')) {
        const slotWindow = Number(key.split('/')[2]);
        if (!(slotWindow >= window)) await storage.delete('sign_in_attempts', key);
      }
    })().catch(() => undefined);
  }
}

/** `<kind>/<name>/<window>/`, the name escaped so that it holds no `/` nor control characters. */
function scope(kind: 'account' | 'address', name: string, window: number): string {
  return `${kind}/${encodeURIComponent(name)}/${window}/`;
}
