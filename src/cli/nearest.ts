/**
 * The known word nearest to a mistyped one, for "did you mean" hints.
 * @module
 */

/**
 * The word of `known` nearest to `typed` by edit distance (insertions, deletions, substitutions and
 * swaps of two neighbours), when it is near enough to be a slip: at most 2 edits, and fewer than half
 * the typed word's length. `undefined` otherwise.
 * @internal
 */
export function nearest(typed: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const word of known) {
    const distance = editDistance(typed.toLowerCase(), word.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [word, distance];
  }
  return bestDistance <= 2 && bestDistance < Math.max(typed.length, 2) / 2 + 0.5 ? best : undefined;
}

/** Optimal string alignment distance: edits to turn `a` into `b`, a swap of neighbours counting one. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
