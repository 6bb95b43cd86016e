/**
 * Finds where a JSON text first goes wrong, to name the line and column in a 400 answer. Runs only
 * after `JSON.parse` failed (engines word their own errors differently, and some give no position).
 * Nesting is already bounded by the depth check, so recursion is safe.
 * @internal
 */
export function locateJsonError(text: string): { index: number; reason: string } {
  let i = 0;
  const fail = (reason: string): never => {
    throw { index: i, reason };
  };
  const describe = () =>
    i >= text.length ? 'the body ends too early' : `unexpected ${JSON.stringify(text[i])}`;
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(describe());
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail('a string is not closed');
      const c = text.charCodeAt(i);
      if (c === 0x22) break;
      if (c < 0x20) fail('control character in a string');
      if (c === 0x5c) {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('bad \\u escape');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) fail('bad escape');
      }
      i++;
    }
    i++;
  };
  const number = () => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match) fail(describe());
    i += match![0].length;
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      space();
      if (text[i] === '}') return void i++;
      for (;;) {
        space();
        if (text[i] !== '"') fail(`${describe()}; expected a property name in double quotes`);
        string();
        space();
        if (text[i] !== ':') fail(`${describe()}; expected ":"`);
        i++;
        value();
        space();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail(`${describe()}; expected "," or "}"`);
      }
    }
    if (c === '[') {
      i++;
      space();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        space();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail(`${describe()}; expected "," or "]"`);
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    fail(describe());
  };
  try {
    if (text.charCodeAt(0) === 0xfeff) i = 1;
    value();
    space();
    if (i < text.length) fail(`${describe()} after the JSON value`);
  } catch (error) {
    if (typeof error === 'object' && error !== null && 'index' in error)
      return error as { index: number; reason: string };
    throw error;
  }
  return { index: i, reason: 'invalid JSON' };
}
