import { describe, expect, it } from 'vitest';
import { MemoryFileStore, MemorySpreadsheets, MemoryStorage } from '../../src/index.js';

const ref = { spreadsheet_id: 'book', sheet_name: 'people' };

function people(): MemorySpreadsheets {
  return new MemorySpreadsheets({
    book: {
      people: [
        ['id', 'name'],
        [1, 'Ada'],
        [2, 'Grace'],
      ],
    },
  });
}

describe('MemorySpreadsheets keeps frozen rows it is given, copies the others', () => {
  it('a row given unfrozen is copied: changing it afterwards changes nothing held', () => {
    const sheets = people();
    const given = [3, 'Barbara'];
    sheets.append({ ...ref, row: 3, col: 0, values: [given] });
    const replaced = [1, 'Ada L.'];
    sheets.write({ ...ref, row: 1, col: 0, values: [replaced] });
    given[1] = 'changed';
    replaced[1] = 'changed';
    expect(sheets.cells('book', 'people')).toEqual([
      ['id', 'name'],
      [1, 'Ada L.'],
      [2, 'Grace'],
      [3, 'Barbara'],
    ]);
  });

  it('a frozen row is held as given; a frozen row narrower than the one it replaces keeps the rest', () => {
    const sheets = people();
    const appended = Object.freeze([3, 'Barbara']);
    sheets.append({ ...ref, row: 3, col: 0, values: [appended as unknown as (string | number)[]] });
    const [rows] = sheets.read([{ ...ref, row: 0, col: 0 }]);
    expect(rows![3]).toBe(appended);
    sheets.write({ ...ref, row: 2, col: 0, values: [Object.freeze([7]) as unknown as number[]] });
    sheets.write({ ...ref, row: 1, col: 1, values: [Object.freeze(['Ada K.']) as unknown as string[]] });
    expect(sheets.cells('book', 'people')).toEqual([
      ['id', 'name'],
      [1, 'Ada K.'],
      [7, 'Grace'],
      [3, 'Barbara'],
    ]);
  });
});

describe('MemorySpreadsheets hands out rows without copying them, and they never change', () => {
  it('a row read cannot be changed by the reader', () => {
    const sheets = people();
    const [rows] = sheets.read([{ ...ref, row: 0, col: 0 }]);
    expect(() => {
      rows![1]![1] = 'changed';
    }).toThrow(TypeError);
    expect(() => rows![1]!.push('more')).toThrow(TypeError);
    expect(sheets.cells('book', 'people')).toEqual([
      ['id', 'name'],
      [1, 'Ada'],
      [2, 'Grace'],
    ]);
  });

  it('rows read before a write, update or append keep what they held', () => {
    const sheets = people();
    const [before] = sheets.read([{ ...ref, row: 0, col: 0 }]);
    sheets.write({ ...ref, row: 1, col: 1, values: [['Ada Lovelace']] });
    sheets.update({
      ...ref,
      expect: [{ row: 2, col: 1, values: ['Grace'] }],
      cells: [{ row: 2, col: 0, values: [20, 'Grace Hopper'] }],
      deleteRows: [],
    });
    sheets.append({ ...ref, row: 3, col: 0, values: [[3, 'Edsger']] });
    expect(before).toEqual([
      ['id', 'name'],
      [1, 'Ada'],
      [2, 'Grace'],
    ]);
    const [after] = sheets.read([{ ...ref, row: 0, col: 0 }]);
    expect(after).toEqual([
      ['id', 'name'],
      [1, 'Ada Lovelace'],
      [20, 'Grace Hopper'],
      [3, 'Edsger'],
    ]);
  });

  it('an update refused for a changed cell changes nothing, and later writes still work', () => {
    const sheets = people();
    const update = {
      ...ref,
      expect: [{ row: 1, col: 1, values: ['Someone else'] }],
      cells: [{ row: 1, col: 1, values: ['Ada Lovelace'] }],
      deleteRows: [],
    };
    expect(() => sheets.update(update)).toThrow(expect.objectContaining({ code: 'rows_moved' }));
    expect(sheets.cells('book', 'people')![1]).toEqual([1, 'Ada']);
    sheets.update({ ...update, expect: [{ row: 1, col: 1, values: ['Ada'] }] });
    expect(sheets.cells('book', 'people')![1]).toEqual([1, 'Ada Lovelace']);
  });

  it('the seed and cells() are copies: changing them changes nothing held', () => {
    const seed = [['id'], [1]];
    const sheets = new MemorySpreadsheets({ book: { people: seed } });
    seed[1]![0] = 99;
    const cells = sheets.cells('book', 'people')!;
    cells[1]![0] = 98;
    expect(sheets.read([{ ...ref, row: 1, col: 0 }])[0]).toEqual([[1]]);
  });
});

describe('MemoryStorage keeps JSON text', () => {
  it('stores a value as JSON holds it and hands out copies', () => {
    const storage = new MemoryStorage();
    const value = { at: new Date(0), missing: undefined, list: [1, undefined, Number.NaN] };
    storage.put('runs', 'r', value);
    const read = storage.get<Record<string, unknown>>('runs', 'r')!;
    expect(read).toEqual({ at: '1970-01-01T00:00:00.000Z', list: [1, null, null] });
    expect(Object.keys(read)).toEqual(['at', 'list']);
    (read.list as unknown[]).push(4);
    expect(storage.get('runs', 'r')).toEqual({ at: '1970-01-01T00:00:00.000Z', list: [1, null, null] });
  });
});

describe('seeds that are not seeds', () => {
  it('are TypeErrors naming where, not crashes on first use', () => {
    expect(() => new MemorySpreadsheets(null as never)).toThrow(TypeError);
    expect(() => new MemorySpreadsheets({ book: null } as never)).toThrow(
      'MemorySpreadsheets seed["book"] must be { [sheet_name]: rows }, got null',
    );
    expect(() => new MemorySpreadsheets({ book: { s: 'rows' } } as never)).toThrow(
      'MemorySpreadsheets seed["book"]["s"] must be an array of rows of cells',
    );
    expect(() => new MemoryFileStore(null as never)).toThrow(TypeError);
  });
});
