/**
 * The line of a failing one-line function is looked up in the script's source with regular
 * expressions built from the function's name. The script writes both the source and (through a
 * thrown object's `stack`) the name: the look-up stays linear in the source whatever they hold.
 */
import { describe, expect, it } from 'vitest';
import { scriptLine } from '../../src/script/outcome.js';

const FILE = 'transform.js';

/** A QuickJS stack whose innermost frame is the one-line function `name`. */
function stackOf(name: string): string {
  return `    at ${name} (${FILE})\n    at <eval> (${FILE}:9)`;
}

function timed<T>(run: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = run();
  return { value, ms: performance.now() - start };
}

describe('the line of a one-line function', () => {
  it('is where the function is defined, found by its name taken as literal text', () => {
    const source = 'const a = 1;\nfunction check() { throw new Error("no") }\ncheck();';
    expect(scriptLine(stackOf('check'), FILE, source)).toBe(2);
    const generator = 'let x;\n\nfunction * gen() { throw 1 }';
    expect(scriptLine(stackOf('gen'), FILE, generator)).toBe(3);
    // A name full of pattern syntax matches only itself: here nothing, so the caller's line.
    expect(scriptLine(stackOf('(a+)+$'), FILE, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab')).toBe(9);
    expect(scriptLine(stackOf('.*'), FILE, 'function x() {}')).toBe(9);
  });

  it('takes linear time on a run of spaces after `function`', () => {
    const source = `// function${' '.repeat(30_000)}x\nfunction check() { throw 1 }`;
    const { value, ms } = timed(() => scriptLine(stackOf('check'), FILE, source));
    expect(value).toBe(2);
    expect(ms).toBeLessThan(1000);
  });

  it('counts lines once however many definitions share the last line', () => {
    const source = `${'\n'.repeat(50_000)}${'function f() {} '.repeat(20_000)}`;
    const { value, ms } = timed(() => scriptLine(stackOf('f'), FILE, source));
    expect(value).toBe(50_001);
    expect(ms).toBeLessThan(1000);
  });

  it('does not look for a name longer than 256 characters', () => {
    const name = 'f'.repeat(300);
    const source = `\nfunction ${name}() { throw 1 }`;
    expect(scriptLine(stackOf(name), FILE, source)).toBe(9);
    expect(scriptLine(stackOf('f'.repeat(256)), FILE, `\nfunction ${'f'.repeat(256)}() {}`)).toBe(2);
  });
});
