import { z } from 'zod';

/** Longest name of a stored resource. */
export const RESOURCE_NAME_MAX = 128;

/**
 * The rule every stored resource's name follows (entities, relationships, workflows, scripts,
 * applications, triggers), as a sentence for error messages and docs.
 */
export const RESOURCE_NAME_RULE =
  `a name of 1 to ${RESOURCE_NAME_MAX} characters: letters, digits, spaces, "_", "-" and ".", ` +
  'starting with a letter, a digit or "_", and never containing ".."';

const ALLOWED = /^[\p{L}\p{N}_][\p{L}\p{N}\p{M}_ .-]*$/u;

/**
 * Whether `name` follows {@link RESOURCE_NAME_RULE}. Such a name is a safe storage key and URL
 * segment: it has no `/`, `\`, NUL or control characters and cannot be `.` or `..` or contain `..`.
 */
export function isResourceName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.length <= RESOURCE_NAME_MAX &&
    ALLOWED.test(name) &&
    !name.includes('..') &&
    name.trimEnd() === name
  );
}

/** The name of a stored resource; see {@link RESOURCE_NAME_RULE}. */
export const ResourceNameSchema = z.string().refine(isResourceName, {
  error: (issue) => `${JSON.stringify(issue.input)} is not a valid name: use ${RESOURCE_NAME_RULE}`,
  params: { code: 'invalid_name' },
});
