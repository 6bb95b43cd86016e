import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/json-schema/index.js';
import { brokenNumberRule, isMultipleFrom } from '../../src/schema/number-rules.js';

describe('steps of numbers (column rules, form number_config, JSON Schema multipleOf)', () => {
  it('takes decimal steps despite binary floating point', () => {
    expect(isMultipleFrom(0.0075, 0.0001)).toBe(true);
    expect(isMultipleFrom(0.3, 0.1)).toBe(true);
    expect(isMultipleFrom(12345678.99, 0.01)).toBe(true);
    expect(isMultipleFrom(1.15, 0.05, 0.1)).toBe(true);
  });

  it('refuses a large value with a fraction, which a tolerance growing with the quotient let through', () => {
    expect(isMultipleFrom(1_000_000_000.5, 1)).toBe(false);
    expect(isMultipleFrom(3_000_000_000.9, 1)).toBe(false);
    expect(isMultipleFrom(12345678.999, 0.01)).toBe(false);
    expect(isMultipleFrom(10_000_000.005, 0.01)).toBe(false);
    expect(brokenNumberRule(5_000_000_000.5, { step: 1 })).toMatchObject({ code: 'invalid_step' });
    expect(brokenNumberRule(5_000_000_000, { step: 1 })).toBeUndefined();
    const schema = compileSchema({ type: 'number', multipleOf: 1 });
    expect(schema.validate(1_000_000_000.5).map((issue) => issue.code)).toEqual(['not_multiple_of']);
    expect(schema.validate(1_000_000_000)).toEqual([]);
  });
});
