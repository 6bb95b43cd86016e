import { describe, expect, it } from 'vitest';
import { LimitError, ScriptError } from '../../src/errors/index.js';
import { bothSandboxes, failure, input } from './helpers.js';

const sandboxes = bothSandboxes();

describe.each(sandboxes)('%s', (_name, sandbox) => {
  it.each([
    ['many small arrays', 'const a = []; for (;;) a.push([1, 2]);', 8],
    ['many small objects', 'const a = []; for (;;) a.push({ x: 1 });', 16],
    ['small arrays kept by a function', 'function f() { const a = []; for (;;) a.push([1, 2]); }\nf();', 8],
    ['map entries', 'const m = new Map(); for (let i = 0; ; i++) m.set(i, { i });', 1],
    [
      'map entries in an async function',
      '(async () => { await null; const m = new Map(); for (let i = 0; ; i++) m.set(i, { i }); })();',
      16,
    ],
  ])(
    'stops %s at the memory limit, as any other out-of-memory',
    async (_what, source, mib) => {
      const error = await failure(
        sandbox.run(input(source, { memoryBytes: mib * 1024 * 1024, timeoutMs: 30_000 })),
      );
      expect(error).toBeInstanceOf(LimitError);
      expect((error as LimitError).limit).toBe('script.memory');
      expect(error.message).toBe(`script exceeded its memory limit of ${mib} MiB`);
    },
    60_000,
  );

  it('still reports a thrown null as the script error it is, after a run that ran out of memory', async () => {
    await failure(
      sandbox.run(
        input('const a = []; for (;;) a.push([1, 2]);', { memoryBytes: 8 << 20, timeoutMs: 30_000 }),
      ),
    );
    const error = await failure(sandbox.run(input('const a = 1;\nthrow null;', { memoryBytes: 8 << 20 })));
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).toBe('the script threw null');
  }, 60_000);

  it.each([
    [
      'a one-line function called from a later line',
      'const rows = getEntity("orders");\nfunction check(r) { if (r.id > 2) throw new Error("big"); }\n\nrows.forEach(check);',
      2,
    ],
    [
      'a one-line arrow in a const',
      'const need = (x) => { if (!x) throw new Error("missing"); };\n\n\nneed(0);',
      1,
    ],
    [
      'a TypeError in a one-line nested function',
      'function outer() {\n  function inner(o) { return o.a.b; }\n  return inner({});\n}\nouter();',
      2,
    ],
    [
      'a one-line getter of a written row',
      'const row = { get a() { throw new Error("no a"); } };\n\nwriteEntity("totals", [row]);',
      1,
    ],
    ['a one-line script', 'writeEntity("totals", [{ a: 1, toJSON() { return 5; } }])', 1],
    ['a thrown string in a one-line script', 'throw "plain"', 1],
    ['a one-line method', 'const o = {\n  m(x) { return x.y.z; },\n};\n\no.m({});', 2],
    ['lines ended by a lone carriage return', 'const a = 1;\rconst b = 2;\r\rnull.x;', 4],
  ])('reports the line an error was raised on: %s', async (_what, source, line) => {
    const error = await failure(sandbox.run(input(source)));
    expect(error).toBeInstanceOf(ScriptError);
    expect((error as ScriptError).line).toBe(line);
  });

  it("reports the line of a script whose file name is also the tail of the prelude's", async () => {
    const error = await failure(
      sandbox.run({
        ...input('function f() {\n  writeEntity("totals", 5);\n}\n\nf();'),
        filename: 'prelude',
      }),
    );
    expect((error as ScriptError).line).toBe(2);
  });
});
