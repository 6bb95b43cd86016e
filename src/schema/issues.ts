import { z } from 'zod';
import { ValidationError, formatIssues, type Issue } from '../errors/index.js';
import { indexPath, keyPath } from './path.js';

/** One problem with its path, the shape of {@link Issue}: in run records and problem details. */
export const IssueSchema = z.object({
  code: z.string().describe('Stable machine-readable code, e.g. `invalid_type`.'),
  path: z.string().describe('Where the problem is, e.g. `customer.id`; `""` for the root.'),
  message: z.string().describe('A sentence a person understands.'),
});

/**
 * Formats a path of keys and indexes as `a.b[0].c`, a key that needs it quoted (`a["x.y"]`), as the
 * JSON Schema validator writes paths. @internal
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out = typeof key === 'number' ? indexPath(out, key) : keyPath(out, String(key));
  return out;
}

/** A value as a message names it: `null`, `an array`, `the string "x"`, `number NaN`. @internal */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return `${typeof value} ${String(value)}`;
}

/** A name as a message quotes it: JSON-quoted, cut after 200 characters (a name can be any size of text). @internal */
export function quoteName(name: string): string {
  return JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);
}

/** Names as a message lists them: `a, b, c`, the first 20 of a longer list then `… (N in all)`. @internal */
export function listNames(names: readonly string[]): string {
  const most = 20;
  if (names.length <= most) return names.join(', ');
  return `${names.slice(0, most).join(', ')}, … (${names.length} in all)`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  record: 'an object',
};

/**
 * What a message calls the value at `path`: its property name, or for an array item its array's
 * name and index (`events[0]`, not `0`); `value` at the root.
 */
function fieldName(path: readonly PropertyKey[]): string {
  const last = path.length - 1;
  if (last < 0) return 'value';
  if (typeof path[last] !== 'number') return String(path[last]);
  let from = last;
  while (from > 0 && typeof path[from - 1] === 'number') from--;
  return formatPath(path.slice(Math.max(0, from - 1)));
}

/**
 * Turns one zod issue into stepwire {@link Issue}s with messages a person understands: one, or one per
 * unknown property, at the property's own path (as the JSON Schema validator reports them). @internal
 */
export function toIssues(issue: z.core.$ZodIssue, input: unknown): Issue[] {
  if (issue.code !== 'unrecognized_keys') return [toIssue(issue, input)];
  const parent = formatPath(issue.path);
  return issue.keys.map((key) => ({
    code: 'unknown_property',
    path: keyPath(parent, key),
    message: `unknown property ${quoteName(key)}; no other properties are allowed here`,
  }));
}

/** Turns one zod issue into a stepwire {@link Issue} with a message a person understands. @internal */
function toIssue(issue: z.core.$ZodIssue, input: unknown): Issue {
  const path = formatPath(issue.path);
  const field = fieldName(issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      const received = valueAt(input, issue.path);
      if (received === undefined) return { code: 'required', path, message: `${field} is required` };
      const expected = TYPE_NAMES[issue.expected] ?? issue.expected;
      return {
        code: 'invalid_type',
        path,
        message: `${field} must be ${expected}, got ${describeValue(received)}`,
      };
    }
    case 'invalid_value':
      if (valueAt(input, issue.path) === undefined)
        return { code: 'required', path, message: `${field} is required` };
      return {
        code: 'invalid_value',
        path,
        message: `${field} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(valueAt(input, issue.path))}`,
      };
    case 'too_small': {
      if (issue.origin === 'array')
        return {
          code: 'too_small',
          path,
          message: `${field} must have at least ${String(issue.minimum)} item${issue.minimum === 1 ? '' : 's'}`,
        };
      if (issue.origin === 'string')
        return {
          code: 'too_small',
          path,
          message:
            Number(issue.minimum) <= 1
              ? `${field} must not be empty`
              : `${field} must have at least ${String(issue.minimum)} characters`,
        };
      return {
        code: 'too_small',
        path,
        message: `${field} must be ${issue.inclusive ? 'at least' : 'greater than'} ${String(issue.minimum)}`,
      };
    }
    case 'too_big': {
      if (issue.origin === 'array')
        return {
          code: 'too_big',
          path,
          message: `${field} must have at most ${String(issue.maximum)} items`,
        };
      if (issue.origin === 'string')
        return {
          code: 'too_big',
          path,
          message: `${field} must be at most ${String(issue.maximum)} characters`,
        };
      return {
        code: 'too_big',
        path,
        message: `${field} must be ${issue.inclusive ? 'at most' : 'less than'} ${String(issue.maximum)}`,
      };
    }
    case 'invalid_format':
      return {
        code: 'invalid_format',
        path,
        message:
          issue.message && !issue.message.startsWith('Invalid')
            ? issue.message
            : `${field} has an invalid format (${issue.format})`,
      };
    case 'invalid_union': {
      const union = issue as { note?: string; options?: unknown[] };
      if (union.note === 'No matching discriminator') {
        const received = valueAt(input, issue.path);
        const allowed = (union.options ?? []).map((o) => JSON.stringify(o)).join(', ');
        const message =
          received === undefined
            ? `${field} is required`
            : `${field} must be one of ${allowed}, got ${describeValue(received)}`;
        return { code: received === undefined ? 'required' : 'invalid_value', path, message };
      }
      const message =
        issue.message && issue.message !== 'Invalid input'
          ? issue.message
          : `${field} does not match any allowed shape`;
      return { code: 'invalid_union', path, message };
    }
    case 'custom':
      return {
        code: (issue.params?.['code'] as string | undefined) ?? 'invalid',
        path,
        message: issue.message,
      };
    default:
      return { code: issue.code, path, message: issue.message };
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, key)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** Result of {@link check}: the parsed value, or every issue. */
export type CheckResult<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

/** Validates `input` against `schema`, returning every issue instead of throwing. */
export function check<S extends z.ZodType>(schema: S, input: unknown): CheckResult<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, issues: result.error.issues.flatMap((issue) => toIssues(issue, input)) };
}

/**
 * Validates `input` against `schema` and returns the parsed value.
 * @throws `ValidationError` with every issue, each with its path.
 */
export function parse<S extends z.ZodType>(schema: S, input: unknown, what?: string): z.output<S> {
  const result = check(schema, input);
  if (result.ok) return result.value;
  throw new ValidationError(
    result.issues,
    what ? `Invalid ${what}: ${formatIssues(result.issues)}` : undefined,
  );
}

/** Adds a custom issue in a zod refinement. @internal */
export function addIssue(
  ctx: z.core.$RefinementCtx,
  path: PropertyKey[],
  message: string,
  code = 'invalid',
): void {
  ctx.addIssue({ code: 'custom', path, message, params: { code } });
}
