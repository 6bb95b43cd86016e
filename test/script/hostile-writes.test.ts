import { describe, expect, it } from 'vitest';
import { ScriptError } from '../../src/errors/index.js';
import { bothSandboxes, failure, input } from './helpers.js';

const sandboxes = bothSandboxes();

describe.each(sandboxes)('%s: hostile values handed to writeEntity', (_name, sandbox) => {
  it.each([
    ['5', 'their toJSON gave a number'],
    ['null', 'their toJSON gave null'],
    ['"rows"', 'their toJSON gave a string'],
    ['undefined', 'their toJSON gave undefined'],
  ])('refuses rows whose toJSON gives %s with a script error saying so', async (given, says) => {
    const error = await failure(
      sandbox.run(
        input(`const rows = [{ a: 1 }];\nrows.toJSON = () => ${given};\nwriteEntity('totals', rows);`),
      ),
    );
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).toMatch(
      /^line 3: Error: writeEntity\("totals"\): rows must be an array of objects/,
    );
    expect(error.message).toContain(says);
  });

  it('refuses a data table whose rows toJSON gives no array', async () => {
    const error = await failure(
      sandbox.run(
        input(
          `const rows = [[1]];\nrows.toJSON = () => 7;\nwriteEntity('totals', { columns: ['a'], rows });`,
        ),
      ),
    );
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).toBe(
      'line 3: Error: writeEntity("totals"): the rows of the data table must be an array of rows; their toJSON gave a number',
    );
  });

  it('refuses a data table whose rows toJSON gives null, never with a host TypeError', async () => {
    const error = await failure(
      sandbox.run(
        input(
          `const rows = [[1]];\nrows.toJSON = () => null;\nwriteEntity('totals', { columns: ['a'], rows });`,
        ),
      ),
    );
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).not.toMatch(/Cannot (read|convert)/);
    expect(error.message).toContain('their toJSON gave null');
  });

  it("reports a row getter's own error as the script's, with its line", async () => {
    const error = await failure(
      sandbox.run(
        input(
          `const row = {\n  get a() {\n    throw new Error('no a');\n  },\n};\nwriteEntity('totals', [row]);`,
        ),
      ),
    );
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).toBe('line 3: Error: no a');
  });
});

describe.each(sandboxes)('%s: numbers JSON cannot hold', (_name, sandbox) => {
  it.each([
    [
      'objects packed by column',
      '[{ n: 1, v: NaN }, { n: 2, v: Infinity }, { n: 3, v: -Infinity }, { n: 4, v: -0 }]',
    ],
    [
      'objects with a null among the numbers',
      '[{ n: 1, v: NaN }, { n: 2, v: null }, { n: 3, v: -Infinity }, { n: 4, v: -0 }]',
    ],
    ['a data table', "{ columns: ['n', 'v'], rows: [[1, NaN], [2, Infinity], [3, -Infinity], [4, -0]] }"],
  ])('leave the sandbox as JSON makes them (%s): empty cells, -0 as 0', async (_, rows) => {
    const result = await sandbox.run(input(`writeEntity('totals', ${rows});`));
    const written = result.writes['totals']!.map((row) => (Object.is(row['v'], -0) ? '-0' : row['v']));
    expect(written).toEqual([null, null, null, 0]);
  });
});
