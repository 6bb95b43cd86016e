/**
 * ECMA-262 patterns (`u` flag) in RE2 syntax, with JavaScript's meaning. The source is already known
 * to be a valid JavaScript pattern, which keeps the reading simple: no lone `{`, `}` or `]`, no
 * identity escapes of letters, quantifiers only after atoms. Where the dialects differ the
 * translation spells out JavaScript's meaning (`\s`, `.`, `\0`, `[\b]`, `[]`, `[^]`, long Unicode
 * property names); what RE2 cannot express is refused here (backreferences, lookaround, inline
 * modifier groups, `Script_Extensions`). Nothing is captured: every group becomes `(?:`.
 * @module
 */

/** Why a pattern is refused: an issue code and a message that reads after the keyword's name. @internal */
export interface PatternRefusal {
  ok: false;
  code: string;
  message: string;
}

/** The end of the message of a pattern RE2 cannot run. @internal */
export const LINEAR = 'which stepwire does not run: patterns run in linear time (RE2 syntax)';

function unsupported(what: string): PatternRefusal {
  return { ok: false, code: 'unsupported_pattern', message: `uses ${what}, ${LINEAR}` };
}

/** JavaScript's `\s`: WhiteSpace and LineTerminator, as code point ranges. */
const SPACE_RANGES: readonly (readonly [number, number])[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];

function rangesText(ranges: readonly (readonly [number, number])[]): string {
  return ranges.map(([from, to]) => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`)).join('');
}

function complement(ranges: readonly (readonly [number, number])[]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [from, to] of ranges) {
    if (from > next) out.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

/** `\s` and `\S` as class contents (no brackets); `.` (no line terminators), `[]` and `[^]` as classes. */
const SPACE = rangesText(SPACE_RANGES);
const NOT_SPACE = rangesText(complement(SPACE_RANGES));
const DOT = '[^\\x{A}\\x{D}\\x{2028}\\x{2029}]';
const NOTHING = '[^\\x{0}-\\x{10FFFF}]';
const ANYTHING = '[\\x{0}-\\x{10FFFF}]';

function hex(codePoint: number): string {
  return `\\x{${codePoint.toString(16).toUpperCase()}}`;
}

/** JavaScript's long General_Category names (and aliases), by the short ones RE2 knows. */
const CATEGORY_NAMES: Readonly<Record<string, string>> = {
  Letter: 'L',
  Cased_Letter: 'LC',
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Mark: 'M',
  Combining_Mark: 'M',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Number: 'N',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  punct: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Symbol: 'S',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Other: 'C',
  Control: 'Cc',
  cntrl: 'Cc',
  Format: 'Cf',
  Surrogate: 'Cs',
  Private_Use: 'Co',
};

/** A `\p{...}` escape as written and in RE2 syntax, to name the one RE2 does not know. @internal */
export interface PropertyEscape {
  /** As the schema writes it: `\p{sc=Grek}`. */
  written: string;
  /** As RE2 reads it: `\p{Grek}`. */
  re2: string;
}

/** A pattern in RE2 syntax, with what is needed to judge it before and after compiling. @internal */
export interface Translation {
  ok: true;
  /** The pattern in RE2 syntax. */
  re2: string;
  /** An upper estimate of the RE2 instructions, to refuse a huge pattern before compiling it. */
  estimate: number;
  /** Its Unicode property escapes, to name the one RE2 does not know. */
  properties: PropertyEscape[];
}

/** One level of parentheses while estimating the size. */
interface Level {
  /** Sizes of the finished alternatives (and one instruction per `|`). */
  done: number;
  /** Size of the alternative being read. */
  current: number;
  /** Size of the last atom, which a quantifier repeats. */
  last: number;
}

/** Reads a valid ECMA-262 `u` pattern and writes it in RE2 syntax, with JavaScript's meaning. @internal */
export function translatePattern(source: string): Translation | PatternRefusal {
  let out = '';
  const properties: PropertyEscape[] = [];
  const levels: Level[] = [{ done: 0, current: 0, last: 0 }];
  let i = 0;
  const atom = (text: string, size = 1): void => {
    out += text;
    const level = levels[levels.length - 1]!;
    level.current += size;
    level.last = size;
  };
  while (i < source.length) {
    const ch = source[i]!;
    switch (ch) {
      case '\\': {
        const escape = readEscape(source, i, false, properties);
        if (!escape.ok) return escape;
        atom(escape.text);
        i = escape.end;
        break;
      }
      case '[': {
        const set = readClass(source, i, properties);
        if (!set.ok) return set;
        atom(set.text);
        i = set.end;
        break;
      }
      case '.':
        atom(DOT);
        i += 1;
        break;
      case '(': {
        const group = readGroupOpening(source, i);
        if (!group.ok) return group;
        out += '(?:';
        levels.push({ done: 0, current: 0, last: 0 });
        i = group.end;
        break;
      }
      case ')': {
        const level = levels.pop()!;
        out += ')';
        atom('', level.done + level.current + 1);
        i += 1;
        break;
      }
      case '|': {
        const level = levels[levels.length - 1]!;
        level.done += level.current + 1;
        level.current = 0;
        level.last = 0;
        out += '|';
        i += 1;
        break;
      }
      case '^':
      case '$':
        atom(ch);
        i += 1;
        break;
      case '*':
      case '+':
      case '?':
      case '{': {
        const quantifier = readQuantifier(source, i);
        const level = levels[levels.length - 1]!;
        const repeated = repeatSize(level.last, quantifier.min, quantifier.max);
        level.current += repeated - level.last;
        level.last = repeated;
        out += quantifier.text;
        i = quantifier.end;
        break;
      }
      default: {
        const codePoint = source.codePointAt(i)!;
        atom(literal(codePoint));
        i += codePoint > 0xffff ? 2 : 1;
      }
    }
  }
  const root = levels[0]!;
  return {
    ok: true,
    re2: out === '' ? '(?:)' : out,
    estimate: root.done + root.current + 2,
    properties,
  };
}

function repeatSize(size: number, min: number, max: number): number {
  if (max === Number.POSITIVE_INFINITY) return Math.max(min, 1) * size + 1;
  return min * size + (max - min) * (size + 1);
}

/** A quantifier at `start` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe followed by `?`). */
function readQuantifier(
  source: string,
  start: number,
): { text: string; min: number; max: number; end: number } {
  let end = start + 1;
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  const ch = source[start];
  if (ch === '+') min = 1;
  else if (ch === '?') max = 1;
  else if (ch === '{') {
    const close = source.indexOf('}', start);
    const [low, high] = source.slice(start + 1, close).split(',');
    min = Number(low);
    max = high === undefined ? min : high === '' ? Number.POSITIVE_INFINITY : Number(high);
    end = close + 1;
  }
  if (source[end] === '?') end += 1;
  return { text: source.slice(start, end), min, max, end };
}

/** After `(`: a plain or named group becomes `(?:` (nothing is captured); lookaround is refused. */
function readGroupOpening(source: string, start: number): { ok: true; end: number } | PatternRefusal {
  if (source[start + 1] !== '?') return { ok: true, end: start + 1 };
  const kind = source.slice(start + 2, start + 4);
  if (source[start + 2] === ':') return { ok: true, end: start + 3 };
  if (kind.startsWith('=') || kind.startsWith('!'))
    return unsupported(`the lookahead "${source.slice(start, start + 3)}"`);
  if (kind === '<=' || kind === '<!')
    return unsupported(`the lookbehind "${source.slice(start, start + 4)}"`);
  if (kind.startsWith('<')) return { ok: true, end: source.indexOf('>', start) + 1 };
  return unsupported(`the inline modifier group "${source.slice(start, source.indexOf(':', start) + 1)}"`);
}

/** A literal character outside a class: ASCII punctuation and controls escaped, the rest as is. */
function literal(codePoint: number): string {
  if (codePoint < 0x20 || codePoint === 0x7f) return hex(codePoint);
  if (codePoint < 0x80 && !/[\dA-Za-z ]/.test(String.fromCharCode(codePoint))) {
    return `\\${String.fromCharCode(codePoint)}`;
  }
  return String.fromCodePoint(codePoint);
}

type Piece = { ok: true; text: string; end: number } | PatternRefusal;

/** A character class at `start` (`[`), written in RE2 syntax. */
function readClass(source: string, start: number, properties: PropertyEscape[]): Piece {
  let i = start + 1;
  const negated = source[i] === '^';
  if (negated) i += 1;
  // JavaScript's `[]` matches nothing and `[^]` anything; RE2 has no empty class.
  if (source[i] === ']') return { ok: true, text: negated ? ANYTHING : NOTHING, end: i + 1 };
  let body = '';
  while (source[i] !== ']') {
    const ch = source[i]!;
    if (ch === '\\') {
      const escape = readEscape(source, i, true, properties);
      if (!escape.ok) return escape;
      body += escape.text;
      i = escape.end;
    } else if (ch === '-') {
      body += '-';
      i += 1;
    } else {
      const codePoint = source.codePointAt(i)!;
      body += literal(codePoint);
      i += codePoint > 0xffff ? 2 : 1;
    }
  }
  return { ok: true, text: `[${negated ? '^' : ''}${body}]`, end: i + 1 };
}

/** An escape at `start` (`\`), inside a class or not, written in RE2 syntax. */
function readEscape(source: string, start: number, inClass: boolean, properties: PropertyEscape[]): Piece {
  const ch = source[start + 1]!;
  const end = start + 2;
  const wrap = (contents: string, negate = false): string =>
    inClass ? contents : `[${negate ? '^' : ''}${contents}]`;
  switch (ch) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 'f':
    case 'n':
    case 'r':
    case 't':
    case 'v':
      return { ok: true, text: `\\${ch}`, end };
    case 'b':
    case 'B':
      // Inside a class `\b` is a backspace; outside, an (ASCII) word boundary in both languages.
      return { ok: true, text: inClass ? (ch === 'b' ? hex(8) : '\\B') : `\\${ch}`, end };
    case 's':
      return { ok: true, text: wrap(SPACE), end };
    case 'S':
      return { ok: true, text: inClass ? NOT_SPACE : `[^${SPACE}]`, end };
    case '0':
      return { ok: true, text: hex(0), end };
    case 'c':
      return { ok: true, text: hex(source.charCodeAt(end) % 32), end: end + 1 };
    case 'x':
      return { ok: true, text: hex(Number.parseInt(source.slice(end, end + 2), 16)), end: end + 2 };
    case 'u':
      return readUnicodeEscape(source, start);
    case 'p':
    case 'P': {
      const close = source.indexOf('}', end);
      const translated = propertyEscape(ch, source.slice(end + 1, close), inClass);
      if (translated.property)
        properties.push({ written: source.slice(start, close + 1), re2: translated.text });
      if (translated.refused !== undefined) return unsupported(translated.refused);
      return { ok: true, text: translated.text, end: close + 1 };
    }
    case 'k':
      return unsupported(`the backreference "${source.slice(start, source.indexOf('>', start) + 1)}"`);
    default:
      if (ch >= '1' && ch <= '9') {
        let stop = end;
        while (stop < source.length && source[stop]! >= '0' && source[stop]! <= '9') stop += 1;
        return unsupported(`the backreference "${source.slice(start, stop)}"`);
      }
      // An identity escape of a syntax character, `/` or (in a class) `-`.
      return { ok: true, text: `\\${ch}`, end };
  }
}

/** `\uXXXX` (a surrogate pair of two becomes one code point) or `\u{X...}`. */
function readUnicodeEscape(source: string, start: number): Piece {
  if (source[start + 2] === '{') {
    const close = source.indexOf('}', start);
    return { ok: true, text: hex(Number.parseInt(source.slice(start + 3, close), 16)), end: close + 1 };
  }
  const unit = Number.parseInt(source.slice(start + 2, start + 6), 16);
  if (
    unit >= 0xd800 &&
    unit <= 0xdbff &&
    /^\\u[Dd][C-Fc-f][\dA-Fa-f]{2}/.test(source.slice(start + 6, start + 12))
  ) {
    const low = Number.parseInt(source.slice(start + 8, start + 12), 16);
    return { ok: true, text: hex(0x10000 + (unit - 0xd800) * 0x400 + (low - 0xdc00)), end: start + 12 };
  }
  return { ok: true, text: hex(unit), end: start + 6 };
}

/** `\p{...}` / `\P{...}` in RE2's names; `refused` when RE2 has no such property at all. */
function propertyEscape(
  letter: 'p' | 'P',
  body: string,
  inClass: boolean,
): { text: string; property?: boolean; refused?: string } {
  const equals = body.indexOf('=');
  const name = equals === -1 ? '' : body.slice(0, equals);
  const value = equals === -1 ? body : body.slice(equals + 1);
  if (name === 'Script_Extensions' || name === 'scx') {
    return { text: '', refused: `the Unicode property "\\${letter}{${body}}" (Script_Extensions)` };
  }
  if (equals === -1 && value === 'ASCII') {
    const ascii = letter === 'p' ? '\\x{0}-\\x{7F}' : '\\x{80}-\\x{10FFFF}';
    return { text: inClass ? ascii : `[${ascii}]` };
  }
  const re2Name = name === 'Script' || name === 'sc' ? value : (CATEGORY_NAMES[value] ?? value);
  const text = `\\${letter}{${re2Name}}`;
  return { text, property: true };
}
