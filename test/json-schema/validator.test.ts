import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ValidationError, type Issue } from '../../src/errors/index.js';
import { SUPPORTED_KEYWORDS, compileSchema } from '../../src/json-schema/index.js';

function compileError(schema: unknown, options?: { path: string }): ValidationError {
  try {
    compileSchema(schema, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected compileSchema to throw');
}

const ORDER = {
  type: 'object',
  properties: {
    customer_id: { type: 'integer' },
    amount: { type: 'number', minimum: 0 },
    customer: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1 },
        address: {
          type: 'array',
          items: { type: 'object', properties: { zip: { type: 'string', pattern: '^[0-9]{5}$' } } },
        },
      },
      additionalProperties: false,
    },
  },
  required: ['customer_id', 'amount'],
};

describe('validate: issues', () => {
  const order = compileSchema(ORDER);

  it('returns no issue for a valid value', () => {
    expect(
      order.validate({ customer_id: 1, amount: 0, customer: { name: 'Ada', address: [{ zip: '12345' }] } }),
    ).toEqual([]);
  });

  it('collects every problem with its path and a readable message', () => {
    const issues = order.validate({
      amount: 'x',
      customer: { name: '', address: [{ zip: '1' }, { zip: 12345 }], vip: true },
    });
    expect(issues).toEqual<Issue[]>([
      { code: 'invalid_type', path: 'amount', message: 'amount must be a number, got the string "x"' },
      { code: 'too_small', path: 'customer.name', message: 'name must not be empty' },
      {
        code: 'invalid_format',
        path: 'customer.address[0].zip',
        message: 'zip must match the pattern /^[0-9]{5}$/, got the string "1"',
      },
      {
        code: 'invalid_type',
        path: 'customer.address[1].zip',
        message: 'zip must be a string, got the number 12345',
      },
      {
        code: 'unknown_property',
        path: 'customer.vip',
        message: 'unknown property "vip"; no other properties are allowed here',
      },
      { code: 'required', path: 'customer_id', message: 'customer_id is required' },
    ]);
  });

  it('names the root "value" and quotes property names that are not plain', () => {
    const schema = compileSchema({
      type: 'object',
      properties: { 'a.b': { type: 'string' } },
      required: ['x y '],
    });
    expect(schema.validate(3)).toEqual([
      { code: 'invalid_type', path: '', message: 'value must be an object, got the number 3' },
    ]);
    expect(schema.validate({ 'a.b': 1 }).map((issue) => issue.path)).toEqual(['["a.b"]', '["x y "]']);
  });

  it('reports bounds, enum, const, uniqueItems and contains with the numbers involved', () => {
    const schema = compileSchema({
      type: 'object',
      properties: {
        qty: { type: 'integer', exclusiveMinimum: 0, multipleOf: 5 },
        status: { enum: ['open', 'closed'] },
        version: { const: 2 },
        tags: { type: 'array', maxItems: 2, uniqueItems: true, contains: { const: 'main' } },
      },
    });
    const messages = schema
      .validate({ qty: -3, status: 'gone', version: 1, tags: ['a', 'b', 'a'] })
      .map((i) => `${i.path}: ${i.message}`);
    expect(messages).toEqual([
      'qty: qty must be greater than 0, got -3',
      'qty: qty must be a multiple of 5, got -3',
      'status: status must be one of "open", "closed", got the string "gone"',
      'version: version must be 2, got the number 1',
      'tags: tags must have at most 2 items, got 3',
      'tags: tags must not contain duplicates: items 0 and 2 are equal',
      'tags: tags must contain at least 1 item matching "contains", found 0',
    ]);
  });

  it('compares items as JSON for uniqueItems, ignoring key order', () => {
    const schema = compileSchema({ uniqueItems: true });
    expect(
      schema.validate([
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ]),
    ).toHaveLength(1);
    expect(schema.validate([{ a: 1 }, { a: '1' }, 1, '1', [1], null])).toEqual([]);
  });
});

describe('validate: anyOf and oneOf are summarized', () => {
  it('merges options that differ only by type into one type issue', () => {
    const schema = compileSchema({ properties: { note: { anyOf: [{ type: 'string' }, { type: 'null' }] } } });
    expect(schema.validate({ note: 5 })).toEqual([
      { code: 'invalid_type', path: 'note', message: 'note must be a string or null, got the number 5' },
    ]);
  });

  it('reports one issue naming each option when nothing matches', () => {
    const schema = compileSchema({
      oneOf: [
        { type: 'object', properties: { kind: { const: 'card' } }, required: ['kind', 'number'] },
        { type: 'object', properties: { kind: { const: 'bank' } }, required: ['kind', 'iban'] },
      ],
    });
    const issues = schema.validate({ kind: 'cash' });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'no_match', path: '' });
    expect(issues[0]!.message).toBe(
      'value does not match any of the 2 options in "oneOf" (option 1: kind: kind must be "card", got the string "cash"; option 2: kind: kind must be "bank", got the string "cash")',
    );
  });

  it('says which options match when oneOf matches more than one', () => {
    const schema = compileSchema({ oneOf: [{ type: 'integer' }, { minimum: 0 }, { maximum: 100 }] });
    expect(schema.validate(5)).toEqual([
      {
        code: 'ambiguous_match',
        path: '',
        message: 'value must match exactly one of the options in "oneOf", but matches options 1 and 2',
      },
    ]);
  });

  it('keeps nested unions to one short issue per failing value', () => {
    let schema: unknown = { type: 'string' };
    for (let i = 0; i < 6; i += 1)
      schema = { anyOf: [schema, { type: 'object', required: [`k${i}`] }, { type: 'array' }] };
    const compiled = compileSchema({ type: 'array', items: schema });
    const issues = compiled.validate([1, 2, 3]);
    expect(issues).toHaveLength(3);
    for (const issue of issues) expect(issue.message.length).toBeLessThanOrEqual(400);
  });
});

describe('compileSchema: rejects what it does not support, with the schema path', () => {
  it('names an unsupported keyword and where it is, after the given prefix', () => {
    const error = compileError(
      { properties: { a: { unevaluatedProperties: false } } },
      { path: 'input_schema' },
    );
    expect(error.issues).toEqual([
      {
        code: 'unsupported_keyword',
        path: 'input_schema.properties.a.unevaluatedProperties',
        message: 'keyword "unevaluatedProperties" is not supported',
      },
    ]);
    expect(error.message).toContain('input_schema.properties.a.unevaluatedProperties');
  });

  it.each([
    ['$dynamicRef', { $dynamicRef: '#meta' }, '$dynamicRef'],
    ['unevaluatedItems', { items: { unevaluatedItems: false } }, 'items.unevaluatedItems'],
    ['$anchor', { $anchor: 'x' }, '$anchor'],
    ['a typo', { type: 'object', requird: ['a'] }, 'requird'],
    ['a nested $id', { properties: { a: { $id: 'https://example.com/a' } } }, 'properties.a.$id'],
    ['a remote $ref', { allOf: [{ $ref: 'https://example.com/schema.json' }] }, 'allOf[0].$ref'],
    ['an anchor $ref', { $ref: '#node' }, '$ref'],
  ])('rejects %s', (_name, schema, path) => {
    const error = compileError(schema, { path: 'workflow_input.input_schema' });
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({
      code: 'unsupported_keyword',
      path: `workflow_input.input_schema.${path}`,
    });
  });

  it('lists every malformed keyword at once', () => {
    const error = compileError({
      type: 'strng',
      required: 'name',
      properties: {
        code: { pattern: '([a-z' },
        list: { items: [{ type: 'string' }] },
        n: { exclusiveMinimum: true, minLength: -1 },
      },
      $ref: '#/$defs/missing',
    });
    expect(error.issues.map((issue) => `${issue.code} ${issue.path}`)).toEqual([
      'invalid_schema type',
      'invalid_schema properties.code.pattern',
      'invalid_schema properties.list.items',
      'invalid_schema properties.n.exclusiveMinimum',
      'invalid_schema properties.n.minLength',
      'invalid_schema required',
      'unresolved_ref $ref',
    ]);
    expect(error.issues[0]!.message).toContain('"strng"');
    expect(error.issues[2]!.message).toContain('prefixItems');
  });

  it('accepts annotations and x- extensions, and lists its keywords', () => {
    const schema = compileSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://example.com/order',
      $comment: 'c',
      title: 'Order',
      description: 'd',
      default: {},
      examples: [{}],
      deprecated: false,
      readOnly: false,
      writeOnly: false,
      'x-ui': { widget: 'text' },
    });
    expect(schema.validate(1)).toEqual([]);
    expect(SUPPORTED_KEYWORDS).toContain('prefixItems');
    expect(SUPPORTED_KEYWORDS).not.toContain('unevaluatedProperties');
  });
});

describe('hostile schemas and values', () => {
  function nest(levels: number): unknown {
    let schema: unknown = { type: 'string' };
    for (let i = 0; i < levels; i += 1) schema = { properties: { a: schema } };
    return schema;
  }

  it('accepts 64 levels of nesting and rejects deeper schemas with one issue', () => {
    expect(() => compileSchema(nest(64))).not.toThrow();
    const error = compileError(nest(100_000));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]!.code).toBe('schema_too_deep');
    expect(error.issues[0]!.path.startsWith('properties.a.properties.a')).toBe(true);
  });

  it.each([
    ['a self reference', { $ref: '#' }],
    [
      'two definitions referring to each other',
      { $defs: { a: { $ref: '#/$defs/b' }, b: { allOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' },
    ],
    [
      'a loop also reachable through a property',
      {
        $defs: {
          a: { properties: { x: { $ref: '#/$defs/b' } }, allOf: [{ $ref: '#/$defs/b' }] },
          b: { not: { $ref: '#/$defs/a' } },
        },
      },
    ],
  ])('rejects a $ref loop that never reaches a property or item: %s', (_name, schema) => {
    const error = compileError(schema);
    expect(error.issues.map((issue) => issue.code)).toEqual(['ref_loop']);
    expect(error.issues[0]!.message).toContain('->');
  });

  it('compiles a long chain of references without exhausting the stack', () => {
    const chain = (length: number): unknown => {
      const defs: Record<string, unknown> = {};
      for (let i = 0; i < length; i += 1)
        defs[`d${i}`] = i === length - 1 ? { type: 'integer' } : { $ref: `#/$defs/d${i + 1}` };
      return { $defs: defs, $ref: '#/$defs/d0' };
    };
    const short = compileSchema(chain(300));
    expect(short.validate(1)).toEqual([]);
    expect(short.validate('x')).toEqual([
      { code: 'invalid_type', path: '', message: 'value must be an integer, got the string "x"' },
    ]);
    const long = compileSchema(chain(5000));
    expect(long.validate(1).map((issue) => issue.code)).toEqual(['too_deep']);
  });

  it('reports data nested too deeply for a recursive schema instead of overflowing the stack', () => {
    const schema = compileSchema({ type: 'object', properties: { child: { $ref: '#' } } });
    let value: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i += 1) value = { child: value };
    const issues = schema.validate(value);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.code).toBe('too_deep');
    let shallow: Record<string, unknown> = {};
    for (let i = 0; i < 100; i += 1) shallow = { child: shallow };
    expect(schema.validate(shallow)).toEqual([]);
  });

  it('stops a schema whose references would take exponential time, with one issue', () => {
    const defs: Record<string, unknown> = { a60: false };
    for (let i = 0; i < 60; i += 1)
      defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
    const schema = compileSchema({ $defs: defs, $ref: '#/$defs/a0' });
    const started = performance.now();
    const issues = schema.validate(1);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(issues.map((issue) => issue.code)).toEqual(['no_match', 'too_complex']);
  });

  it('rejects a schema built from shared objects that unfolds into too many schemas', () => {
    let shared: unknown = { type: 'string' };
    for (let i = 0; i < 30; i += 1) shared = { anyOf: [shared, shared] };
    const error = compileError(shared);
    expect(error.issues.map((issue) => issue.code)).toEqual(['schema_too_large']);
  });

  it('treats __proto__, constructor and toString as plain property names', () => {
    // Written as JSON: in an object literal `__proto__:` would set the prototype instead.
    const schema = compileSchema(
      JSON.parse(`{
        "type": "object",
        "properties": { "__proto__": { "type": "string" }, "constructor": { "type": "number" } },
        "required": ["__proto__", "constructor", "toString"],
        "additionalProperties": false
      }`),
    );
    expect(schema.validate({}).map((issue) => issue.path)).toEqual(['__proto__', 'constructor', 'toString']);
    expect(schema.validate(JSON.parse('{"__proto__": 5, "constructor": 1, "toString": 2}'))).toEqual([
      { code: 'invalid_type', path: '__proto__', message: '__proto__ must be a string, got the number 5' },
      {
        code: 'unknown_property',
        path: 'toString',
        message: 'unknown property "toString"; no other properties are allowed here',
      },
    ]);
    const polluting = compileSchema({ additionalProperties: { type: 'object' } });
    expect(polluting.validate(JSON.parse('{"__proto__": {"polluted": true}}'))).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not find enum or const values on the prototype chain', () => {
    expect(compileSchema({ enum: ['a'] }).validate('constructor')).toHaveLength(1);
    expect(compileSchema({ const: {} }).validate(JSON.parse('{"__proto__": null}'))).toHaveLength(1);
  });
});

describe('edge safety', () => {
  const dir = join(import.meta.dirname, '../../src/json-schema');
  const sources = readdirSync(dir).map((name) => readFileSync(join(dir, name), 'utf8'));

  it('uses neither eval nor new Function nor node: modules', () => {
    expect(sources.length).toBeGreaterThan(3);
    for (const source of sources) {
      expect(source).not.toMatch(/\beval\s*\(|\bFunction\s*\(|from 'node:/);
    }
  });
});

describe('the work one validation may take', () => {
  it('stops a schema x data product past its budget, refusing the value as too complex', () => {
    const schema = compileSchema({
      type: 'array',
      items: { allOf: Array.from({ length: 2000 }, () => ({ minimum: 0 })) },
    });
    const issues = schema.validate(new Array<number>(20_000).fill(0));
    expect(issues.at(-1)).toEqual({
      code: 'too_complex',
      path: '',
      message: 'value takes too many steps to validate against this schema',
    });
  });

  it('counts each enum value an object is compared with', () => {
    const allowed = Array.from({ length: 20_000 }, (_, i) => ({ k: i }));
    const schema = compileSchema({ type: 'array', items: { enum: allowed } });
    const issues = schema.validate(new Array(2_000).fill({ k: -1 }));
    expect(issues.map((issue) => issue.code)).toContain('too_complex');
  });

  it('lists at most 1,000 problems, then says it stopped', () => {
    const schema = compileSchema({ type: 'array', items: { minimum: 0 } });
    const issues = schema.validate(new Array<number>(5_000).fill(-1));
    expect(issues).toHaveLength(1001);
    expect(issues.at(-1)).toEqual({
      code: 'too_many_problems',
      path: '',
      message: 'validation stopped after 1000 problems',
    });
  });
});
