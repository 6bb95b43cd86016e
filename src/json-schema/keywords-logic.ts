/**
 * Applicators on the same value: `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`.
 * `anyOf` and `oneOf` try their options without collecting issues and, when none fits, report one
 * summarized issue, so nested unions cannot multiply the number of issues.
 * @module
 */
import type { Issue } from '../errors/index.js';
import { describeValue, orList, subjectOf } from './describe.js';
import { EXPECTED_TYPE } from './keywords-value.js';
import { allOfChecks, readSchemaList, type Check, type KeywordCompiler } from './types.js';

/** Longest message a union summary may grow to, so nested unions stay readable. */
const MAX_SUMMARY = 400;

/** One message for a value that fits none of the options of `anyOf`/`oneOf`. */
function summarizeNoMatch(options: readonly Check[], keyword: string, value: unknown, path: string): Issue {
  const perOption = options.map((option) => {
    const issues: Issue[] = [];
    option(value, path, issues);
    return issues;
  });
  // Options that differ only by type ("a string or null") read best as one type issue.
  const onlyTypes = perOption.every(
    (issues) => issues.length === 1 && issues[0]!.path === path && EXPECTED_TYPE.has(issues[0]!),
  );
  if (onlyTypes) {
    const expected = orList(perOption.map((issues) => EXPECTED_TYPE.get(issues[0]!)!));
    const issue: Issue = {
      code: 'invalid_type',
      path,
      message: `${subjectOf(path)} must be ${expected}, got ${describeValue(value)}`,
    };
    EXPECTED_TYPE.set(issue, expected);
    return issue;
  }
  const reasons = perOption.map((issues, i) => {
    const first = issues[0];
    if (first === undefined) return `option ${i + 1} does not match`;
    const where = first.path === path || first.path === '' ? '' : `${first.path}: `;
    return `option ${i + 1}: ${where}${first.message}`;
  });
  let message = `${subjectOf(path)} does not match any of the ${options.length} options in "${keyword}" (${reasons.join('; ')})`;
  if (message.length > MAX_SUMMARY) message = `${message.slice(0, MAX_SUMMARY - 2)}…)`;
  return { code: 'no_match', path, message };
}

function compileAnyOf(options: readonly Check[]): Check {
  return function checkAnyOf(value, path, out) {
    for (let i = 0; i < options.length; i += 1) if (options[i]!(value, path, null)) return true;
    out?.push(summarizeNoMatch(options, 'anyOf', value, path));
    return false;
  };
}

function compileOneOf(options: readonly Check[]): Check {
  return function checkOneOf(value, path, out) {
    let first = -1;
    for (let i = 0; i < options.length; i += 1) {
      if (!options[i]!(value, path, null)) continue;
      if (first === -1) {
        first = i;
        continue;
      }
      out?.push({
        code: 'ambiguous_match',
        path,
        message: `${subjectOf(path)} must match exactly one of the options in "oneOf", but matches options ${first + 1} and ${i + 1}`,
      });
      return false;
    }
    if (first !== -1) return true;
    out?.push(summarizeNoMatch(options, 'oneOf', value, path));
    return false;
  };
}

/** `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` of one schema. @internal */
export const compileLogicKeywords: KeywordCompiler = (schema, scope) => {
  const checks: Check[] = [];
  if (Object.hasOwn(schema, '$ref')) {
    if (typeof schema.$ref !== 'string') scope.fail(['$ref'], '"$ref" must be a string');
    else checks.push(scope.ref(schema.$ref));
  }
  const allOf = readSchemaList(schema, 'allOf', scope);
  if (allOf) checks.push(allOfChecks(allOf.map((sub, i) => scope.sub(['allOf', i], sub, false))));
  const anyOf = readSchemaList(schema, 'anyOf', scope);
  if (anyOf) checks.push(compileAnyOf(anyOf.map((sub, i) => scope.sub(['anyOf', i], sub, false))));
  const oneOf = readSchemaList(schema, 'oneOf', scope);
  if (oneOf) checks.push(compileOneOf(oneOf.map((sub, i) => scope.sub(['oneOf', i], sub, false))));
  if (Object.hasOwn(schema, 'not')) {
    const not = scope.sub(['not'], schema.not, false);
    checks.push(function checkNot(value, path, out) {
      if (!not(value, path, null)) return true;
      out?.push({
        code: 'not_allowed',
        path,
        message: `${subjectOf(path)} must not match the schema in "not", got ${describeValue(value)}`,
      });
      return false;
    });
  }
  const thenCheck = Object.hasOwn(schema, 'then') ? scope.sub(['then'], schema.then, false) : null;
  const elseCheck = Object.hasOwn(schema, 'else') ? scope.sub(['else'], schema.else, false) : null;
  if (Object.hasOwn(schema, 'if')) {
    const ifCheck = scope.sub(['if'], schema.if, false);
    if (thenCheck !== null || elseCheck !== null) {
      checks.push(function checkIf(value, path, out) {
        const branch = ifCheck(value, path, null) ? thenCheck : elseCheck;
        return branch === null || branch(value, path, out);
      });
    }
  }
  return checks.length === 0 ? null : allOfChecks(checks);
};
