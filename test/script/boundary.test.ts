import { describe, expect, it } from 'vitest';
import { LimitError, ScriptError } from '../../src/errors/index.js';
import { DEFAULT_SCRIPT_LIMITS, type EntityData, type ScriptSandbox } from '../../src/script/index.js';
import { bothSandboxes, failure } from './helpers.js';

const sandboxes = bothSandboxes();

function entity(names: string[], rows: unknown[][]): EntityData {
  return { columns: names.map((name) => ({ name, type: 'ANY' })), rows };
}

function run(
  sandbox: ScriptSandbox,
  source: string,
  inputs: Record<string, EntityData> = {},
  maxOutputBytes?: number,
) {
  return sandbox.run({
    source,
    inputs,
    outputs: ['out'],
    limits: { ...DEFAULT_SCRIPT_LIMITS, timeoutMs: 5000, ...(maxOutputBytes ? { maxOutputBytes } : {}) },
  });
}

const COPY = "writeEntity('out', getEntity('t'))";
const EMOJI = ['👩‍👩‍👧', 'e\u0301', 'ﬁ', '\u0000', 'a"b\\c', '', '日本語', '🇫🇷'];

describe.each(sandboxes)('%s', (_name, sandbox) => {
  it('reads missing, NaN and infinite number cells as null and writes them back as null', async () => {
    const t = entity(['n'], [[1.5], [null], [NaN], [undefined], [Infinity], [-Infinity], [-2]]);
    const result = await run(
      sandbox,
      "const rows = getEntity('t'); console.log(rows.map((r) => r.n === null ? 'null' : typeof r.n).join()); writeEntity('out', rows)",
      { t },
    );
    expect(result.logs).toEqual(['number,null,null,null,null,null,number']);
    expect(result.writes['out']).toStrictEqual([
      { n: 1.5 },
      { n: null },
      { n: null },
      { n: null },
      { n: null },
      { n: null },
      { n: -2 },
    ]);
  });

  it('keeps integers, big and fractional numbers exact both ways', async () => {
    const values = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53 - 1, 0.1, 1e-300, -1e300];
    const t = entity(
      ['n'],
      values.map((v) => [v]),
    );
    const result = await run(
      sandbox,
      `${COPY}; console.log(getEntity('t').reduce((s, r) => s + r.n * 0, 0))`,
      {
        t,
      },
    );
    expect(result.writes['out']).toStrictEqual(values.map((n) => ({ n })));
  });

  it('round-trips repetitive and unique strings, booleans and nulls, unicode included', async () => {
    const rows: unknown[][] = [];
    for (let i = 0; i < 200; i++) {
      rows.push([
        EMOJI[i % EMOJI.length],
        `${EMOJI[i % EMOJI.length]}-${i}`,
        i % 5 === 0 ? null : i % 2 === 0,
        i,
      ]);
    }
    const t = entity(['dict', 'unique', 'flag', 'i'], rows);
    const result = await run(
      sandbox,
      `${COPY}; const r = getEntity('t'); console.log(r[0].dict.length, r[1].dict === 'e\\u0301', typeof r[2].flag)`,
      { t },
    );
    const expected = rows.map(([dict, unique, flag, i]) => ({ dict, unique, flag, i }));
    expect(result.writes['out']).toStrictEqual(expected);
    expect(result.logs).toEqual(['8 true boolean']);
  });

  it('passes cells JSON can carry through as JSON makes them', async () => {
    const t = entity(['v'], [[{ a: [1, 'x'] }], [[1, 2]], ['s'], [3], [true], [new Date(0)], [undefined]]);
    const result = await run(sandbox, COPY, { t });
    expect(result.writes['out']).toStrictEqual([
      { v: { a: [1, 'x'] } },
      { v: [1, 2] },
      { v: 's' },
      { v: 3 },
      { v: true },
      { v: '1970-01-01T00:00:00.000Z' },
      { v: null },
    ]);
  });

  it('writes columns of mixed types, nested values and JSON-only values as JSON would', async () => {
    const result = await run(
      sandbox,
      `writeEntity('out', [
        { a: 1, b: 'x', c: null, d: -0, e: Infinity },
        { a: 'two', b: true, c: { deep: [1] }, d: NaN, e: 2 },
        { a: false, b: null, c: undefined, d: 3, e: () => 1 },
      ]);
      writeEntity('out', [{ when: new Date(0), big: 1e21 }]);`,
    );
    expect(result.writes['out']).toStrictEqual([
      { a: 1, b: 'x', c: null, d: 0, e: null },
      { a: 'two', b: true, c: { deep: [1] }, d: null, e: 2 },
      { a: false, b: null, d: 3 },
      { when: '1970-01-01T00:00:00.000Z', big: 1e21 },
    ]);
  });

  it('packs number columns with nulls and non-finite values as null, -0 as 0', async () => {
    const result = await run(
      sandbox,
      "const rows = []; for (let i = 0; i < 100; i++) rows.push({ i, x: i % 3 === 0 ? null : i % 3 === 1 ? 1 / 0 : -0, s: 'k' + (i % 2) }); writeEntity('out', rows)",
    );
    const expected = Array.from({ length: 100 }, (_, i) => ({
      i,
      x: i % 3 === 0 ? null : i % 3 === 1 ? null : 0,
      s: `k${i % 2}`,
    }));
    expect(result.writes['out']).toStrictEqual(expected);
    expect(Object.is((result.writes['out']?.[2] as { x: number }).x, 0)).toBe(true);
  });

  it('delivers columns whose type changes after the first row exactly', async () => {
    const result = await run(
      sandbox,
      "const rows = []; for (let i = 0; i < 50; i++) rows.push({ n: i === 40 ? 'x' : i, s: i === 45 ? null : 's' + (i % 2), b: 'k' }); writeEntity('out', rows)",
    );
    const expected = Array.from({ length: 50 }, (_, i) => ({
      n: i === 40 ? 'x' : i,
      s: i === 45 ? null : `s${i % 2}`,
      b: 'k',
    }));
    expect(result.writes['out']).toStrictEqual(expected);
  });

  it("delivers rows with differing key sets with exactly their own keys, and rows packed in the first row's key order", async () => {
    const result = await run(
      sandbox,
      `const hidden = { a: 3, c: 4 }; Object.defineProperty(hidden, 'h', { value: 1, enumerable: false });
      const inherited = Object.assign(Object.create({ b: 9 }), { a: 6 });
      writeEntity('out', [{ a: 1, b: 2 }, { a: 2 }]);
      writeEntity('out', [{ a: 1 }, { a: 2, b: 3 }]);
      writeEntity('out', [{ a: 1, b: 2 }, { b: 5, a: 4 }]);
      writeEntity('out', [{ a: 1, h: 2 }, hidden]);
      writeEntity('out', [{ a: 1, b: 2 }, inherited]);`,
    );
    const rows = result.writes['out'] ?? [];
    expect(rows).toStrictEqual([
      { a: 1, b: 2 },
      { a: 2 },
      { a: 1 },
      { a: 2, b: 3 },
      { a: 1, b: 2 },
      { b: 5, a: 4 },
      { a: 1, h: 2 },
      { a: 3, c: 4 },
      { a: 1, b: 2 },
      { a: 6 },
    ]);
    expect(rows.map((row) => Object.keys(row).join(''))).toEqual([
      'ab',
      'a',
      'a',
      'ab',
      'ab',
      'ab',
      'ah',
      'ac',
      'ab',
      'a',
    ]);
  });

  it('writes rows of unusual shapes as JSON.stringify makes them, reading each getter once', async () => {
    // Each batch starts with a plain row, so the packed path is tried first; what arrives must be
    // what JSON.stringify makes of the batch inside the guest.
    const batches = [
      '[{ a: 1, b: 2 }, Object.assign(Object.create({ toJSON() { return { a: 9, b: 9 }; } }), { a: 3, b: 4 })]',
      "[{ a: 1, b: 2 }, Object.defineProperty({ a: 3, b: 4 }, 'toJSON', { value: () => ({ a: 7, b: 7 }) })]",
      "[{ a: 1, b: 2 }, { a: 3, b: 4, [Symbol('s')]: 5 }]",
      '[{ a: 1, b: 2 }, { a: 3, b: 4, c: 5 }]',
      '[{ a: 1, b: 2 }, { a: 3 }, {}]',
      '[{ a: 1, b: 2 }, { a: 3, b: undefined }]',
      '[{ a: 1, b: 2 }, new Proxy({ a: 3, b: 4 }, {})]',
      '[{ a: 1, b: 2 }, Object.create(null, { a: { value: 3, enumerable: true }, b: { value: 4, enumerable: true } })]',
    ];
    for (const batch of batches) {
      const result = await run(
        sandbox,
        `const rows = ${batch}; const json = JSON.stringify(rows); writeEntity('out', rows); console.log(json);`,
      );
      expect(result.writes['out'], batch).toStrictEqual(JSON.parse(result.logs[0]!));
    }
    const counted = await run(
      sandbox,
      `let calls = 0;
      const rows = [{ a: 1, b: 2 }, { a: 3, get b() { calls++; return 4; } }];
      writeEntity('out', rows); console.log(calls);`,
    );
    expect(counted.writes['out']).toStrictEqual([
      { a: 1, b: 2 },
      { a: 3, b: 4 },
    ]);
    expect(counted.logs).toEqual(['1']);
    const thrown = await failure(
      run(sandbox, "writeEntity('out', [{ a: 1 }, { get a() { throw new RangeError('no a here'); } }])"),
    );
    expect(thrown.message).toMatch(/no a here/);
    const array = await failure(run(sandbox, "writeEntity('out', [{ a: 1, b: 2 }, [3, 4]])"));
    expect(array.message).toMatch(/row 1 is an array/);
    const proto = await failure(
      run(sandbox, `writeEntity('out', [{ a: 1, b: 2 }, JSON.parse('{"a": 3, "b": 4, "__proto__": 5}')])`),
    );
    expect(proto.message).toMatch(/row 1 has the column name "__proto__"/);
  });

  it('refuses __proto__ keys wherever they appear, without polluting host objects', async () => {
    for (const rows of [
      `[{ ['__proto__']: 1, a: 1 }]`,
      `[{ a: 1 }, JSON.parse('{"a": 2, "__proto__": {"polluted": 1}}')]`,
      `[{ a: 1 }, JSON.parse('{"__proto__": {"polluted": 1}}')]`,
    ]) {
      const error = await failure(run(sandbox, `writeEntity('out', ${rows})`));
      expect(error).toBeInstanceOf(ScriptError);
      expect(error.message).toContain('"__proto__"');
    }
    const t = entity(['__proto__', 'a'], [[{ polluted: 1 }, 1]]);
    const read = await run(
      sandbox,
      "const r = getEntity('t')[0]; console.log(Object.keys(r).join(), r.polluted)",
      { t },
    );
    expect(read.logs).toEqual(['__proto__,a undefined']);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('counts packed numbers against the output limit', async () => {
    const source =
      "const rows = []; for (let i = 0; i < 10000; i++) rows.push({ v: i }); writeEntity('out', rows)";
    // 10,000 numbers packed are 80,000 bytes plus a short header.
    const ok = await run(sandbox, source, {}, 81_000);
    expect(ok.writes['out']).toHaveLength(10000);
    const error = await failure(run(sandbox, `try { ${source} } catch (e) {}`, {}, 79_000));
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('script.output');
  });

  it('handles entities and writes without rows', async () => {
    const t = entity(['a', 'b'], []);
    const result = await run(
      sandbox,
      "const rows = getEntity('t'); console.log(Array.isArray(rows), rows.length); writeEntity('out', rows); writeEntity('out', [])",
      { t },
    );
    expect(result.logs).toEqual(['true 0']);
    expect(result.writes['out']).toStrictEqual([]);
  });

  it('gives plain row objects a script can spread, enumerate and change', async () => {
    const t = entity(
      ['id', 'name'],
      [
        [1, 'a'],
        [2, 'b'],
      ],
    );
    const result = await run(
      sandbox,
      `const rows = getEntity('t');
      rows[0].id = 10; delete rows[1].name;
      console.log(Object.getPrototypeOf(rows[0]) === Object.prototype, JSON.stringify({ ...rows[0] }), Object.keys(rows[1]).join());
      writeEntity('out', rows); writeEntity('out', getEntity('t'));`,
      { t },
    );
    expect(result.logs).toEqual(['true {"id":10,"name":"a"} id']);
    expect(result.writes['out']).toStrictEqual([
      { id: 10, name: 'a' },
      { id: 2 },
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
  });
});
