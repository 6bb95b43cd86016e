/**
 * Checks of the fields that keys and users share (a name, roles, a future expiry), each reporting
 * an issue that names the field, so that one `ValidationError` lists every problem of a call.
 * @module
 */
import type { Issue } from '../errors/index.js';

/** Whether `value` is a non-empty string once trimmed; else adds an issue naming `path`. @internal */
export function checkText(value: unknown, path: string, issues: Issue[]): value is string {
  if (typeof value === 'string' && value.trim() !== '') return true;
  issues.push({ code: 'invalid_type', path, message: `${path} must be a non-empty string` });
  return false;
}

/** Whether `value` is an array of non-empty role names; else adds an issue naming `path`. @internal */
export function checkRoles(value: unknown, path: string, issues: Issue[]): value is string[] {
  if (Array.isArray(value) && value.every((role) => typeof role === 'string' && role.trim() !== ''))
    return true;
  issues.push({
    code: 'invalid_type',
    path,
    message: `${path} must be an array of role names (non-empty strings), e.g. ["admin"]`,
  });
  return false;
}

/** An ISO 8601 date-time with a time zone, e.g. `2030-01-31T12:00:00Z` or `...+02:00`. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * `value` as a UTC ISO date-time when it is an ISO date-time with a time zone after `now`; else
 * adds an issue naming `path` and returns `undefined`.
 * @internal
 */
export function checkFutureDateTime(
  value: unknown,
  path: string,
  now: number,
  issues: Issue[],
): string | undefined {
  const time = typeof value === 'string' && DATE_TIME.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(time)) {
    issues.push({
      code: 'invalid_type',
      path,
      message: `${path} must be an ISO date-time with a time zone, e.g. 2030-01-31T12:00:00Z`,
    });
    return undefined;
  }
  if (time <= now) {
    issues.push({ code: 'invalid_value', path, message: `${path} must be in the future` });
    return undefined;
  }
  return new Date(time).toISOString();
}

/** Roles copied, each trimmed, without repeats. @internal */
export function cleanRoles(roles: readonly string[]): string[] {
  return [...new Set(roles.map((role) => role.trim()))];
}
