import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crossings } from '../../src/pictures/layout.js';

/** Every pair of edges compared: the count as the layout's definition states it. */
function crossingsByPairs(rows: number[][], down: number[][], position: number[]): number {
  let count = 0;
  for (const row of rows) {
    const edges = row.flatMap((v) => down[v]!.map((w) => [position[v]!, position[w]!] as const));
    for (let i = 0; i < edges.length; i++)
      for (let j = i + 1; j < edges.length; j++)
        if ((edges[i]![0] - edges[j]![0]) * (edges[i]![1] - edges[j]![1]) < 0) count++;
  }
  return count;
}

describe('edge crossings of a layered drawing', () => {
  it('counts the pairs of edges whose ends are in opposite orders, ties never crossing', () => {
    // Layers of up to 8 nodes; each node of a layer joined to some nodes of the next.
    const drawing = fc
      .array(fc.integer({ min: 1, max: 8 }), { minLength: 2, maxLength: 5 })
      .chain((sizes) => {
        const first = sizes.map((_, l) => sizes.slice(0, l).reduce((a, b) => a + b, 0));
        const total = sizes.reduce((a, b) => a + b, 0);
        const rows = sizes.map((size, l) => Array.from({ length: size }, (_, i) => first[l]! + i));
        const edges = rows.map((row, l) =>
          row.map(() => (l + 1 < rows.length ? fc.subarray(rows[l + 1]!) : fc.constant<number[]>([]))),
        );
        return fc.record({
          rows: fc.constant(rows),
          down: fc.tuple(...edges.flat()),
          // Positions within a layer, ties allowed.
          position: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: total, maxLength: total }),
        });
      });
    fc.assert(
      fc.property(drawing, ({ rows, down, position }) => {
        expect(crossings(rows, down, position)).toBe(crossingsByPairs(rows, down, position));
      }),
      { numRuns: 500 },
    );
  });
});
