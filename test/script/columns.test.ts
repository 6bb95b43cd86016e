import { describe, expect, it } from 'vitest';
import { DEFAULT_SCRIPT_LIMITS, type EntityData, type ScriptSandbox } from '../../src/script/index.js';
import { columnarEntity } from '../../src/script/entity-data.js';
import { columnsRead } from '../../src/script/reads.js';
import { bothSandboxes } from './helpers.js';

const sandboxes = bothSandboxes();

const columns = ['id', 'name', 'amount'].map((name) => ({ name, type: 'ANY' }));
const t = {
  columns,
  rows: [
    [1, 'a', 1],
    [2, 'b', 5],
    [3, 'c', 7],
  ],
};

function run(sandbox: ScriptSandbox, source: string, inputs: Record<string, EntityData> = { t }) {
  return sandbox.run({ source, inputs, outputs: ['out'], limits: { ...DEFAULT_SCRIPT_LIMITS } });
}

describe.each(sandboxes)('%s', (_name, sandbox) => {
  it('reads an entity given by column as the catalog holds it (spare capacity ignored)', async () => {
    const data = columnarEntity(
      [
        { name: 'n', type: 'NUMBER' },
        { name: 'b', type: 'BOOLEAN' },
        { name: 's', type: 'STRING' },
      ],
      [new Float64Array([1, NaN, 2.5, 9]), new Uint8Array([1, 0, 2, 1]), ['a', null, 'c', 'x']],
      3,
    );
    expect(data.rows).toEqual([
      [1, true, 'a'],
      [null, false, null],
      [2.5, null, 'c'],
    ]);
    const result = await run(sandbox, "writeEntity('out', getEntity('t'))", { t: data });
    expect(result.writes['out']).toStrictEqual([
      { n: 1, b: true, s: 'a' },
      { n: null, b: false, s: null },
      { n: 2.5, b: null, s: 'c' },
    ]);
  });

  it('writes rows whose keys are not identifiers as they are (spaces, dashes, digits, reserved words)', async () => {
    const keys = ['unit price', 'a-b', '1st', 'class', '$x', '_y', 'é', 'x1', ''];
    const source = `const keys = ${JSON.stringify(keys)};
      const rows = [];
      for (let i = 0; i < 3; i++) { const row = {}; keys.forEach((k, j) => { row[k] = i * 10 + j; }); rows.push(row); }
      rows[2]['a-b'] = 'text';
      writeEntity('out', rows);`;
    const result = await run(sandbox, source);
    const expected = [0, 1, 2].map((i) =>
      Object.fromEntries(keys.map((k, j) => [k, i === 2 && k === 'a-b' ? 'text' : i * 10 + j])),
    );
    expect(result.writes['out']).toStrictEqual(expected);
  });

  it('reads unchanging column data again after an append, and changed data given as changing', async () => {
    const numbers = new Float64Array(8);
    numbers.set([1, 2, 3]);
    const names = ['a', 'b', 'c'] as (string | null)[];
    const cols = [
      { name: 'n', type: 'NUMBER' },
      { name: 's', type: 'STRING' },
    ];
    const source = "writeEntity('out', getEntity('t').map((r) => ({ n: r.n, s: r.s })))";
    const first = await run(sandbox, source, {
      t: columnarEntity(cols, [numbers, names], 3, { unchanging: true }),
    });
    expect(first.writes['out']).toStrictEqual([
      { n: 1, s: 'a' },
      { n: 2, s: 'b' },
      { n: 3, s: 'c' },
    ]);
    // An append writes past the first rows into the same buffers: the longer table is read whole.
    numbers[3] = 4;
    names[3] = 'd';
    const appended = await run(sandbox, source, {
      t: columnarEntity(cols, [numbers, names], 4, { unchanging: true }),
    });
    expect(appended.writes['out']).toStrictEqual([...first.writes['out']!, { n: 4, s: 'd' }]);
    // Data not declared unchanging is encoded afresh each run, so a change in place is seen.
    numbers[0] = 100;
    names[0] = 'z';
    const changed = await run(sandbox, source, { t: columnarEntity(cols, [numbers, names], 4) });
    expect(changed.writes['out']![0]).toStrictEqual({ n: 100, s: 'z' });
  });

  it('completes rows with the columns the script never names once they reach writeEntity or console', async () => {
    const result = await run(
      sandbox,
      `const kept = getEntity('t').filter((r) => r.amount > 1);
      const first = kept.find(() => true);
      first.flag = true;
      console.log(first);
      writeEntity('out', kept);
      writeEntity('out', kept.map((r) => ({ amount: r.amount, row: r })));`,
    );
    expect(result.logs).toEqual(['{"id":2,"name":"b","amount":5,"flag":true}']);
    expect(result.writes['out']).toStrictEqual([
      { id: 2, name: 'b', amount: 5, flag: true },
      { id: 3, name: 'c', amount: 7 },
      { amount: 5, row: { id: 2, name: 'b', amount: 5, flag: true } },
      { amount: 7, row: { id: 3, name: 'c', amount: 7 } },
    ]);
  });
});

describe('columnsRead', () => {
  const names = ['id', 'name', 'amount'];

  it('keeps the columns a script names when it reaches properties only by written names', () => {
    expect(
      columnsRead("const out = []; for (const r of getEntity('t')) out.push({ a: r.amount })", names),
    ).toEqual([false, false, true]);
    expect(columnsRead('const [a, b] = [1, 2]; return [a.amount];', names)).toEqual([false, false, true]);
  });

  it('keeps every column when the script may reach them otherwise, names them all or names none', () => {
    for (const source of [
      'r[key]',
      'f()[0].amount',
      'r?.[k]; amount',
      'x /* c */[k]; amount',
      'const { amount, ...rest } = r',
      "'amount' in r",
      'for (const k in r) amount',
      'Object.keys(r); amount',
      'JSON.stringify(r); amount',
      'delete r.id; amount',
      'r.\\u0061mount',
      'r.__proto__.amount',
      'this.amount',
    ])
      expect(columnsRead(source, names), source).toBeUndefined();
    expect(columnsRead('r.id + r.name + r.amount', names)).toBeUndefined();
    expect(columnsRead("writeEntity('out', getEntity('t'))", names)).toBeUndefined();
  });
});
