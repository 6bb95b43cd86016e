/**
 * A pattern means what it means in JavaScript (`new RegExp(pattern, 'u')`, searched unanchored)
 * although it runs on RE2: the two are compared on chosen cases where their syntaxes differ, and on
 * random patterns and strings.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/json-schema/index.js';

function matchesHere(pattern: string, text: string): boolean {
  return compileSchema({ pattern }).validate(text).length === 0;
}

function matchesInJavaScript(pattern: string, text: string): boolean {
  return new RegExp(pattern, 'u').test(text);
}

/** Strings that tell the dialects apart: line terminators, JavaScript-only spaces, astral letters, surrogates. */
const TEXTS = [
  '',
  'a',
  'ab',
  'a\n',
  '\n',
  '\r',
  '\u2028',
  '\u2029',
  '\v',
  '\u00a0',
  '\u1680',
  '\u2003',
  '\u202f',
  '\u3000',
  '\ufeff',
  ' ',
  '\t',
  '\b',
  '\0',
  '_',
  '1',
  'é',
  'É',
  'Ω',
  '😀',
  '\ud83d',
  '\ude00',
  'a😀b',
  '[:a:]',
  ':',
  'k<w>',
  '\\',
  '/',
  '-',
  'x-y',
  '2024-01-31',
];

/** Patterns whose RE2 spelling differs from JavaScript's, or whose meaning does. */
const PATTERNS = [
  '^.$',
  '^.+$',
  '^\\s$',
  '^\\S$',
  '^[\\s]$',
  '^[^\\s]$',
  '^[\\S]$',
  '^[^\\S]$',
  '^[\\s\\d]$',
  '^[\\b]$',
  '\\bab\\b',
  '\\Ba',
  '^\\0$',
  '^\\cH$',
  '^\\x2F$',
  '^\\u00e9$',
  '^\\u{1F600}$',
  '^\\uD83D\\uDE00$',
  '^\\uD83D$',
  '^[]$',
  '^[^]$',
  '[]',
  '[^]',
  '^\\d$',
  '^\\w$',
  '^\\W$',
  '^\\p{L}$',
  '^\\p{Letter}$',
  '^\\P{L}$',
  '^[\\p{Lu}\\d]$',
  '^\\p{Script=Greek}$',
  '^\\p{sc=Latin}$',
  '^\\p{gc=Lowercase_Letter}$',
  '^\\p{Alphabetic}$',
  '^\\p{White_Space}$',
  '^\\p{ASCII}$',
  '^\\P{ASCII}$',
  '^[\\P{ASCII}a]$',
  '^\\p{Any}$',
  '^\\p{Emoji_Presentation}$',
  '^\\/$',
  '^[\\-]$',
  '^[a\\-z]$',
  '^[a-z]$',
  '^[\\[:a:\\]]+$',
  '^\\[:a:\\]$',
  '^(?<word>a)b$',
  '^(?:a|ab)$',
  '^a{1,2}?$',
  '^a*?b$',
  'a$',
  '^a',
  '$',
  '',
  '^(?:)$',
  '^[\\u{1F600}-\\u{1F64F}]$',
  '^[\\t\\n\\v\\f\\r]$',
  '\\d{4}-\\d{2}-\\d{2}',
  '^[\\^]$',
  '^\\^$',
  '^\\$$',
  '^\\\\$',
  '^\\.$',
  '^\\|$',
  '^[|]$',
  '^[.]$',
  '^[$]$',
  '^[(]$',
  '^[{}]$',
  '^\\{\\}$',
];

describe('patterns keep their JavaScript meaning on RE2', () => {
  it.each(PATTERNS)('%s', (pattern) => {
    for (const text of TEXTS) {
      expect(matchesHere(pattern, text), `/${pattern}/u against ${JSON.stringify(text)}`).toBe(
        matchesInJavaScript(pattern, text),
      );
    }
  });

  // No `\B` here: V8 also tries the position between the two halves of a surrogate pair, where
  // `\B` holds (`/\B/u.exec('a😀a').index` is 2); ECMA-262 and RE2 read code points and do not.
  it('agrees with JavaScript on random patterns and strings', () => {
    const atom = fc.constantFrom(
      'a',
      'b',
      'é',
      '😀',
      '.',
      '\\s',
      '\\S',
      '\\d',
      '\\w',
      '\\W',
      '\\b',
      '[ab]',
      '[^a]',
      '[\\s\\d]',
      '[^\\S]',
      '\\p{L}',
      '\\P{Lu}',
      '[a-c]',
      '\\n',
      '\\u2028',
      '^',
      '$',
      '[]',
      '[^]',
    );
    const quantifier = fc.constantFrom('', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?');
    const piece = fc.tuple(atom, quantifier).map(([a, q]) => (a === '^' || a === '$' ? a : a + q));
    const sequence = fc.array(piece, { maxLength: 5 }).map((pieces) => pieces.join(''));
    const pattern = fc.tuple(sequence, fc.option(sequence), fc.boolean()).map(([left, right, group]) => {
      const body = right === null ? left : `${left}|${right}`;
      return group ? `(${body})+x?` : body;
    });
    const text = fc
      .array(
        fc.constantFrom(
          'a',
          'b',
          'c',
          'é',
          'É',
          '😀',
          ' ',
          '\n',
          '\r',
          '\u2028',
          '\u00a0',
          '1',
          '_',
          'x',
          '\ud800',
        ),
        {
          maxLength: 8,
        },
      )
      .map((chars) => chars.join(''));
    fc.assert(
      fc.property(pattern, fc.array(text, { minLength: 1, maxLength: 5 }), (source, texts) => {
        // Not every generated pattern is JavaScript (`\b*`): those are refused alike, as before.
        try {
          new RegExp(source, 'u');
        } catch {
          return;
        }
        for (const sample of texts) {
          expect(matchesHere(source, sample), `/${source}/u against ${JSON.stringify(sample)}`).toBe(
            matchesInJavaScript(source, sample),
          );
        }
      }),
      { numRuns: 400 },
    );
  });

  it('applies patternProperties to property names with the same meaning', () => {
    const schema = compileSchema({
      type: 'object',
      patternProperties: { '^\\s': false, '^\\p{Lu}': { type: 'number' } },
    });
    expect(schema.validate({ '\u00a0x': 1 })).toEqual([expect.objectContaining({ code: 'not_allowed' })]);
    expect(schema.validate({ Émile: 'x' })).toEqual([expect.objectContaining({ code: 'invalid_type' })]);
    expect(schema.validate({ émile: 'x', x: 1 })).toEqual([]);
  });
});
