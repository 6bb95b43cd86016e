/**
 * CEL expressions over a row: formulas, entity checks and step conditions. Parsed and type-checked
 * by `@marcbachmann/cel-js` (a tree-walking interpreter: no code is generated from strings), then
 * held to an allow list: only the row's columns as variables, only the operators and the functions of
 * {@link EXPRESSION_FUNCTIONS}, no macros (`map`, `filter`, `exists`, `has`, `cel.bind`), no field
 * access and no regular expressions (`matches`). With the size limits below, evaluating an expression
 * costs work in proportion to its size and the size of the row's values: never a hang.
 * @module
 */
import { Environment } from '@marcbachmann/cel-js';
import type { Issue } from '../errors/index.js';
import type { ColumnType } from '../schema/entity.js';
import { listNames, quoteName } from '../schema/issues.js';
import { FUNCTION_TABLE, numberOf } from './functions.js';

/** Most nodes an expression's syntax tree may hold. */
export const MAX_EXPRESSION_NODES = 200;
/** Deepest nesting an expression may have. */
export const MAX_EXPRESSION_DEPTH = 32;
/** Longest text a formula yields; a longer result is empty (a sheet cell holds at most 50,000 characters). */
export const MAX_RESULT_LENGTH = 50_000;

/** The names of the functions expressions may call, as documented in docs/computed-columns.md. */
export const EXPRESSION_FUNCTIONS: readonly string[] = [
  ...FUNCTION_TABLE.map((f) => f.name),
  'size',
  'int',
  'double',
  'string',
  'contains',
  'startsWith',
  'endsWith',
  'substring',
  'indexOf',
];

const ALLOWED_CALLS = new Set(EXPRESSION_FUNCTIONS);
const ALLOWED_OPS = new Set([
  '||',
  '&&',
  '!_',
  '-_',
  '+',
  '-',
  '*',
  '/',
  '%',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '?:',
  'id',
  'value',
  'call',
  'rcall',
  'in',
  'list',
]);

/** A column an expression may read: its name and type. */
export interface ExpressionColumn {
  name: string;
  type: ColumnType;
}

/** A checked expression, ready to evaluate over rows. @internal */
export interface RowExpression {
  readonly source: string;
  /** The CEL type of its result: `double`, `int`, `string`, `bool` or `google.protobuf.Timestamp`. */
  readonly type: string;
  /** The columns it reads. */
  readonly reads: readonly string[];
  /** Its checked syntax tree (for the arithmetic fast path of `kernel.ts`). */
  readonly ast: unknown;
  /**
   * Its value for one row (`values` by column name, as the table holds them: numbers, text, booleans,
   * `null` for an empty cell). `undefined` when it needs an empty cell (an unknown value) or fails.
   */
  evaluate(values: Readonly<Record<string, unknown>>): { value: unknown } | { error: string } | undefined;
}

const CEL_TYPES: Record<ColumnType, string> = {
  NUMBER: 'double',
  STRING: 'string',
  BOOLEAN: 'bool',
  DATE: 'google.protobuf.Timestamp',
  DATETIME: 'google.protobuf.Timestamp',
};

/** The CEL types a value of each column type may come from. @internal */
export const RESULT_TYPES: Record<ColumnType, readonly string[]> = {
  NUMBER: ['double', 'int'],
  STRING: ['string'],
  BOOLEAN: ['bool'],
  DATE: ['google.protobuf.Timestamp'],
  DATETIME: ['google.protobuf.Timestamp'],
};

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** Whether a column name can be read by an expression (a CEL identifier, not a reserved word). */
export function isExpressionName(name: string): boolean {
  return IDENTIFIER.test(name) && !RESERVED.has(name);
}

/** One environment per list of columns (compiling many expressions over one entity makes one). */
const ENVIRONMENTS = new WeakMap<readonly ExpressionColumn[], Environment>();

function environmentOf(columns: readonly ExpressionColumn[]): Environment {
  let env = ENVIRONMENTS.get(columns);
  if (env) return env;
  env = newEnvironment();
  for (const column of columns)
    if (isExpressionName(column.name)) env.registerVariable(column.name, CEL_TYPES[column.type]);
  ENVIRONMENTS.set(columns, env);
  return env;
}

/** An environment with the limits, the function set and the mixed-number operators, no variables. @internal */
export function newEnvironment(): Environment {
  const env = new Environment({
    limits: {
      maxAstNodes: MAX_EXPRESSION_NODES,
      maxDepth: MAX_EXPRESSION_DEPTH,
      maxListElements: 100,
      maxMapEntries: 0,
      maxCallArguments: 4,
    },
  });
  for (const f of FUNCTION_TABLE) env.registerFunction(f.signature, f.handler as never);
  // Numbers of a sheet are doubles; `price * 2` mixes in an integer literal: allowed, as a double.
  for (const op of ['+', '-', '*', '/'] as const) {
    const apply = (a: number, b: number) =>
      op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : a / b;
    env.registerOperator(`double ${op} int: double`, (a: number, b: bigint) => apply(a, Number(b)));
    env.registerOperator(`int ${op} double: double`, (a: bigint, b: number) => apply(Number(a), b));
  }
  return env;
}

/**
 * Walks a syntax tree: the identifiers read, and the first node outside the allow list (field and
 * index access allowed when `fields`, for step conditions over JSON data). @internal
 */
export function inspect(ast: unknown, reads: Set<string>, fields = false): string | undefined {
  const stack: unknown[] = [ast];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    if (typeof node !== 'object' || node === null || !('op' in node)) continue;
    const { op, args } = node as { op: string; args: unknown };
    if (fields && (op === '.' || op === '[]')) {
      // A field name is no variable: only the object it is read from is walked.
      stack.push(op === '.' ? (args as unknown[])[0] : args);
      continue;
    }
    if (!ALLOWED_OPS.has(op))
      return op === '.' || op === '[]'
        ? 'reads a field or an index; an expression reads only the columns of the row'
        : `uses ${quoteName(op)}, which expressions may not`;
    if (op === 'id') reads.add(String(args));
    else if (op === 'call' || op === 'rcall') {
      const [name, ...rest] = args as [string, ...unknown[]];
      if (!ALLOWED_CALLS.has(name))
        return `calls ${quoteName(name)}, which is not one of the functions expressions may call (${listNames([...ALLOWED_CALLS])})`;
      stack.push(rest);
    } else if (op !== 'value') stack.push(args);
  }
  return undefined;
}

/**
 * Parses and type-checks `source` over `columns`, holding it to the allow list. `want` lists the
 * CEL result types accepted. Problems are issues at `path`.
 * @internal
 */
export function compileExpression(
  source: string,
  columns: readonly ExpressionColumn[],
  want: readonly string[],
  path: string,
  self?: string,
): { ok: true; expression: RowExpression } | { ok: false; issues: Issue[] } {
  const cacheKey = `${want.join(',')}\u0000${self ?? ''}\u0000${source}`;
  let kept = COMPILED.get(columns);
  const known = kept?.get(cacheKey);
  if (known) return { ok: true, expression: known };
  const result = compileOnce(source, columns, want, path, self);
  if (result.ok) {
    if (!kept) COMPILED.set(columns, (kept = new Map()));
    if (kept.size < 1000) kept.set(cacheKey, result.expression);
  }
  return result;
}

/** Expressions compiled, by list of columns: a formula compiles once per entity definition. */
const COMPILED = new WeakMap<readonly ExpressionColumn[], Map<string, RowExpression>>();

function compileOnce(
  source: string,
  columns: readonly ExpressionColumn[],
  want: readonly string[],
  path: string,
  self: string | undefined,
): { ok: true; expression: RowExpression } | { ok: false; issues: Issue[] } {
  const fail = (message: string, code = 'invalid_expression') => ({
    ok: false as const,
    issues: [{ code, path, message: `expression ${quoteName(source)} ${message}` }],
  });
  const env = environmentOf(columns);
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = env.parse(source);
  } catch (error) {
    return fail(`does not parse: ${firstLine(error)}`);
  }
  const reads = new Set<string>();
  const refused = inspect(parsed.ast, reads);
  if (refused) return fail(refused, 'forbidden_expression');
  const names = new Set(columns.map((c) => c.name));
  if (self !== undefined && reads.has(self)) return fail(`reads its own column ${quoteName(self)}`, 'cycle');
  for (const name of reads)
    if (!names.has(name) || !isExpressionName(name))
      return fail(
        `reads ${quoteName(name)}, which is not a column it may read (columns: ${listNames(columns.filter((c) => isExpressionName(c.name)).map((c) => c.name))})`,
        'unknown_column',
      );
  const checked = env.check(source);
  if (!checked.valid) return fail(`does not type-check: ${firstLine(checked.error)}`);
  const type = String(checked.type);
  if (!want.includes(type)) return fail(`gives ${type}, expected ${want.join(' or ')}`, 'invalid_type');
  const types = new Map(columns.map((c) => [c.name, c.type]));
  const read = [...reads];
  const readTypes = read.map((name) => types.get(name)!);
  const context: Record<string, unknown> = {};
  return {
    ok: true,
    expression: {
      source,
      type,
      reads: read,
      ast: parsed.ast,
      evaluate(values) {
        let empty = false;
        for (let k = 0; k < read.length; k++) {
          const name = read[k]!;
          const value = values[name];
          if (value === null || value === undefined) {
            empty = true;
            context[name] = null;
          } else context[name] = toCel(readTypes[k]!, value);
        }
        try {
          return { value: fromCel(parsed(context)) };
        } catch (error) {
          // An empty cell is an unknown value: where it is needed, the result is unknown too.
          return empty ? undefined : { error: firstLine(error) };
        }
      },
    },
  };
}

function toCel(type: ColumnType, value: unknown): unknown {
  if (type === 'DATE' || type === 'DATETIME') return new Date(String(value));
  return value;
}

function fromCel(value: unknown): unknown {
  if (typeof value === 'bigint') return numberOf(value);
  return value;
}

/** The first line of an error's message, cut to 300 characters. @internal */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]!.slice(0, 300);
}
