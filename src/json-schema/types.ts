/**
 * Internal contract between the schema compiler and its keyword compilers.
 * @module
 */
import type { Issue } from '../errors/index.js';

/**
 * A compiled check. With `out === null` it only answers (stopping at the first failure and never
 * building paths); with an array it appends every issue found and answers as well. @internal
 */
export type Check = (value: unknown, path: string, out: Issue[] | null) => boolean;

/** One step of a location inside a schema document. @internal */
export type SchemaSegment = string | number;

/** A schema object, as read: own keys only. @internal */
export type SchemaObject = Readonly<Record<string, unknown>>;

/** What a keyword compiler may ask of the compiler while it compiles one schema object. @internal */
export interface NodeScope {
  /**
   * Compiles a subschema found at `segments` below this object (`['properties', 'a']`).
   * `descend` says whether it applies to a value inside the current one (a property, an item).
   */
  sub(segments: readonly SchemaSegment[], schema: unknown, descend: boolean): Check;
  /** Compiles the local `$ref` found in this object. */
  ref(reference: string): Check;
  /** Records a problem with the schema itself at `segments` below this object. */
  fail(segments: readonly SchemaSegment[], message: string, code?: string): void;
}

/** Compiles a group of keywords of one schema object; `null` when none of them is present. @internal */
export type KeywordCompiler = (schema: SchemaObject, scope: NodeScope) => Check | null;

/** A check that accepts everything. @internal */
export const ALWAYS: Check = () => true;

/** Runs checks in order; in collecting mode all of them, otherwise until the first failure. @internal */
export function allOfChecks(checks: readonly Check[]): Check {
  if (checks.length === 0) return ALWAYS;
  if (checks.length === 1) return checks[0]!;
  if (checks.length === 2) {
    const [first, second] = checks as [Check, Check];
    return function bothChecks(value, path, out) {
      const ok = first(value, path, out);
      if (!ok && out === null) return false;
      return second(value, path, out) && ok;
    };
  }
  const list = checks.slice();
  return function everyCheck(value, path, out) {
    let ok = true;
    for (let i = 0; i < list.length; i += 1) {
      if (!list[i]!(value, path, out)) {
        if (out === null) return false;
        ok = false;
      }
    }
    return ok;
  };
}

/** Schema values that must be non-negative integers, read with an issue when wrong. @internal */
export function readCount(schema: SchemaObject, key: string, scope: NodeScope): number | undefined {
  if (!Object.hasOwn(schema, key)) return undefined;
  const value = schema[key];
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  scope.fail([key], `"${key}" must be a non-negative integer`);
  return undefined;
}

/** A finite number keyword, read with an issue when wrong. @internal */
export function readNumber(schema: SchemaObject, key: string, scope: NodeScope): number | undefined {
  if (!Object.hasOwn(schema, key)) return undefined;
  const value = schema[key];
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  scope.fail([key], `"${key}" must be a number`);
  return undefined;
}

/** An object-of-schemas keyword (`properties`, `$defs`), read with an issue when wrong. @internal */
export function readSchemaMap(
  schema: SchemaObject,
  key: string,
  scope: NodeScope,
): [string, unknown][] | undefined {
  if (!Object.hasOwn(schema, key)) return undefined;
  const value = schema[key];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    scope.fail([key], `"${key}" must be an object whose values are schemas`);
    return undefined;
  }
  return Object.keys(value).map((name) => [name, (value as Record<string, unknown>)[name]]);
}

/** A non-empty array-of-schemas keyword (`allOf`, `prefixItems`), read with an issue when wrong. @internal */
export function readSchemaList(schema: SchemaObject, key: string, scope: NodeScope): unknown[] | undefined {
  if (!Object.hasOwn(schema, key)) return undefined;
  const value = schema[key];
  if (!Array.isArray(value) || value.length === 0) {
    scope.fail([key], `"${key}" must be a non-empty array of schemas`);
    return undefined;
  }
  return value;
}
