/**
 * The access policy of an engine: where it is stored, whether access control is on, and the
 * {@link Grants} of each principal under the policy stored now.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import { ValidationError } from '../errors/index.js';
import { AccessPolicySchema, type AccessPolicy } from '../schema/access.js';
import { parse } from '../schema/index.js';
import type { Entity } from '../schema/index.js';
import { Grants } from './grants.js';
import { policyIssues } from './policy-check.js';
import { SERVICE_PRINCIPAL, type Principal } from './principal.js';
import { createOrReplace } from '../adapters/create-or-replace.js';
import { DefinitionHistory, type DefinitionWriteOptions } from '../adapters/definition-history.js';

/** The storage key of the policy, in collection `access`. */
const POLICY_KEY = 'policy';

/** How often an engine without a policy looks for one another process stored, in ms. */
const RECHECK_MS = 1000;

/** Most principals whose grants are kept per policy (a server sees many users; each is cheap to compile). */
const MAX_KEPT = 1000;

/** The engine's access policy and the grants compiled from it. @internal */
export class AccessControl {
  #storage: StorageAdapter;
  #option: AccessPolicy | undefined;
  #enabled: boolean;
  /** The policy last read, by its JSON text, with the grants compiled under it. */
  #current: { text: string; policy: AccessPolicy; grants: Map<string, Grants> } | undefined;
  /** The grants of an engine without access control: every check passes. */
  #open = new Map<string, Grants>();
  /** When {@link AccessControl.enabledNow} last asked the storage, in ms since 1970. */
  #checkedAt = 0;
  /** Versions of the policy: kind `access`, name `policy`. */
  #history: DefinitionHistory;

  constructor(storage: StorageAdapter, option: unknown) {
    this.#storage = storage;
    this.#history = new DefinitionHistory(storage);
    this.#option =
      option === undefined ? undefined : parse(AccessPolicySchema, option, 'access policy (options.access)');
    this.#enabled = this.#option !== undefined;
  }

  /** Whether access control is on: an `access` option, or a policy found stored when the engine opened. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** Stores the `access` option as the policy, or turns access control on when a policy is stored. */
  async open(): Promise<void> {
    const stored = await this.#storage.get('access', POLICY_KEY);
    if (this.#option !== undefined) {
      // Every engine opening with the same option stores it again; only a different one is a version.
      const option = this.#option;
      await this.#history.changing('access', POLICY_KEY, async () => {
        await this.#storage.put('access', POLICY_KEY, option);
        if (JSON.stringify(stored) !== JSON.stringify(option))
          await this.#history.record(
            'access',
            POLICY_KEY,
            stored === undefined ? 'create' : 'replace',
            option,
          );
      });
    } else if (stored !== undefined) this.#enabled = true;
  }

  /** The policy stored now, or `undefined` when there is none. */
  async policy(): Promise<AccessPolicy | undefined> {
    return (await this.#read())?.policy;
  }

  /**
   * Checks `policy` against the entities it names and stores it, in force from the next call on.
   * @throws {@link ValidationError} naming every field that is wrong (an unknown role, permission,
   *   entity or column).
   */
  async put(
    policy: unknown,
    entities: readonly Entity[],
    options: DefinitionWriteOptions = {},
  ): Promise<AccessPolicy> {
    const parsed = parse(AccessPolicySchema, policy, 'access policy');
    const issues = policyIssues(parsed, entities);
    if (issues.length > 0)
      throw new ValidationError(
        issues,
        `Invalid access policy: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      );
    await this.#history.changing('access', POLICY_KEY, async () => {
      const created = await createOrReplace(this.#storage, 'access', POLICY_KEY, parsed);
      await this.#history.record('access', POLICY_KEY, created ? 'create' : 'replace', parsed, options.by);
    });
    this.#enabled = true;
    return parsed;
  }

  /** The grants of `principal` under the policy stored now. */
  async grants(principal: Principal): Promise<Grants> {
    const key = principalKey(principal);
    if (principal.kind === 'service') return kept(this.#open, key, () => new Grants(principal, undefined));
    // Read every time: a policy another process stored after this engine opened is in force here too.
    const current = await this.#read();
    if (current) this.#enabled = true;
    else if (!this.#enabled) return kept(this.#open, key, () => new Grants(principal, undefined));
    // On with no policy stored (it was removed from the storage): nothing is allowed.
    if (!current) return new Grants(principal, { roles: {} });
    return kept(current.grants, key, () => new Grants(principal, current.policy));
  }

  /**
   * Whether access control is on now: once on, it stays on; while off, the storage is asked again
   * at most once every {@link RECHECK_MS} (a policy another process stored turns it on here too).
   * A promise only when it asks the storage.
   */
  enabledNow(): boolean | Promise<boolean> {
    if (this.#enabled) return true;
    const now = Date.now();
    if (now - this.#checkedAt < RECHECK_MS) return false;
    this.#checkedAt = now;
    return this.#read().then((current) => {
      if (current !== undefined) this.#enabled = true;
      return this.#enabled;
    });
  }

  /** The grants of the host's own service principal. */
  service(): Grants {
    return kept(this.#open, principalKey(SERVICE_PRINCIPAL), () => new Grants(SERVICE_PRINCIPAL, undefined));
  }

  async #read(): Promise<{ text: string; policy: AccessPolicy; grants: Map<string, Grants> } | undefined> {
    const storage = this.#storage;
    const text = storage.getText
      ? await storage.getText('access', POLICY_KEY)
      : JSON.stringify((await storage.get('access', POLICY_KEY)) ?? null);
    if (text === undefined || text === 'null') return (this.#current = undefined);
    if (this.#current?.text === text) return this.#current;
    return (this.#current = { text, policy: JSON.parse(text) as AccessPolicy, grants: new Map() });
  }
}

/** What tells two principals apart for their grants: everything they hold. */
function principalKey(p: Principal): string {
  let key = KEYS.get(p);
  if (key === undefined) KEYS.set(p, (key = keyOf(p)));
  return key;
}

/** The keys of principals seen: a view asks with the same principal object at every call. */
const KEYS = new WeakMap<Principal, string>();

function keyOf(p: Principal): string {
  return JSON.stringify([p.id, p.kind, p.roles, p.email ?? null]);
}

function kept(map: Map<string, Grants>, key: string, make: () => Grants): Grants {
  let grants = map.get(key);
  if (grants) return grants;
  if (map.size >= MAX_KEPT) map.clear();
  map.set(key, (grants = make()));
  return grants;
}
