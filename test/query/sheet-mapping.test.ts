import { describe, expect, it } from 'vitest';
import type { CellRows } from '../../src/adapters/types.js';
import {
  appendRows,
  cellFromValue,
  coerceCell,
  columnLetters,
  headerIndexes,
  mapSheet,
  sheetCell,
  tableRow,
  toA1,
  type EntityTable,
} from '../../src/catalog/sheet-mapping.js';
import { SheetError } from '../../src/errors/index.js';
import type { ColumnType, Entity } from '../../src/schema/entity.js';

function entity(columns: [string, ColumnType][], origin = { row: 0, col: 0 }): Entity {
  return {
    name: 'orders',
    columns: columns.map(([name, type]) => ({ name, type })),
    primary_key: [columns[0]![0]],
    spreadsheet_config: { spreadsheet_id: 'doc-1', sheet_name: 'Orders', origin },
  };
}

const rows = (table: EntityTable): unknown[][] =>
  Array.from({ length: table.length }, (_, i) => tableRow(table, i));

function sheetError(fn: () => unknown): SheetError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SheetError) return error;
    throw error;
  }
  throw new Error('expected a SheetError');
}

describe('A1 notation', () => {
  it('names columns and cells from zero-based numbers', () => {
    expect([0, 1, 25, 26, 27, 51, 52, 701, 702, 16383].map(columnLetters)).toEqual([
      'A',
      'B',
      'Z',
      'AA',
      'AB',
      'AZ',
      'BA',
      'ZZ',
      'AAA',
      'XFD',
    ]);
    expect(toA1(0, 0)).toBe('A1');
    expect(toA1(6, 2)).toBe('C7');
    expect(() => toA1(-1, 0)).toThrow(RangeError);
  });

  it('quotes sheet names that need it', () => {
    expect(sheetCell('Sheet1', 'C7')).toBe('Sheet1!C7');
    expect(sheetCell('Q1 orders', 'C7')).toBe("'Q1 orders'!C7");
    expect(sheetCell("O'Brien", 'A1')).toBe("'O''Brien'!A1");
    expect(sheetCell('AB12', 'A1')).toBe("'AB12'!A1");
  });
});

describe('mapSheet', () => {
  const orders = entity([
    ['id', 'NUMBER'],
    ['customer', 'STRING'],
    ['paid', 'BOOLEAN'],
  ]);

  it('finds entity columns by header in any order, ignores other headers and trims header text', () => {
    const cells: CellRows = [
      ['note', ' paid ', 'customer', 'id'],
      ['x', true, 'Ann', 1],
      ['y', 'FALSE', 'Bob', '2'],
    ];
    expect(rows(mapSheet(orders, cells))).toEqual([
      [1, 'Ann', true],
      [2, 'Bob', false],
    ]);
    expect(headerIndexes(orders, cells[0]!)).toEqual([3, 2, 1]);
  });

  it('ends the table at the first row whose entity columns are all empty', () => {
    const cells: CellRows = [
      ['id', 'customer', 'paid', 'note'],
      [1, 'Ann', true],
      [2, null, null, 'note only'],
      [null, '  ', '', 'ignored'],
      [4, 'Dan', false],
    ];
    expect(rows(mapSheet(orders, cells))).toEqual([
      [1, 'Ann', true],
      [2, null, null],
    ]);
  });

  it('reads short rows and missing trailing rows as empty cells', () => {
    expect(rows(mapSheet(orders, [['id', 'customer', 'paid'], [1]]))).toEqual([[1, null, null]]);
    expect(mapSheet(orders, [['id', 'customer', 'paid']]).length).toBe(0);
  });

  it('names the header range and every missing column', () => {
    const shifted = entity(
      orders.columns.map((c) => [c.name, c.type]),
      { row: 1, col: 1 },
    );
    const error = sheetError(() => mapSheet(shifted, [['id', 'note', 'total']]));
    expect(error.code).toBe('missing_column');
    expect(error.location).toEqual({ spreadsheet_id: 'doc-1', sheet_name: 'Orders', range: 'B2:D2' });
    expect(error.message).toContain('Orders!B2:D2');
    expect(error.message).toContain('"customer", "paid"');
    expect(sheetError(() => mapSheet(orders, [])).location.range).toBe('A1');
  });

  it('refuses a header that names an entity column twice', () => {
    const error = sheetError(() => mapSheet(orders, [['id', 'customer', 'paid', 'id']]));
    expect(error.code).toBe('duplicate_column');
    expect(error.location.cell).toBe('D1');
    expect(error.message).toContain('Orders!A1 and Orders!D1');
  });

  it('names a cell that cannot be coerced in A1 notation from the origin', () => {
    const shifted = entity(
      orders.columns.map((c) => [c.name, c.type]),
      { row: 1, col: 1 },
    );
    // Origin B2: header on row 2, data from row 3; "id" is the second column from the origin (C).
    const error = sheetError(() =>
      mapSheet(shifted, [
        ['customer', 'id', 'paid'],
        ['Ann', 1, true],
        ['Bob', 'two', true],
      ]),
    );
    expect(error.code).toBe('invalid_cell');
    expect(error.location).toEqual({ spreadsheet_id: 'doc-1', sheet_name: 'Orders', cell: 'C4' });
    expect(error.message).toContain('Orders!C4');
    expect(error.message).toContain('"two"');
    expect(error.message).toContain('NUMBER');
    expect(error.message).toContain('"id"');
  });

  it('reports the top-most bad cell when several are bad', () => {
    const error = sheetError(() =>
      mapSheet(orders, [
        ['id', 'customer', 'paid'],
        [1, 'a', true],
        [2, 'b', 'maybe'],
        ['x', 'c', true],
      ]),
    );
    expect(error.location.cell).toBe('C3');
  });

  it('keeps text exactly as written, but reads blank text as empty', () => {
    const text = entity([
      ['s', 'STRING'],
      ['n', 'NUMBER'],
    ]);
    const cells: CellRows = [
      ['s', 'n'],
      [' padded ', 1],
      ['\u00a0x', 2],
      ['\u00a0', 3],
      ['end', 4],
    ];
    expect(rows(mapSheet(text, cells))).toEqual([
      [' padded ', 1],
      ['\u00a0x', 2],
      [null, 3],
      ['end', 4],
    ]);
  });
});

describe('coerceCell', () => {
  const ok = (type: ColumnType, value: unknown): unknown => {
    const result = coerceCell(type, value);
    if (!result.ok) throw new Error(`refused ${String(value)}`);
    return result.value;
  };
  const refused = (type: ColumnType, value: unknown): boolean => !coerceCell(type, value).ok;

  it('reads NUMBER from numbers and plain decimal text only', () => {
    expect([12, ' 12 ', '-3.5', '1e3', '+.5', '7.'].map((v) => ok('NUMBER', v))).toEqual([
      12, 12, -3.5, 1000, 0.5, 7,
    ]);
    for (const bad of [
      '1,234.5',
      '0x10',
      'Infinity',
      'NaN',
      '1e999',
      '12abc',
      '--1',
      Infinity,
      NaN,
      true,
      {},
    ])
      expect(refused('NUMBER', bad)).toBe(true);
    expect(ok('NUMBER', '')).toBeNull();
    expect(ok('NUMBER', '   ')).toBeNull();
  });

  it('reads STRING from text, numbers and booleans', () => {
    expect([['a'], [1.5], [true], [false]].map(([v]) => ok('STRING', v))).toEqual([
      'a',
      '1.5',
      'TRUE',
      'FALSE',
    ]);
    expect(refused('STRING', {})).toBe(true);
  });

  it('reads BOOLEAN from booleans and true/false text in any case', () => {
    expect([true, false, 'TRUE', ' False '].map((v) => ok('BOOLEAN', v))).toEqual([true, false, true, false]);
    for (const bad of ['yes', 1, 0, 'T']) expect(refused('BOOLEAN', bad)).toBe(true);
  });

  it('reads DATE from YYYY-MM-DD and whole serial day numbers', () => {
    expect(ok('DATE', '2024-02-29')).toBe('2024-02-29');
    expect(ok('DATE', 45292)).toBe('2024-01-01');
    expect(ok('DATE', 1)).toBe('1899-12-31');
    for (const bad of ['2023-02-29', '2024-13-01', '2024-1-1', '01/02/2024', 45292.5, -1])
      expect(refused('DATE', bad)).toBe(true);
  });

  it('reads DATETIME from ISO 8601 text and serial numbers as the instant in UTC', () => {
    expect(ok('DATETIME', '2024-05-01T13:45:00Z')).toBe('2024-05-01T13:45:00.000Z');
    expect(ok('DATETIME', '2024-05-01 13:45')).toBe('2024-05-01T13:45:00.000Z');
    expect(ok('DATETIME', '2024-05-01T13:45:00.123+02:00')).toBe('2024-05-01T11:45:00.123Z');
    expect(ok('DATETIME', '2024-01-01T00:30:00+01:00')).toBe('2023-12-31T23:30:00.000Z');
    expect(ok('DATETIME', '2024-01-01T10:00:00.12345-0130')).toBe('2024-01-01T11:30:00.123Z');
    expect(ok('DATETIME', '0099-03-01')).toBe('0099-03-01T00:00:00.000Z');
    expect(ok('DATETIME', 45292.5)).toBe('2024-01-01T12:00:00.000Z');
    for (const bad of [
      '2024-05-01T25:00',
      '2024-05-01T13:60',
      'yesterday',
      '2024-05-01T13:45+25:00',
      '0000-01-01T00:30:00+01:00',
      '9999-12-31T23:30:00-01:00',
    ])
      expect(refused('DATETIME', bad)).toBe(true);
  });

  it('gives back cell values to write and refuses values of the wrong type', () => {
    expect(cellFromValue('NUMBER', 3)).toBe(3);
    expect(cellFromValue('DATE', '2024-01-01')).toBe('2024-01-01');
    expect(cellFromValue('STRING', null)).toBeNull();
    expect(() => cellFromValue('NUMBER', 'abc')).toThrow(TypeError);
  });
});

describe('appendRows', () => {
  const typed = entity([
    ['n', 'NUMBER'],
    ['s', 'STRING'],
    ['b', 'BOOLEAN'],
    ['d', 'DATE'],
  ]);

  it('adds rows at the end and stores columns in typed arrays', () => {
    let table = mapSheet(typed, [
      ['n', 's', 'b', 'd'],
      [1, 'a', true, '2024-01-01'],
    ]);
    expect(table.data[0]).toBeInstanceOf(Float64Array);
    expect(table.data[2]).toBeInstanceOf(Uint8Array);
    for (let i = 0; i < 100; i++) table = appendRows(table, [[i, null, i % 2 === 0, null]]);
    expect(table.length).toBe(101);
    expect(tableRow(table, 0)).toEqual([1, 'a', true, '2024-01-01']);
    expect(tableRow(table, 100)).toEqual([99, null, false, null]);
    expect((table.data[0] as Float64Array).length).toBeLessThanOrEqual(256); // grown by doubling, not per row
  });

  it('leaves the earlier table as it was, even when appended to twice', () => {
    const base = mapSheet(typed, [
      ['n', 's', 'b', 'd'],
      [1, 'a', true, null],
    ]);
    const first = appendRows(base, [[2, 'b', false, null]]);
    const second = appendRows(base, [[3, 'c', null, null]]);
    expect(base.length).toBe(1);
    expect(rows(first)).toEqual([
      [1, 'a', true, null],
      [2, 'b', false, null],
    ]);
    expect(rows(second)).toEqual([
      [1, 'a', true, null],
      [3, 'c', null, null],
    ]);
    expect(appendRows(base, [])).toBe(base);
    expect(() => tableRow(base, 1)).toThrow(RangeError);
  });
});
