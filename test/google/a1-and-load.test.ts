import { describe, expect, it } from 'vitest';
import { boxA1, columnLetters, quoteSheet, rangeA1 } from '../../src/adapters/google/a1.js';
import { importOptional } from '../../src/adapters/import-optional.js';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { StepwireError } from '../../src/errors/index.js';

const sheet = { spreadsheet_id: 'b', sheet_name: 'My Sheet' };

describe('A1 notation', () => {
  it('letters columns past Z', () => {
    expect([0, 25, 26, 51, 52, 701, 702, 18_277].map(columnLetters)).toEqual([
      'A',
      'Z',
      'AA',
      'AZ',
      'BA',
      'ZZ',
      'AAA',
      'ZZZ',
    ]);
  });

  it('quotes sheet names and doubles inner quotes', () => {
    expect(quoteSheet("Bob's 'data'")).toBe("'Bob''s ''data'''");
  });

  it('writes closed and open-ended ranges', () => {
    expect(rangeA1({ ...sheet, row: 2, col: 2, rows: 5, cols: 6 })).toBe("'My Sheet'!C3:H7");
    expect(rangeA1({ ...sheet, row: 2, col: 2, cols: 6 })).toBe("'My Sheet'!C3:H");
    expect(rangeA1({ ...sheet, row: 2, col: 2, rows: 5 })).toBe("'My Sheet'!C3:7");
    expect(rangeA1({ ...sheet, row: 2, col: 2 })).toBe("'My Sheet'!C3:ZZZ");
    expect(boxA1(sheet, 0, 0, 1, 1)).toBe("'My Sheet'!A1:A1");
  });
});

describe('optional googleapis packages', () => {
  it('names the missing package and the install command', async () => {
    const missing = Object.assign(new Error("Cannot find package '@googleapis/sheets' imported from x.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const error = await importOptional('@googleapis/sheets', 'GoogleSheets', () =>
      Promise.reject(missing),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepwireError);
    expect((error as StepwireError).code).toBe('missing_dependency');
    expect((error as Error).message).toContain('npm install @googleapis/sheets');
  });

  it('passes other import failures through', async () => {
    const other = new SyntaxError('broken');
    await expect(
      importOptional('@googleapis/sheets', 'GoogleSheets', () => Promise.reject(other)),
    ).rejects.toBe(other);
  });

  it('does not import the client package until the first call', () => {
    expect(() => new GoogleSheets({ auth: 'key' })).not.toThrow();
    expect(() => new GoogleSheets({ cache: { ttlMs: -1 } })).toThrow(/cache.ttlMs/);
  });
});
