/**
 * Object keywords: `properties`, `required`, `additionalProperties`, `patternProperties`,
 * `propertyNames`, `minProperties`, `maxProperties`, `dependentRequired`, `dependentSchemas`.
 * Property names are data: only own keys are read (`Object.keys`, `Object.hasOwn`), so `__proto__`
 * or `constructor` are ordinary names. `patternProperties` keys are patterns run in linear time
 * (see pattern.ts), each test paid for from the validation budget.
 * @module
 */
import type { Issue } from '../errors/index.js';
import { isJsonObject, keyPath, plural, subjectOf } from './describe.js';
import { compilePattern, type Pattern } from './pattern.js';
import { spend } from './references.js';
import {
  readCount,
  readSchemaMap,
  type Check,
  type KeywordCompiler,
  type NodeScope,
  type SchemaObject,
} from './types.js';

interface PropertyRule {
  key: string;
  check: Check;
}

interface PatternRule {
  pattern: Pattern;
  check: Check;
}

function readNames(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) return undefined;
  return value as string[];
}

function readDependentRequired(schema: SchemaObject, scope: NodeScope): [string, string[]][] {
  const raw = schema.dependentRequired;
  if (!isJsonObject(raw)) {
    scope.fail(
      ['dependentRequired'],
      '"dependentRequired" must be an object whose values are arrays of property names',
    );
    return [];
  }
  const rules: [string, string[]][] = [];
  for (const key of Object.keys(raw)) {
    const names = readNames(raw[key]);
    if (names === undefined) scope.fail(['dependentRequired', key], 'must be an array of property names');
    else rules.push([key, names]);
  }
  return rules;
}

/** The object keywords of one schema as a single check. @internal */
export const compileObjectKeywords: KeywordCompiler = (schema, scope) => {
  const properties: PropertyRule[] = (readSchemaMap(schema, 'properties', scope) ?? []).map(([key, sub]) => ({
    key,
    check: scope.sub(['properties', key], sub, true),
  }));
  const patterns: PatternRule[] = [];
  for (const [source, sub] of readSchemaMap(schema, 'patternProperties', scope) ?? []) {
    const compiled = compilePattern(source);
    if (compiled.ok) {
      patterns.push({
        pattern: compiled.pattern,
        check: scope.sub(['patternProperties', source], sub, true),
      });
    } else scope.fail(['patternProperties', source], compiled.message, compiled.code);
  }
  let required: string[] = [];
  if (Object.hasOwn(schema, 'required')) {
    const names = readNames(schema.required);
    if (names === undefined) scope.fail(['required'], '"required" must be an array of property names');
    else required = names;
  }
  const hasAdditional = Object.hasOwn(schema, 'additionalProperties');
  const additional = hasAdditional
    ? scope.sub(['additionalProperties'], schema.additionalProperties, true)
    : null;
  const noAdditional = schema.additionalProperties === false;
  const propertyNames = Object.hasOwn(schema, 'propertyNames')
    ? scope.sub(['propertyNames'], schema.propertyNames, true)
    : null;
  const minProperties = readCount(schema, 'minProperties', scope);
  const maxProperties = readCount(schema, 'maxProperties', scope);
  const dependentRequired = Object.hasOwn(schema, 'dependentRequired')
    ? readDependentRequired(schema, scope)
    : [];
  const dependentSchemas = (readSchemaMap(schema, 'dependentSchemas', scope) ?? []).map(([key, sub]) => ({
    key,
    check: scope.sub(['dependentSchemas', key], sub, false),
  }));

  const walkKeys = additional !== null || patterns.length > 0 || propertyNames !== null;
  const known = new Set(properties.map((rule) => rule.key));
  if (
    properties.length === 0 &&
    required.length === 0 &&
    !walkKeys &&
    minProperties === undefined &&
    maxProperties === undefined &&
    dependentRequired.length === 0 &&
    dependentSchemas.length === 0
  ) {
    return null;
  }

  function checkKeys(object: Record<string, unknown>, path: string, out: Issue[] | null): boolean {
    let ok = true;
    for (const key of Object.keys(object)) {
      const child = out === null ? '' : keyPath(path, key);
      if (propertyNames !== null) {
        const nameIssues: Issue[] | null = out === null ? null : [];
        if (!propertyNames(key, child, nameIssues)) {
          if (out === null) return false;
          ok = false;
          for (const issue of nameIssues!) {
            out.push({
              code: 'invalid_property_name',
              path: child,
              message: `property name "${key}" is not allowed: ${issue.message}`,
            });
          }
        }
      }
      let matched = known.has(key);
      for (const rule of patterns) {
        if (!spend((key.length + 1) * rule.pattern.size, out)) return false;
        if (!rule.pattern.test(key)) continue;
        matched = true;
        if (!rule.check(object[key], child, out)) {
          if (out === null) return false;
          ok = false;
        }
      }
      if (matched || additional === null) continue;
      if (noAdditional) {
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'unknown_property',
          path: child,
          message: `unknown property "${key}"; no other properties are allowed here`,
        });
      } else if (!additional(object[key], child, out)) {
        if (out === null) return false;
        ok = false;
      }
    }
    return ok;
  }

  return function checkObject(value, path, out) {
    if (!isJsonObject(value)) return true;
    let ok = true;
    for (let i = 0; i < properties.length; i += 1) {
      const rule = properties[i]!;
      if (!Object.hasOwn(value, rule.key)) continue;
      if (!rule.check(value[rule.key], out === null ? '' : keyPath(path, rule.key), out)) {
        if (out === null) return false;
        ok = false;
      }
    }
    for (let i = 0; i < required.length; i += 1) {
      const key = required[i]!;
      if (Object.hasOwn(value, key)) continue;
      if (out === null) return false;
      ok = false;
      out.push({ code: 'required', path: keyPath(path, key), message: `${key} is required` });
    }
    if (walkKeys && !checkKeys(value, path, out)) {
      if (out === null) return false;
      ok = false;
    }
    if (minProperties !== undefined || maxProperties !== undefined) {
      const count = Object.keys(value).length;
      if (minProperties !== undefined && count < minProperties) {
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'too_small',
          path,
          message: `${subjectOf(path)} must have at least ${plural(minProperties, 'property', 'properties')}, got ${count}`,
        });
      }
      if (maxProperties !== undefined && count > maxProperties) {
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'too_big',
          path,
          message: `${subjectOf(path)} must have at most ${plural(maxProperties, 'property', 'properties')}, got ${count}`,
        });
      }
    }
    for (const [key, names] of dependentRequired) {
      if (!Object.hasOwn(value, key)) continue;
      for (const name of names) {
        if (Object.hasOwn(value, name)) continue;
        if (out === null) return false;
        ok = false;
        out.push({
          code: 'required',
          path: keyPath(path, name),
          message: `${name} is required when ${key} is present`,
        });
      }
    }
    for (const rule of dependentSchemas) {
      if (Object.hasOwn(value, rule.key) && !rule.check(value, path, out)) {
        if (out === null) return false;
        ok = false;
      }
    }
    return ok;
  };
};
