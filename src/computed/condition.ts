/**
 * Step conditions written as CEL expressions (`{ expression: "orders.body.table.rows.size() > 0" }`):
 * the roots they read are the workflow input, earlier steps and, in a `for_each` step, `item` and
 * `item_index`, each as JSON data (fields and indexes may be read). The same allow list and limits
 * as formulas hold; a condition that fails to evaluate (a missing field, say) does not hold.
 * @module
 */
import type { Issue } from '../errors/index.js';
import { quoteName } from '../schema/issues.js';
import { firstLine, inspect, isExpressionName, newEnvironment } from './expression.js';

/** A condition expression, checked. @internal */
export interface ConditionExpression {
  readonly source: string;
  /** The roots it reads (input, step names, item). */
  readonly roots: readonly string[];
  /** Whether it holds for the roots' values (by name): true only when it evaluates to `true`. */
  holds(values: Readonly<Record<string, unknown>>): boolean;
}

/**
 * Parses and checks a condition expression. `roots` are the names it may read; it must give a
 * bool. Problems are issues at `path`. @internal
 */
export function compileCondition(
  source: string,
  roots: readonly string[],
  path: string,
): { ok: true; condition: ConditionExpression } | { ok: false; issues: Issue[] } {
  const fail = (message: string, code = 'invalid_expression') => ({
    ok: false as const,
    issues: [{ code, path, message: `expression ${quoteName(source)} ${message}` }],
  });
  const env = newEnvironment();
  const usable = roots.filter(isExpressionName);
  for (const root of usable) env.registerVariable(root, 'dyn');
  let parsed: ReturnType<typeof env.parse>;
  try {
    parsed = env.parse(source);
  } catch (error) {
    return fail(`does not parse: ${firstLine(error)}`);
  }
  const reads = new Set<string>();
  const refused = inspect(parsed.ast, reads, true);
  if (refused) return fail(refused, 'forbidden_expression');
  for (const name of reads)
    if (!usable.includes(name))
      return fail(
        `reads ${quoteName(name)}, which is neither the input nor a step (it may read: ${usable.join(', ') || 'nothing'})`,
        'unknown_reference',
      );
  const checked = env.check(source);
  if (!checked.valid) return fail(`does not type-check: ${firstLine(checked.error)}`);
  if (checked.type !== 'bool' && checked.type !== 'dyn')
    return fail(`gives ${String(checked.type)}, expected bool`, 'invalid_type');
  const read = [...reads];
  return {
    ok: true,
    condition: {
      source,
      roots: read,
      holds(values) {
        const context: Record<string, unknown> = {};
        for (const name of read) context[name] = celValue(values[name]);
        try {
          return parsed(context) === true;
        } catch {
          return false;
        }
      },
    },
  };
}

/** JSON data as CEL reads it: whole numbers stay doubles (JSON has one number type), `undefined` is null. */
function celValue(value: unknown): unknown {
  return value === undefined ? null : value;
}
