/**
 * Which input columns a script can reach: those whose names its source text holds, unless the
 * source uses anything that reaches properties by a name made at run time or lists them.
 * @internal
 * @module
 */

/**
 * Source text that may reach a row's properties other than through a name written in the source
 * (computed member access is found by {@link computedAccess}): spread and rest, `in` (for-in and
 * the operator), `delete`, `with`, reflection (`Object`, `Reflect`, `JSON`, `Proxy`, prototypes and
 * `__` accessors), code made from text (`eval`, `Function`, `constructor`, `import`), `this`,
 * `arguments`, `globalThis`, `Symbol`, and `\u` escapes (an identifier may be spelled with them).
 */
const REFLECTIVE =
  /\.\.\.|__|\\u|\b(?:in|with|delete|this|arguments|eval|Function|Object|Reflect|JSON|Proxy|Symbol|constructor|prototype|globalThis|hasOwnProperty|propertyIsEnumerable|isPrototypeOf|getPrototypeOf|import|require)\b/;

/** Words after which `[` opens an array (or a destructuring pattern), not a member access. */
const BEFORE_ARRAY = new Set([
  'return',
  'typeof',
  'of',
  'case',
  'yield',
  'await',
  'void',
  'instanceof',
  'new',
  'throw',
  'else',
  'do',
  'const',
  'let',
  'var',
]);
const WORD_CHAR = /[\p{ID_Continue}$\u200c\u200d]/u;
const SPACE = /\s/;

/**
 * True when the source may have a computed member access (`row[name]`): a `[` after an identifier
 * that is not a keyword, after `)`, `]`, `?.` or `/`. Array literals (`[]`, `= [a, b]`, `return [..]`)
 * are not; a `[` in a string or comment may count, which only costs speed.
 */
function computedAccess(source: string): boolean {
  for (let at = source.indexOf('['); at !== -1; at = source.indexOf('[', at + 1)) {
    let p = at - 1;
    while (p >= 0 && SPACE.test(source[p]!)) p--;
    if (p < 0) continue;
    const before = source[p]!;
    // `/` ends a comment or a regular expression: counted, to be safe.
    if (before === ')' || before === ']' || before === '.' || before === '/') return true;
    if (WORD_CHAR.test(before)) {
      let q = p;
      while (q > 0 && WORD_CHAR.test(source[q - 1]!)) q--;
      if (!BEFORE_ARRAY.has(source.slice(q, p + 1))) return true;
    }
  }
  return false;
}

/**
 * Per column, whether a script may read it by name, or `undefined` when every column must be
 * there: the source may reach properties by names made at run time, it names every column, or it
 * names none (it then likely hands whole rows on). A column left out is still read correctly when
 * a row reaches `writeEntity` or `console`: the prelude completes such rows from the column.
 * @internal
 */
export function columnsRead(source: string, names: readonly string[]): boolean[] | undefined {
  if (REFLECTIVE.test(source) || computedAccess(source)) return undefined;
  const read = names.map((name) => source.includes(name));
  return read.every(Boolean) || !read.some(Boolean) ? undefined : read;
}
