import { describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();

describe('GoogleSheets.append of many rows', () => {
  it('appends 150,000 rows in one batchUpdate (no stack overflow from spreading rows as arguments)', async () => {
    api.fake.addSpreadsheet('book', { S: [['id']] });
    const values = Array.from({ length: 150_000 }, (_, i) => [i]);
    await new GoogleSheets({ auth: api.auth, rootUrl: api.fake.url }).append({
      spreadsheet_id: 'book',
      sheet_name: 'S',
      row: 1,
      col: 0,
      values,
    });
    const cells = api.fake.sheet('book', 'S')!.cells;
    expect(cells).toHaveLength(150_001);
    expect(cells[1]).toEqual([0]);
    expect(cells[150_000]).toEqual([149_999]);
    expect(api.fake.requests.filter((r) => r.path.endsWith(':batchUpdate'))).toHaveLength(1);
  }, 30_000);
});
