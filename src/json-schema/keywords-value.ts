/**
 * Keywords about a value itself: `type`, `enum`, `const`, the number keywords and the string keywords.
 * @module
 */
import type { Issue } from '../errors/index.js';
import { isMultipleFrom } from '../schema/number-rules.js';
import {
  codePointLength,
  describeValue,
  isJsonObject,
  jsonEqual,
  orList,
  plural,
  showJson,
  subjectOf,
} from './describe.js';
import { compilePattern, type Pattern } from './pattern.js';
import { spend } from './references.js';
import { allOfChecks, readCount, readNumber, type Check, type KeywordCompiler } from './types.js';

/** The type names JSON Schema knows, each with the words a message uses for it. @internal */
export const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** For `invalid_type` issues: what was expected, so `anyOf` can merge them into one message. @internal */
export const EXPECTED_TYPE = new WeakMap<Issue, string>();

type TypeTest = (value: unknown) => boolean;

const TYPE_TESTS: Readonly<Record<string, TypeTest>> = {
  string: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  integer: (value) => Number.isInteger(value),
  boolean: (value) => typeof value === 'boolean',
  object: isJsonObject,
  array: (value) => Array.isArray(value),
  null: (value) => value === null,
};

function compileType(
  schema: Readonly<Record<string, unknown>>,
  fail: (message: string) => void,
): Check | null {
  if (!Object.hasOwn(schema, 'type')) return null;
  const raw = schema.type;
  const names = Array.isArray(raw) ? raw : [raw];
  const known = names.filter(
    (name): name is string => typeof name === 'string' && Object.hasOwn(TYPE_TESTS, name),
  );
  if (names.length === 0 || known.length !== names.length) {
    fail(
      `"type" must be one of ${Object.keys(TYPE_TESTS).join(', ')}, or an array of them; got ${showJson(raw)}`,
    );
    return null;
  }
  const tests = known.map((name) => TYPE_TESTS[name]!);
  const expected = orList(known.map((name) => TYPE_WORDS[name]!));
  const test: TypeTest =
    tests.length === 1 ? tests[0]! : (value) => tests.some((typeTest) => typeTest(value));
  return function checkType(value, path, out) {
    if (test(value)) return true;
    if (out !== null) {
      const issue: Issue = {
        code: 'invalid_type',
        path,
        message: `${subjectOf(path)} must be ${expected}, got ${describeValue(value)}`,
      };
      EXPECTED_TYPE.set(issue, expected);
      out.push(issue);
    }
    return false;
  };
}

function compileEnum(values: readonly unknown[]): Check {
  const simple = values.every((value) => value === null || typeof value !== 'object');
  const set = new Set(values);
  const shown = values.slice(0, 10).map((value) => showJson(value, 40));
  const list = `${shown.join(', ')}${values.length > 10 ? `, … (${values.length} values)` : ''}`;
  return function checkEnum(value, path, out) {
    if (simple) {
      if (set.has(value)) return true;
    } else if (!spend(values.length, out)) return false;
    else if (values.some((allowed) => jsonEqual(allowed, value))) return true;
    out?.push({
      code: 'invalid_value',
      path,
      message:
        values.length === 1
          ? `${subjectOf(path)} must be ${list}, got ${describeValue(value)}`
          : `${subjectOf(path)} must be one of ${list}, got ${describeValue(value)}`,
    });
    return false;
  };
}

function compileConst(expected: unknown): Check {
  return function checkConst(value, path, out) {
    if (jsonEqual(expected, value)) return true;
    out?.push({
      code: 'invalid_value',
      path,
      message: `${subjectOf(path)} must be ${showJson(expected)}, got ${describeValue(value)}`,
    });
    return false;
  };
}

/** `type`, `enum`, `const`. @internal */
export const compileAnyValueKeywords: KeywordCompiler = (schema, scope) => {
  const checks: Check[] = [];
  const type = compileType(schema, (message) => scope.fail(['type'], message));
  if (type) checks.push(type);
  if (Object.hasOwn(schema, 'enum')) {
    if (Array.isArray(schema.enum)) checks.push(compileEnum(schema.enum));
    else scope.fail(['enum'], '"enum" must be an array of the allowed values');
  }
  if (Object.hasOwn(schema, 'const')) checks.push(compileConst(schema.const));
  return checks.length === 0 ? null : allOfChecks(checks);
};

type NumberRule = (value: number) => boolean;

/** `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`. @internal */
export const compileNumberKeywords: KeywordCompiler = (schema, scope) => {
  const rules: { test: NumberRule; code: string; words: string }[] = [];
  for (const key of ['exclusiveMinimum', 'exclusiveMaximum'] as const) {
    if (typeof schema[key] === 'boolean') {
      scope.fail([key], `"${key}" must be a number (the boolean form belongs to JSON Schema draft 4)`);
    }
  }
  const minimum = readNumber(schema, 'minimum', scope);
  if (minimum !== undefined)
    rules.push({ test: (v) => v >= minimum, code: 'too_small', words: `at least ${minimum}` });
  const exclusiveMinimum =
    typeof schema.exclusiveMinimum === 'boolean' ? undefined : readNumber(schema, 'exclusiveMinimum', scope);
  if (exclusiveMinimum !== undefined) {
    rules.push({
      test: (v) => v > exclusiveMinimum,
      code: 'too_small',
      words: `greater than ${exclusiveMinimum}`,
    });
  }
  const maximum = readNumber(schema, 'maximum', scope);
  if (maximum !== undefined)
    rules.push({ test: (v) => v <= maximum, code: 'too_big', words: `at most ${maximum}` });
  const exclusiveMaximum =
    typeof schema.exclusiveMaximum === 'boolean' ? undefined : readNumber(schema, 'exclusiveMaximum', scope);
  if (exclusiveMaximum !== undefined) {
    rules.push({
      test: (v) => v < exclusiveMaximum,
      code: 'too_big',
      words: `less than ${exclusiveMaximum}`,
    });
  }
  const multipleOf = readNumber(schema, 'multipleOf', scope);
  if (multipleOf !== undefined) {
    if (multipleOf <= 0) scope.fail(['multipleOf'], '"multipleOf" must be greater than 0');
    else
      rules.push({
        test: (v) => isMultipleFrom(v, multipleOf),
        code: 'not_multiple_of',
        words: `a multiple of ${multipleOf}`,
      });
  }
  if (rules.length === 0) return null;
  return function checkNumber(value, path, out) {
    if (typeof value !== 'number') return true;
    let ok = true;
    for (const rule of rules) {
      if (rule.test(value)) continue;
      if (out === null) return false;
      ok = false;
      out.push({ code: rule.code, path, message: `${subjectOf(path)} must be ${rule.words}, got ${value}` });
    }
    return ok;
  };
};

/**
 * `minLength`, `maxLength` (in code points), `pattern` (linear time, see pattern.ts), and `format`
 * (an annotation only). @internal
 */
export const compileStringKeywords: KeywordCompiler = (schema, scope) => {
  const minLength = readCount(schema, 'minLength', scope);
  const maxLength = readCount(schema, 'maxLength', scope);
  if (Object.hasOwn(schema, 'format') && typeof schema.format !== 'string')
    scope.fail(['format'], '"format" must be a string');
  let pattern: Pattern | undefined;
  if (Object.hasOwn(schema, 'pattern')) {
    if (typeof schema.pattern !== 'string') scope.fail(['pattern'], '"pattern" must be a string');
    else {
      const compiled = compilePattern(schema.pattern);
      if (compiled.ok) pattern = compiled.pattern;
      else scope.fail(['pattern'], `"pattern" ${compiled.message}`, compiled.code);
    }
  }
  if (minLength === undefined && maxLength === undefined && pattern === undefined) return null;
  const min = minLength ?? 0;
  const max = maxLength ?? Number.POSITIVE_INFINITY;
  return function checkString(value, path, out) {
    if (typeof value !== 'string') return true;
    let ok = true;
    // A string has between length/2 and length code points: count them only when that can matter.
    if (value.length < min * 2 || value.length > max) {
      const length = codePointLength(value);
      if (length < min) {
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'too_small',
          path,
          message:
            min === 1
              ? `${subjectOf(path)} must not be empty`
              : `${subjectOf(path)} must be at least ${plural(min, 'character')} long, got ${length}`,
        });
      } else if (length > max) {
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'too_big',
          path,
          message: `${subjectOf(path)} must be at most ${plural(max, 'character')} long, got ${length}`,
        });
      }
    }
    if (pattern !== undefined) {
      // Linear time, but a test may read each character once per instruction: that is its cost.
      if (!spend((value.length + 1) * pattern.size, out)) return false;
      if (pattern.test(value)) return ok;
      if (out === null) return false;
      ok = false;
      out.push({
        code: 'invalid_format',
        path,
        message: `${subjectOf(path)} must match the pattern /${pattern.source}/, got ${describeValue(value)}`,
      });
    }
    return ok;
  };
};
