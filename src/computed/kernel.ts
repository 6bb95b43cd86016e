/**
 * A fast path for formulas of plain arithmetic over `NUMBER` columns (`amount * qty`,
 * `(price - cost) / price`): the checked syntax tree turned into closures that read the columns'
 * `Float64Array`s directly, with no value objects per row. An empty cell is NaN there, and NaN goes
 * through arithmetic as an unknown value goes through the CEL evaluation: the result is empty
 * either way. Anything else (text, comparisons, functions, integer arithmetic) is left to the CEL
 * evaluator. Closures only: nothing is generated from strings.
 * @module
 */

/** Reads a column's numbers by name. @internal */
export type NumberColumns = (name: string) => Float64Array | undefined;

type Kernel = { kind: 'double' | 'int'; at: (i: number) => number };

/**
 * The formula as a function of the row index, or undefined when it is not plain arithmetic over
 * number columns (doubles) and number literals. @internal
 */
export function numberKernel(ast: unknown, columns: NumberColumns): ((i: number) => number) | undefined {
  const kernel = build(ast, columns, 0);
  return kernel?.kind === 'double' ? kernel.at : undefined;
}

function build(node: unknown, columns: NumberColumns, depth: number): Kernel | undefined {
  if (depth > 64 || typeof node !== 'object' || node === null) return undefined;
  const { op, args } = node as { op: string; args: unknown };
  if (op === 'id') {
    const data = columns(String(args));
    return data && { kind: 'double', at: (i) => data[i]! };
  }
  if (op === 'value') {
    if (typeof args === 'number') return { kind: 'double', at: () => args };
    if (typeof args === 'bigint') {
      const x = Number(args);
      return Number.isSafeInteger(x) ? { kind: 'int', at: () => x } : undefined;
    }
    return undefined;
  }
  if (op === '-_') {
    const inner = build(args, columns, depth + 1);
    if (!inner) return undefined;
    const f = inner.at;
    // CEL's integer negation of 0 is 0, not JavaScript's -0.
    return { kind: inner.kind, at: inner.kind === 'int' ? (i) => 0 - f(i) : (i) => -f(i) };
  }
  if (op !== '+' && op !== '-' && op !== '*' && op !== '/') return undefined;
  const [left, right] = args as [unknown, unknown];
  const a = build(left, columns, depth + 1);
  const b = build(right, columns, depth + 1);
  // Integer arithmetic (7 / 2 is 3 in CEL) stays with the evaluator; a double with an int is a double.
  if (!a || !b || (a.kind === 'int' && b.kind === 'int')) return undefined;
  const f = a.at;
  const g = b.at;
  switch (op) {
    case '+':
      return { kind: 'double', at: (i) => f(i) + g(i) };
    case '-':
      return { kind: 'double', at: (i) => f(i) - g(i) };
    case '*':
      return { kind: 'double', at: (i) => f(i) * g(i) };
    default:
      return { kind: 'double', at: (i) => f(i) / g(i) };
  }
}
