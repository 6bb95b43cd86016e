/**
 * What one principal may do under one access policy: its permissions, and for each entity the rows
 * it sees and writes and the columns hidden from it or read-only to it. Compiled once per policy and
 * principal; every check of the engine asks it.
 * @module
 */
import { ForbiddenError } from '../errors/index.js';
import type { AccessPolicy, Permission } from '../schema/access.js';
import type { Entity } from '../schema/index.js';
import type { Principal } from './principal.js';

/** One filter of a row rule with the user's values put in: the shape of a get_entity filter. */
export interface RuleFilter {
  column: string;
  operator: string;
  value_type?: string | undefined;
  value?: unknown;
}

/**
 * What a principal sees of (or may write to) one entity: `rows` is `all`, or the rules a row must
 * match one of (each a list of filters joined by AND); `hidden` and `readOnly` are column names.
 */
export interface EntityAccess {
  rows: 'all' | RuleFilter[][];
  hidden: ReadonlySet<string>;
  readOnly: ReadonlySet<string>;
}

/** Everything, nothing hidden: what a service sees. */
export const UNRESTRICTED: EntityAccess = Object.freeze({
  rows: 'all',
  hidden: new Set<string>(),
  readOnly: new Set<string>(),
});

/** The permissions and rules of one principal. */
export class Grants {
  /** The principal these grants are for. */
  readonly principal: Principal;
  /** True for a service principal, or an engine without access control: every check passes. */
  readonly unrestricted: boolean;
  #policy: AccessPolicy | undefined;
  /** The principal's roles that the policy defines. */
  #roles: string[];
  #entities = new Map<string, { read: EntityAccess | undefined; write: EntityAccess | undefined }>();

  /** @internal */
  constructor(principal: Principal, policy: AccessPolicy | undefined) {
    this.principal = principal;
    this.#policy = policy;
    this.unrestricted = policy === undefined || principal.kind === 'service';
    this.#roles = policy ? principal.roles.filter((r) => Object.hasOwn(policy.roles, r)) : [];
  }

  /** Whether the principal holds `permission` (on `name`, when the permission is on a resource). */
  allows(permission: Permission, name?: string): boolean {
    if (this.unrestricted) return true;
    return this.#roles.some((role) => roleAllows(this.#policy!, role, permission, name));
  }

  /** Whether the principal holds `permission` on at least one resource (or on all). */
  allowsAny(permission: Permission): boolean {
    if (this.unrestricted) return true;
    const policy = this.#policy!;
    return this.#roles.some((role) =>
      (policy.roles[role]?.grants ?? []).some(
        (grant) => grant === '*' || grant === permission || grant.startsWith(`${permission}:`),
      ),
    );
  }

  /**
   * Throws unless the principal holds `permission` on `name`.
   * @throws {@link ForbiddenError} naming the permission and what it was needed for.
   */
  require(permission: Permission, name?: string, doing?: string): void {
    if (this.allows(permission, name)) return;
    throw forbidden(this.principal, permission, name, doing);
  }

  /**
   * What the principal may read (`read`) or write (`write`) of `entity`: its rows and columns.
   * @throws {@link ForbiddenError} when it holds no `entity.read` (`entity.write`) on the entity.
   */
  entity(entity: Entity, mode: 'read' | 'write'): EntityAccess {
    if (this.unrestricted) return UNRESTRICTED;
    let known = this.#entities.get(entity.name);
    if (!known) this.#entities.set(entity.name, (known = { read: undefined, write: undefined }));
    const found = (known[mode] ??= this.#compile(entity, mode));
    return found;
  }

  #compile(entity: Entity, mode: 'read' | 'write'): EntityAccess {
    const permission = mode === 'read' ? 'entity.read' : 'entity.write';
    const policy = this.#policy!;
    const roles = this.#roles.filter((role) => roleAllows(policy, role, permission, entity.name));
    if (roles.length === 0)
      throw forbidden(this.principal, permission, entity.name, `${mode} entity "${entity.name}"`);
    const rules = (policy.rows ?? []).filter((rule) => rule.entity === entity.name);
    // A role without a rule for the entity sees all of it; else the rules of its roles, any of them.
    const unruled = roles.some((role) => !rules.some((rule) => rule.roles.includes(role)));
    const rows: EntityAccess['rows'] = unruled
      ? 'all'
      : rules
          .filter((rule) => rule.roles.some((role) => roles.includes(role)))
          .map((rule) => rule.filters.map((filter) => withUser(filter, this.principal)));
    // Columns: what every role of the principal hides (or keeps read-only) stays so; one role that
    // shows a column shows it.
    const columnRules = (policy.columns ?? []).filter((rule) => rule.entity === entity.name);
    const everyRole = (pick: (rule: (typeof columnRules)[number]) => string[] | undefined) => {
      let common: Set<string> | undefined;
      for (const role of roles) {
        const own = new Set(columnRules.filter((r) => r.roles.includes(role)).flatMap((r) => pick(r) ?? []));
        common = common === undefined ? own : new Set([...common].filter((c) => own.has(c)));
      }
      return common ?? new Set<string>();
    };
    return { rows, hidden: everyRole((r) => r.hidden), readOnly: everyRole((r) => r.read_only) };
  }
}

/** Whether `role` of `policy` grants `permission` on `name`. */
function roleAllows(policy: AccessPolicy, role: string, permission: Permission, name?: string): boolean {
  const grants = policy.roles[role]?.grants ?? [];
  for (const grant of grants) {
    if (grant === '*' || grant === permission || grant === `${permission}:*`) return true;
    if (name !== undefined && grant === `${permission}:${name}`) return true;
    // Reading every run includes reading one's own.
    if (permission === 'runs.read_own' && (grant === 'runs.read' || grant === 'runs.read:*')) return true;
  }
  return false;
}

/** A rule's filter with `{{user.id}}`, `{{user.email}}` and `{{user.roles}}` replaced by the principal's. */
function withUser(filter: RuleFilter, principal: Principal): RuleFilter {
  const one = (value: unknown): unknown[] => {
    if (value === '{{user.id}}') return [principal.id];
    if (value === '{{user.email}}') return [principal.email ?? null];
    if (value === '{{user.roles}}') return [...principal.roles];
    return [value];
  };
  if (Array.isArray(filter.value)) return { ...filter, value: filter.value.flatMap(one) };
  if (filter.value === '{{user.roles}}') return { ...filter, value: [...principal.roles] };
  return { ...filter, value: one(filter.value)[0] };
}

/** The error of a permission missing: it names the permission and the resource, nothing else. */
export function forbidden(
  principal: Principal,
  permission: string,
  name?: string,
  doing?: string,
): ForbiddenError {
  const grant = name === undefined ? permission : `${permission}:${name}`;
  return new ForbiddenError(
    `${principal.kind} "${principal.id}" may not ${doing ?? grant}: it needs the permission ${grant}`,
    permission,
  );
}
