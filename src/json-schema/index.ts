/**
 * A JSON Schema (draft 2020-12) validator for workflow `input_schema`, safe on edge runtimes: it
 * never uses `eval` or `new Function`. {@link compileSchema} walks a schema once into a tree of
 * small closures; {@link CompiledSchema.validate} then lists every problem of a value.
 *
 * What it understands is {@link SUPPORTED_KEYWORDS}. Notes on semantics:
 * - `format` is an annotation only: any string is accepted whatever the format says.
 * - `pattern` and `patternProperties` are ECMA-262 regular expressions with the `u` flag, searched
 *   unanchored, and they run in linear time: a pattern is translated to RE2 syntax and run on re2js,
 *   never on the host's backtracking `RegExp`, so `^(a+)+$` cannot block the host. What RE2 cannot
 *   run is refused at compile time with the path and the reason: backreferences (`\1`, `\k<n>`),
 *   lookahead and lookbehind, inline modifier groups (`(?i:…)`), Unicode properties RE2 does not
 *   know (some binary ones such as `\p{ID_Start}`, `Script_Extensions`, four-letter script aliases),
 *   and patterns compiling to more than 4,000 RE2 instructions (500 different patterns and 20,000
 *   instructions per schema). `\s`, `.`, `[\b]`, `\0`, `[]` and `[^]` keep JavaScript's meaning.
 *   A test costs the string's length (plus one) times the pattern's instructions from the
 *   validation budget.
 * - `minLength`/`maxLength` count Unicode code points; `integer` is any number without a fraction
 *   (so `1.0` is an integer); `number` excludes `NaN` and infinities.
 * - `$ref` must be local (`#`, `#/$defs/name`, `#/definitions/name`, any JSON pointer in the document);
 *   `$id` is accepted only at the top level. Keys starting with `x-` are ignored as extensions.
 * - Any other keyword (`unevaluatedProperties`, `$dynamicRef`, `$anchor`, …) is rejected at compile
 *   time, as are malformed keyword values, schemas nested more than 64 levels deep, and `$ref` loops
 *   that never reach a property or item.
 * - `anyOf`/`oneOf` failures are reported as one summarized issue, never one per option.
 * @module
 */
import { ValidationError, formatIssues, type Issue } from '../errors/index.js';
import { KEYWORDS, SchemaCompiler } from './compile.js';
import { startPatternTally } from './pattern.js';
import { MAX_VALIDATION_ISSUES, exhaustedLimit, startValidation } from './references.js';

/** Every keyword {@link compileSchema} accepts; any other keyword makes it throw. */
export const SUPPORTED_KEYWORDS: readonly string[] = KEYWORDS;

/** Options of {@link compileSchema}. */
export interface CompileSchemaOptions {
  /**
   * Path of the schema inside its definition, put before the path of each schema problem,
   * e.g. `workflow_input.input_schema`.
   * @default ""
   */
  path?: string;
}

/** A schema compiled once, ready to validate any number of values. */
export interface CompiledSchema {
  /** The schema this was compiled from. */
  readonly schema: unknown;
  /**
   * Every problem of `value`, each with a path such as `customer.address[0].zip` (`""` for the
   * value itself) and a message naming the property; an empty array when the value is valid.
   */
  validate(value: unknown): Issue[];
}

/**
 * Compiles a JSON Schema so values can be validated against it quickly and without `eval`.
 * @throws {ValidationError} when the schema uses an unsupported keyword or is malformed; each issue's
 *   path points into the schema (after `options.path`).
 * @example
 * ```ts
 * const schema = compileSchema(
 *   { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
 *   { path: 'workflow_input.input_schema' },
 * );
 * schema.validate({ amount: 'x' });
 * // [{ code: 'invalid_type', path: 'amount', message: 'amount must be a number, got the string "x"' }]
 * ```
 */
export function compileSchema(schema: unknown, options: CompileSchemaOptions = {}): CompiledSchema {
  const compiler = new SchemaCompiler(schema, options.path ?? '');
  startPatternTally();
  const check = compiler.compile();
  if (compiler.issues.length > 0) {
    throw new ValidationError(compiler.issues, `Invalid JSON schema: ${formatIssues(compiler.issues)}`);
  }
  return {
    schema,
    validate(value) {
      // Valid values, the common case, take the fast path that builds no paths or messages.
      startValidation();
      // A pass a limit stopped says nothing (a `not` over a stopped check would hold): never valid.
      if (check(value, '', null) && exhaustedLimit() === null) return [];
      const issues: Issue[] = [];
      startValidation();
      check(value, '', issues);
      // A limit hit inside anyOf/oneOf is summarized away there; make sure the reason is reported.
      const limit = exhaustedLimit();
      if (limit !== null && !issues.some((issue) => issue.code === limit)) {
        issues.push({
          code: limit,
          path: '',
          message:
            limit === 'too_deep'
              ? 'value is nested too deeply to validate'
              : limit === 'too_many_problems'
                ? `validation stopped after ${MAX_VALIDATION_ISSUES} problems`
                : 'value takes too many steps to validate against this schema',
        });
      }
      if (issues.length === 0) {
        issues.push({ code: 'invalid_value', path: '', message: 'value does not match the schema' });
      }
      return issues;
    },
  };
}
