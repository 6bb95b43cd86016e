import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyPositions } from '../../src/catalog/key-positions.js';

/** Runs the same sets on a KeyPositions and a Map and compares every answer. */
function sameAsMap(ops: readonly { key: unknown; position: number }[], probes: readonly unknown[]): void {
  const keys = new KeyPositions();
  const map = new Map<unknown, number>();
  for (const { key, position } of ops) {
    expect(keys.get(key)).toBe(map.get(key));
    keys.set(key, position);
    map.set(key, position);
  }
  for (const probe of [...probes, ...ops.map((op) => op.key)]) expect(keys.get(probe)).toBe(map.get(probe));
}

describe('KeyPositions', () => {
  it('answers as a Map for keys of every kind: dense ids, sparse, negative, fractions, text, -0', () => {
    const key = fc.oneof(
      fc.integer({ min: -50, max: 3_000 }),
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.constantFrom(-0, 0, 2 ** 31, -(2 ** 31) - 1),
      fc.string({ maxLength: 3 }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.record({ key, position: fc.integer({ min: -1, max: 1_000_000 }) }), { maxLength: 400 }),
        fc.array(key, { maxLength: 20 }),
        (ops, probes) => sameAsMap(ops, probes),
      ),
      { numRuns: 300 },
    );
  });

  it('keeps 200,000 rising ids and moves to a Map without losing any when a far key comes', () => {
    const ops: { key: unknown; position: number }[] = Array.from({ length: 200_000 }, (_, i) => ({
      key: 1_000 + 2 * i,
      position: i,
    }));
    ops.push({ key: 10 ** 9, position: -1 }, { key: 'x', position: 7 }, { key: 5, position: 3 });
    sameAsMap(ops, [1_001, 999, 401_000, 10 ** 9 + 1]);
  });

  it('grows downwards as well as upwards', () => {
    const ops = Array.from({ length: 5_000 }, (_, i) => ({ key: 10_000 - 3 * i, position: i }));
    sameAsMap(ops, [10_001, -5_000, 9_997]);
  });
});
