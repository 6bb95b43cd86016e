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
    const steps = (value - (rules.min ?? 0)) / rules.step;
    if (Math.abs(steps - Math.round(steps)) > 1e-9 * Math.max(1, Math.abs(steps))) {
      return {
        code: 'invalid_step',
        rule: `must be a multiple of ${rules.step}${rules.min ? ` from ${rules.min}` : ''}`,
      };
    }
  }
  return undefined;
}
