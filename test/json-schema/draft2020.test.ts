/**
 * Draft 2020-12 keywords the draft 4 suite does not cover (`const`, `contains`, `prefixItems`,
 * `if`/`then`/`else`, `propertyNames`, numeric exclusive bounds, `$defs`, `dependentRequired`,
 * boolean schemas, code point lengths), written for this project as [schema, value, valid] rows.
 */
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/json-schema/index.js';

type Row = [description: string, value: unknown, valid: boolean];

const CASES: { name: string; schema: unknown; rows: Row[] }[] = [
  {
    name: 'const compares as JSON',
    schema: { const: { a: [1, { b: null }] } },
    rows: [
      ['same value, other key order', { a: [1, { b: null }] }, true],
      ['1.0 equals 1', { a: [1.0, { b: null }] }, true],
      ['different nested value', { a: [1, { b: false }] }, false],
      ['extra key', { a: [1, { b: null }], c: 1 }, false],
    ],
  },
  {
    name: 'boolean schemas',
    schema: { properties: { yes: true, no: false } },
    rows: [
      ['true accepts anything', { yes: [1, 'x'] }, true],
      ['false rejects any present value', { no: null }, false],
      ['absent property is fine', {}, true],
    ],
  },
  {
    name: 'prefixItems with items false',
    schema: { prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false },
    rows: [
      ['exact tuple', ['a', 1], true],
      ['shorter tuple', ['a'], true],
      ['wrong position type', [1, 'a'], false],
      ['too many items', ['a', 1, 2], false],
      ['not an array is ignored', 'x', true],
    ],
  },
  {
    name: 'items after prefixItems',
    schema: { prefixItems: [{ type: 'string' }], items: { type: 'number' } },
    rows: [
      ['rest are numbers', ['a', 1, 2.5], true],
      ['a rest item is a string', ['a', 1, 'b'], false],
    ],
  },
  {
    name: 'contains with min and max',
    schema: { contains: { type: 'integer', minimum: 10 }, minContains: 2, maxContains: 3 },
    rows: [
      ['two matches', [10, 11, 'x'], true],
      ['one match', [10, 1], false],
      ['four matches', [10, 11, 12, 13], false],
      ['empty array', [], false],
    ],
  },
  {
    name: 'minContains 0 makes contains optional',
    schema: { contains: { const: 1 }, minContains: 0 },
    rows: [['no match at all', [2, 3], true]],
  },
  {
    name: 'numeric exclusive bounds',
    schema: { exclusiveMinimum: 0, exclusiveMaximum: 10 },
    rows: [
      ['inside', 5, true],
      ['at lower bound', 0, false],
      ['at upper bound', 10, false],
      ['not a number is ignored', '0', true],
    ],
  },
  {
    name: 'if/then/else',
    schema: {
      if: { properties: { kind: { const: 'card' } }, required: ['kind'] },
      then: { required: ['card_number'] },
      else: { required: ['iban'] },
    },
    rows: [
      ['card with number', { kind: 'card', card_number: '4111' }, true],
      ['card without number', { kind: 'card' }, false],
      ['bank with iban', { kind: 'bank', iban: 'DE00' }, true],
      ['bank without iban', { kind: 'bank' }, false],
    ],
  },
  {
    name: 'then without if is ignored',
    schema: { then: false },
    rows: [['anything', 1, true]],
  },
  {
    name: 'propertyNames',
    schema: { propertyNames: { pattern: '^[a-z_]+$', maxLength: 5 } },
    rows: [
      ['lower case short names', { ab: 1, c_d: 2 }, true],
      ['upper case name', { Ab: 1 }, false],
      ['long name', { abcdef: 1 }, false],
      ['non-objects ignored', ['Ab'], true],
    ],
  },
  {
    name: '$defs and recursive $ref',
    schema: {
      $defs: {
        node: { type: 'object', properties: { value: { type: 'integer' }, next: { $ref: '#/$defs/node' } } },
      },
      $ref: '#/$defs/node',
    },
    rows: [
      ['linked list', { value: 1, next: { value: 2, next: { value: 3 } } }, true],
      ['bad deep value', { value: 1, next: { value: 2, next: { value: 'x' } } }, false],
    ],
  },
  {
    name: '$ref with sibling keywords applies both',
    schema: { $defs: { positive: { minimum: 0 } }, $ref: '#/$defs/positive', maximum: 10 },
    rows: [
      ['inside', 5, true],
      ['below the referenced minimum', -1, false],
      ['above the sibling maximum', 11, false],
    ],
  },
  {
    name: 'dependentRequired',
    schema: { dependentRequired: { card_number: ['expiry'] } },
    rows: [
      ['both present', { card_number: '1', expiry: '12/30' }, true],
      ['neither present', {}, true],
      ['dependent missing', { card_number: '1' }, false],
    ],
  },
  {
    name: 'dependentSchemas',
    schema: { dependentSchemas: { discount: { properties: { amount: { minimum: 100 } } } } },
    rows: [
      ['discount on a large amount', { discount: 5, amount: 150 }, true],
      ['discount on a small amount', { discount: 5, amount: 50 }, false],
      ['no discount', { amount: 50 }, true],
    ],
  },
  {
    name: 'lengths count code points',
    schema: { minLength: 2, maxLength: 2 },
    rows: [
      ['two emoji (four UTF-16 units)', '😀😀', true],
      ['one emoji (two UTF-16 units)', '😀', false],
      ['three letters', 'abc', false],
    ],
  },
  {
    name: 'pattern is a Unicode regular expression',
    schema: { pattern: '^\\p{Lu}' },
    rows: [
      ['starts with an upper case letter', 'Émile', true],
      ['starts with lower case', 'émile', false],
    ],
  },
  {
    name: 'integer means no fraction',
    schema: { type: 'integer' },
    rows: [
      ['1.0', 1.0, true],
      ['1.5', 1.5, false],
      ['NaN', Number.NaN, false],
      ['a numeric string', '1', false],
    ],
  },
  {
    name: 'format is an annotation only',
    schema: { type: 'string', format: 'email' },
    rows: [['not an email', 'nope', true]],
  },
  {
    name: 'oneOf with more than one match',
    schema: { oneOf: [{ type: 'number' }, { minimum: 0 }] },
    rows: [
      ['matches only the first', -1, true],
      ['matches both', 1, false],
      ['matches the second only (not a number)', 'x', true],
    ],
  },
];

describe('draft 2020-12 keywords', () => {
  for (const { name, schema, rows } of CASES) {
    describe(name, () => {
      const compiled = compileSchema(schema);
      for (const [description, value, valid] of rows) {
        it(`${description} is ${valid ? 'valid' : 'invalid'}`, () => {
          const issues = compiled.validate(value);
          if (valid) expect(issues).toEqual([]);
          else expect(issues.length).toBeGreaterThan(0);
        });
      }
    });
  }
});
