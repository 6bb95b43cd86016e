// The arithmetic fast path gives what the CEL evaluator gives, on random expressions and rows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../src/computed/expression.js';
import { numberKernel } from '../../src/computed/kernel.js';

const columns = [
  { name: 'a', type: 'NUMBER' as const },
  { name: 'b', type: 'NUMBER' as const },
];

const expression: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', '2', '0.5', '3.0', '0'),
    fc
      .tuple(tie('e'), fc.constantFrom('+', '-', '*', '/'), tie('e'))
      .map(([x, op, y]) => `(${x} ${op} ${y})`),
    tie('e').map((x) => `-(${x})`),
  ),
})).e;
const cell = fc.option(
  fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ min: -10, max: 10, noNaN: true })),
  {
    nil: null,
  },
);

describe('the arithmetic fast path', () => {
  it('agrees with the CEL evaluator (empty where it is empty) whenever it applies', () => {
    fc.assert(
      fc.property(
        expression,
        fc.array(fc.tuple(cell, cell), { minLength: 1, maxLength: 20 }),
        (source, rows) => {
          const compiled = compileExpression(source, columns, ['double'], '');
          fc.pre(compiled.ok);
          if (!compiled.ok) return;
          const a = Float64Array.from(rows, ([x]) => (x === null ? NaN : x));
          const b = Float64Array.from(rows, ([, y]) => (y === null ? NaN : y));
          const kernel = numberKernel(compiled.expression.ast, (name) =>
            name === 'a' ? a : name === 'b' ? b : undefined,
          );
          fc.pre(kernel !== undefined);
          rows.forEach(([x, y], i) => {
            const slow = compiled.expression.evaluate({ a: x, b: y });
            const want = slow && 'value' in slow && Number.isFinite(slow.value) ? slow.value : null;
            const got = kernel!(i);
            expect(Number.isFinite(got) ? got : null, `${source} at a=${x}, b=${y}`).toBe(want);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves integer arithmetic, text and comparisons to the evaluator', () => {
    for (const source of ['7 / 2 + a', 'a > 1.0 ? a : b', 'double(size("x")) + a']) {
      const compiled = compileExpression(source, columns, ['double', 'bool'], '');
      expect(compiled.ok, source).toBe(true);
      if (compiled.ok)
        expect(
          numberKernel(compiled.expression.ast, () => new Float64Array(1)),
          source,
        ).toBeUndefined();
    }
  });
});
