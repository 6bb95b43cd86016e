import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/json-schema/index.js';

const SCHEMA = compileSchema({
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 5 },
    amount: { type: 'number', minimum: 0, multipleOf: 0.5 },
    tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]*$' }, uniqueItems: true, maxItems: 3 },
    customer: {
      type: 'object',
      properties: { id: { type: 'integer' }, note: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
      required: ['id'],
      additionalProperties: false,
    },
  },
  patternProperties: { '^x_': { type: 'boolean' } },
  required: ['name', 'amount'],
});

const TOKEN = /^(?:\.?([^.[\]"]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])/;

/** Reads the value at an issue path; `missing` when the last step does not exist (a required key). */
function resolve(root: unknown, path: string): { found: boolean } {
  let current = root;
  let rest = path;
  while (rest !== '') {
    const match = TOKEN.exec(rest);
    if (match === null) throw new Error(`unparsable path ${path}`);
    rest = rest.slice(match[0].length);
    const key =
      match[2] !== undefined
        ? Number(match[2])
        : match[3] !== undefined
          ? (JSON.parse(match[3]) as string)
          : match[1]!;
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key))
      return { found: false };
    current = (current as Record<string | number, unknown>)[key];
  }
  return { found: true };
}

const arbitraryInput = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      name: fc.oneof(fc.string({ maxLength: 7 }), fc.jsonValue()),
      amount: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.jsonValue()),
      tags: fc.oneof(fc.array(fc.string({ maxLength: 3 }), { maxLength: 5 }), fc.jsonValue()),
      customer: fc.oneof(
        fc.record({ id: fc.jsonValue(), note: fc.jsonValue() }, { requiredKeys: [] }),
        fc.jsonValue(),
      ),
      x_flag: fc.jsonValue(),
    },
    { requiredKeys: [] },
  ),
);

describe('validate on arbitrary JSON', () => {
  it('never throws, and every issue points at an existing value or a missing required property', () => {
    fc.assert(
      fc.property(arbitraryInput, (value) => {
        const issues = SCHEMA.validate(value);
        for (const issue of issues) {
          expect(issue.message.length).toBeGreaterThan(0);
          if (issue.code === 'required') expect(resolve(value, issue.path).found).toBe(false);
          else expect(resolve(value, issue.path).found).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the same answer in repeated runs (no state leaks between validations)', () => {
    fc.assert(
      fc.property(arbitraryInput, (value) => {
        expect(SCHEMA.validate(value)).toEqual(SCHEMA.validate(value));
      }),
      { numRuns: 300 },
    );
  });
});
