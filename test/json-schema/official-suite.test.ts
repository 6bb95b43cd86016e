/**
 * Runs the official JSON-Schema-Test-Suite as shipped by the `json-schema-test-suite` npm package.
 * That package (0.0.10) ships only draft 3 and draft 4 files, so the draft 4 cases are run after a
 * mechanical translation of the draft-4-only spellings into their draft 2020-12 equivalents:
 * array `items` -> `prefixItems`, `additionalItems` -> `items`, boolean `exclusiveMaximum` ->
 * numeric `exclusiveMaximum`, `dependencies` -> `dependentRequired`/`dependentSchemas`, and an
 * unknown keyword `k` (which this validator rejects) -> the ignored extension key `x-k`, with the
 * `$ref`s that point at it.
 * Every case runs except those listed in SKIPPED, each with its reason.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUPPORTED_KEYWORDS, compileSchema } from '../../src/json-schema/index.js';

const require = createRequire(import.meta.url);
const SUITE_DIR = join(dirname(require.resolve('json-schema-test-suite/package.json')), 'tests', 'draft4');

/** Whole files not run, with the reason. */
const SKIPPED_FILES: Record<string, string> = {
  'refRemote.json': 'remote $ref (http://localhost:1234/...) is not supported by design',
  'optional/format.json': 'format is an annotation only; formats are not asserted',
  'optional/zeroTerminatedFloats.json': 'draft 4 only: since draft 6 (and in JavaScript) 1.0 is an integer',
};

/** Groups (file + group description) not run, with the reason. */
const SKIPPED_GROUPS: Record<string, string> = {
  'definitions.json > valid definition': 'uses a remote $ref to the draft 4 meta-schema',
  'definitions.json > invalid definition': 'uses a remote $ref to the draft 4 meta-schema',
  'ref.json > remote ref, containing refs itself': 'uses a remote $ref to the draft 4 meta-schema',
};

interface SuiteCase {
  description: string;
  data: unknown;
  valid: boolean;
}
interface SuiteGroup {
  description: string;
  schema: unknown;
  tests: SuiteCase[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mapValues(value: unknown, fn: (v: unknown) => unknown): unknown {
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, fn(value[key]));
  return out;
}

function rewriteRef(ref: string): string {
  const match = /^#\/([^/]+)(.*)$/.exec(ref);
  if (match === null) return ref;
  const first = decodeURIComponent(match[1]!).replaceAll('~1', '/').replaceAll('~0', '~');
  if (first === 'items') return `#/prefixItems${match[2]!}`;
  return SUPPORTED_KEYWORDS.includes(first) ? ref : `#/x-${match[1]!}${match[2]!}`;
}

/** Rewrites draft 4 spellings into draft 2020-12 ones, schema positions only. */
function toDraft2020(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    switch (key) {
      case 'properties':
      case 'patternProperties':
      case 'definitions':
        setOwn(out, key, mapValues(value, toDraft2020));
        break;
      case 'items':
        if (Array.isArray(value)) setOwn(out, 'prefixItems', value.map(toDraft2020));
        else setOwn(out, 'items', toDraft2020(value));
        break;
      case 'additionalItems':
        if (Array.isArray(schema.items)) setOwn(out, 'items', toDraft2020(value));
        break;
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        setOwn(out, key, (value as unknown[]).map(toDraft2020));
        break;
      case 'not':
      case 'additionalProperties':
        setOwn(out, key, toDraft2020(value));
        break;
      case 'maximum':
      case 'minimum': {
        const exclusive = key === 'maximum' ? 'exclusiveMaximum' : 'exclusiveMinimum';
        setOwn(out, schema[exclusive] === true ? exclusive : key, value);
        break;
      }
      case 'exclusiveMaximum':
      case 'exclusiveMinimum':
        break;
      case 'dependencies':
        for (const name of Object.keys(value as object)) {
          const dependency = (value as Record<string, unknown>)[name];
          const target = Array.isArray(dependency) ? 'dependentRequired' : 'dependentSchemas';
          if (!isObject(out[target])) setOwn(out, target, {});
          setOwn(
            out[target] as Record<string, unknown>,
            name,
            Array.isArray(dependency) ? dependency : toDraft2020(dependency),
          );
        }
        break;
      case '$ref':
        setOwn(out, key, rewriteRef(value as string));
        break;
      default:
        setOwn(out, SUPPORTED_KEYWORDS.includes(key) ? key : `x-${key}`, value);
    }
  }
  return out;
}

function suiteFiles(): string[] {
  const files = readdirSync(SUITE_DIR).filter((name) => name.endsWith('.json'));
  const optional = readdirSync(join(SUITE_DIR, 'optional')).filter((name) => name.endsWith('.json'));
  return [...files, ...optional.map((name) => `optional/${name}`)];
}

let ran = 0;
for (const file of suiteFiles()) {
  const groups = JSON.parse(readFileSync(join(SUITE_DIR, file), 'utf8')) as SuiteGroup[];
  const fileSkip = SKIPPED_FILES[file];
  describe.skipIf(fileSkip !== undefined)(`draft4/${file}`, () => {
    for (const group of groups) {
      const groupSkip = SKIPPED_GROUPS[`${file} > ${group.description}`];
      describe.skipIf(groupSkip !== undefined)(group.description, () => {
        for (const test of group.tests) {
          it(`${test.description} (${test.valid ? 'valid' : 'invalid'})`, () => {
            ran += 1;
            const compiled = compileSchema(toDraft2020(group.schema));
            const issues = compiled.validate(test.data);
            if (test.valid) expect(issues).toEqual([]);
            else {
              expect(issues.length).toBeGreaterThan(0);
              for (const issue of issues) {
                expect(typeof issue.path).toBe('string');
                expect(issue.message.length).toBeGreaterThan(5);
              }
            }
          });
        }
      });
    }
  });
}

describe('suite coverage', () => {
  it('ran the suite cases', () => {
    expect(ran).toBeGreaterThan(200);
  });
});
