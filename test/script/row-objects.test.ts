import { afterEach, describe, expect, it, vi } from 'vitest';
import { columnarEntity, rowObjectsOf } from '../../src/script/entity-data.js';

const NUMBERS = Float64Array.from([1, -0, 0, 2.5, NaN, 2 ** 31, -7]);

function entity(names: string[]) {
  return columnarEntity(
    names.map((name, j) => ({ name, type: j === 0 ? 'NUMBER' : 'STRING' })),
    [
      NUMBERS,
      ['a', null, '', undefined as unknown as string, 'e', 'f', 'g'].map((s) => s) as (string | null)[],
    ],
    NUMBERS.length,
  );
}

describe('row objects of a table', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('gives each row its number and text cells, empty cells as null, -0 as -0', () => {
    const rows = rowObjectsOf(entity(['n', 's']));
    expect(rows.map((r) => r.n)).toEqual([1, -0, 0, 2.5, null, 2 ** 31, -7]);
    expect(Object.is(rows[1]!.n, -0)).toBe(true);
    expect(Object.is(rows[2]!.n, 0)).toBe(true);
    expect(rows.map((r) => r.s)).toEqual(['a', null, '', null, 'e', 'f', 'g']);
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
    expect(Object.keys(rows[0]!)).toEqual(['n', 's']);
    rows[0]!.n = 9; // plain objects the function may change
    expect(rows[0]!.n).toBe(9);
  });

  it('keeps a column named __proto__ as an own property, not the prototype', () => {
    const rows = rowObjectsOf(entity(['__proto__', 'constructor']));
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(rows[0], '__proto__')?.value).toBe(1);
    expect(rows[0]!.constructor).toBe('a');
  });

  it('makes the same rows where generated code is refused (edge runtimes)', () => {
    const names = ['refused n', "refused 's"];
    const expected = [
      { 'refused n': 1, "refused 's": 'a' },
      { 'refused n': -0, "refused 's": null },
    ];
    vi.stubGlobal(
      'Function',
      class {
        constructor() {
          throw new EvalError('Code generation from strings disallowed for this context');
        }
      },
    );
    const rows = rowObjectsOf(entity(names));
    vi.unstubAllGlobals();
    expect(rows.slice(0, 2)).toEqual(expected);
    expect(Object.is(rows[1]!['refused n'], -0)).toBe(true);
    expect(rows).toHaveLength(NUMBERS.length);
  });

  it('takes any column name as data, never as code', () => {
    const names = ['a"b', '\\', '\u2028', '}); throw new Error("ran"); ({', '`${1}`', "x' + '"];
    const columns = names.map((_, j) => Float64Array.from([j, j + 0.5]));
    const rows = rowObjectsOf(
      columnarEntity(
        names.map((name) => ({ name, type: 'NUMBER' })),
        columns,
        2,
      ),
    );
    expect(rows.map((row) => Object.keys(row))).toEqual([names, names]);
    expect(rows[1]).toEqual(Object.fromEntries(names.map((name, j) => [name, j + 0.5])));
  });
});
