/**
 * Who is asking: a person, an API key or the service itself.
 * @module
 */
import { describeValue } from '../schema/issues.js';
import type { RunInitiator } from '../schema/run-record-types.js';

/** Who calls the engine: a signed-in user, an API key, or a service (the host, a trigger). */
export interface Principal {
  /** Stable id: a user id, a key id, `service`, `trigger:<name>`. */
  id: string;
  /** What kind of caller it is; a `service` is not restricted by the policy. */
  kind: 'user' | 'key' | 'service';
  /** The policy's roles it holds. */
  roles: string[];
  /** The user's e-mail address, when known (row rules may use it as `{{user.email}}`). */
  email?: string | undefined;
  /** A display name, when known. */
  name?: string | undefined;
}

/** The host's own principal: what the plain `engine` acts as. */
export const SERVICE_PRINCIPAL: Readonly<Principal> = Object.freeze({
  id: 'service',
  kind: 'service',
  roles: Object.freeze([]) as unknown as string[],
});

const KINDS: readonly string[] = ['user', 'key', 'service'];

/**
 * The principal checked and copied (the caller may change its object afterwards).
 * @throws a `TypeError` naming the field that is wrong.
 */
export function checkPrincipal(principal: unknown): Principal {
  if (typeof principal !== 'object' || principal === null)
    throw new TypeError(
      `engine.as: the principal must be an object { id, kind, roles }, got ${describeValue(principal)}`,
    );
  const { id, kind, roles, email, name } = principal as Record<string, unknown>;
  if (typeof id !== 'string' || id === '')
    throw new TypeError(`engine.as: principal.id must be a non-empty string, got ${describeValue(id)}`);
  if (typeof kind !== 'string' || !KINDS.includes(kind))
    throw new TypeError(
      `engine.as: principal.kind must be "user", "key" or "service", got ${describeValue(kind)}`,
    );
  if (!Array.isArray(roles) || roles.some((r) => typeof r !== 'string'))
    throw new TypeError(
      `engine.as: principal.roles must be an array of role names, got ${describeValue(roles)}`,
    );
  if (email !== undefined && typeof email !== 'string')
    throw new TypeError(`engine.as: principal.email must be a string, got ${describeValue(email)}`);
  if (name !== undefined && typeof name !== 'string')
    throw new TypeError(`engine.as: principal.name must be a string, got ${describeValue(name)}`);
  return {
    id,
    kind: kind as Principal['kind'],
    roles: [...(roles as string[])],
    ...(email === undefined ? {} : { email }),
    ...(name === undefined ? {} : { name }),
  };
}

/** What a run record keeps of its initiator. */
export function initiatorOf(principal: Principal): RunInitiator {
  return {
    id: principal.id,
    kind: principal.kind,
    roles: [...principal.roles],
    ...(principal.email === undefined ? {} : { email: principal.email }),
  };
}
