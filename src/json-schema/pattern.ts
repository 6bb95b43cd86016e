/**
 * `pattern` and `patternProperties` run in linear time. A pattern is an ECMA-262 regular expression
 * read with the `u` flag; it is checked by the host's `RegExp` parser (so what counts as a pattern is
 * JavaScript's rule), then translated into RE2 syntax and run on re2js, which matches without
 * backtracking: `^(a+)+$` against a long run of `a`s and a `b` takes steps in proportion to the
 * string, not exponential in it.
 *
 * The translation keeps JavaScript's meaning where the two differ (`\s`, `.`, `\0`, `[\b]`, empty
 * classes, long Unicode property names). What RE2 cannot run is refused, naming why: backreferences,
 * lookahead and lookbehind, inline modifier groups, Unicode properties RE2 does not know, and
 * patterns too large to run cheaply.
 * @module
 */
import { RE2JS } from 're2js';
import { LINEAR, translatePattern, type PatternRefusal, type PropertyEscape } from './pattern-syntax.js';

export type { PatternRefusal } from './pattern-syntax.js';

/** Most RE2 instructions one pattern may compile to (`^.{0,1000}$` compiles to about 2,000). @internal */
export const MAX_PATTERN_INSTRUCTIONS = 4000;

/** Most distinct patterns one schema may hold (compiling one takes up to a few milliseconds). @internal */
export const MAX_SCHEMA_PATTERNS = 500;

/** Most RE2 instructions the distinct patterns of one schema may compile to together. @internal */
export const MAX_SCHEMA_PATTERN_INSTRUCTIONS = 20_000;

/** A pattern ready to test strings: RE2 under the hood, JavaScript's meaning. @internal */
export interface Pattern {
  /** The pattern as written in the schema. */
  readonly source: string;
  /**
   * RE2 instructions of the compiled pattern: a test reads each character at most once per
   * instruction, so `(text.length + 1) * size` bounds its work.
   */
  readonly size: number;
  /** Whether the pattern matches anywhere in `text` (unanchored, like `RegExp.prototype.test`). */
  test(text: string): boolean;
}

/** A pattern compiled, or why it is refused. @internal */
export type PatternResult = { ok: true; pattern: Pattern } | PatternRefusal;

/**
 * The patterns of the schema being compiled: each source compiles once (`compiled`), and the
 * distinct ones taken (`taken`) are counted against the schema's limits.
 */
const tally = { compiled: new Map<string, PatternResult>(), taken: new Set<string>(), instructions: 0 };

/**
 * Starts the pattern tally of a new schema; `compileSchema` calls it before compiling. Schema
 * compilation is synchronous, so one module-level tally is enough. @internal
 */
export function startPatternTally(): void {
  tally.compiled = new Map();
  tally.taken = new Set();
  tally.instructions = 0;
}

/**
 * Compiles `source` (ECMA-262, `u` flag) for linear-time matching, or says why it cannot.
 * Counts towards the limits of the schema being compiled (see {@link startPatternTally}). @internal
 */
export function compilePattern(source: string): PatternResult {
  let result = tally.compiled.get(source);
  if (result === undefined) {
    result = compileOnce(source);
    tally.compiled.set(source, result);
  }
  if (!result.ok || tally.taken.has(source)) return result;
  if (tally.taken.size >= MAX_SCHEMA_PATTERNS) {
    return {
      ok: false,
      code: 'schema_too_large',
      message: `is one pattern too many: a schema may hold at most ${MAX_SCHEMA_PATTERNS} different patterns`,
    };
  }
  if (tally.instructions + result.pattern.size > MAX_SCHEMA_PATTERN_INSTRUCTIONS) {
    return {
      ok: false,
      code: 'schema_too_large',
      message: `takes the schema's patterns past ${MAX_SCHEMA_PATTERN_INSTRUCTIONS} RE2 instructions together (this one compiles to ${result.pattern.size})`,
    };
  }
  tally.taken.add(source);
  tally.instructions += result.pattern.size;
  return result;
}

function compileOnce(source: string): PatternResult {
  try {
    new RegExp(source, 'u');
  } catch (error) {
    return {
      ok: false,
      code: 'invalid_schema',
      message: `is not a valid regular expression: ${(error as Error).message}`,
    };
  }
  const translated = translatePattern(source);
  if (!translated.ok) return translated;
  if (translated.estimate > 2 * MAX_PATTERN_INSTRUCTIONS) return tooLarge(`about ${translated.estimate}`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(translated.re2);
  } catch (error) {
    return refusedByRe2(translated.properties, (error as Error).message);
  }
  const size = compiled.programSize();
  if (size > MAX_PATTERN_INSTRUCTIONS) return tooLarge(String(size));
  return {
    ok: true,
    pattern: { source, size, test: (text) => compiled.test(text) },
  };
}

function tooLarge(size: string): PatternRefusal {
  return {
    ok: false,
    code: 'pattern_too_large',
    message: `compiles to ${size} RE2 instructions, more than the ${MAX_PATTERN_INSTRUCTIONS} a pattern may have (a test may read each character once per instruction)`,
  };
}

/** RE2 refused a translation; say why in the schema author's terms. */
function refusedByRe2(properties: readonly PropertyEscape[], reason: string): PatternRefusal {
  const property = properties.find((escape) => reason.includes(escape.re2));
  if (property !== undefined) {
    return {
      ok: false,
      code: 'unsupported_pattern',
      message: `uses the Unicode property "${property.written}", which the linear-time engine does not know (it knows General_Category values such as \\p{L} or \\p{Lu}, scripts by their long names such as \\p{Script=Greek}, and common binary properties such as \\p{Alphabetic})`,
    };
  }
  if (reason.includes('repeat count')) {
    return {
      ok: false,
      code: 'unsupported_pattern',
      message: `repeats a part more than 1000 times (counting nested repeats together), ${LINEAR}`,
    };
  }
  return {
    ok: false,
    code: 'unsupported_pattern',
    message: `cannot run in linear time (RE2 syntax): ${reason}`,
  };
}
