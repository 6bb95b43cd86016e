/**
 * The `min`, `max` and `step` rules of a number (a form item's `number_config`, an entity column's
 * `number` config): one check, so a screen and the catalog refuse the same values.
 * @module
 */

/** `min`, `max` and `step` of a number; `step` counts from `min`, or from 0 without one. */
export interface NumberRules {
  /** Smallest value allowed. */
  min?: number | undefined;
  /** Largest value allowed. */
  max?: number | undefined;
  /** Values are `min + k * step` (or `k * step` without `min`) for a whole `k`. */
  step?: number | undefined;
}

/**
 * The rule a number breaks, as a code and the words after the field's name (`must be at least 1`),
 * or `undefined` when it keeps them all.
 */
export function brokenNumberRule(
  value: number,
  rules: NumberRules,
): { code: 'too_small' | 'too_big' | 'invalid_step'; rule: string } | undefined {
  if (rules.min !== undefined && value < rules.min)
    return { code: 'too_small', rule: `must be at least ${rules.min}` };
  if (rules.max !== undefined && value > rules.max)
    return { code: 'too_big', rule: `must be at most ${rules.max}` };
  if (rules.step !== undefined) {
    if (!isMultipleFrom(value, rules.step, rules.min ?? 0)) {
      return {
        code: 'invalid_step',
        rule: `must be a multiple of ${rules.step}${rules.min ? ` from ${rules.min}` : ''}`,
      };
    }
  }
  return undefined;
}

/**
 * Whether `value` is `base + k * step` for a whole `k`, allowing only the error of decimal steps in
 * binary floating point (0.0075 is a multiple of 0.0001 although the quotient is 74.999…): what is
 * left over must be a sliver of the step, or within the precision of numbers as large as the value.
 * A large value with a fraction (1000000000.5 with a step of 1) is not a multiple.
 */
export function isMultipleFrom(value: number, step: number, base = 0): boolean {
  const quotient = (value - base) / step;
  if (!Number.isFinite(quotient)) return false;
  if (Number.isInteger(quotient)) return true;
  const left = Math.abs(value - base - Math.round(quotient) * step);
  return (
    left <= 1e-9 * Math.abs(step) || left <= 4 * Number.EPSILON * Math.max(Math.abs(value), Math.abs(base))
  );
}
