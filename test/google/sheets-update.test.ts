import { beforeEach, describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import type { CellValue, UpdateRequest } from '../../src/adapters/types.js';
import { SheetError, UpstreamError } from '../../src/errors/index.js';
import { type RecordedRequest } from '../fakes/google-sheets.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();
beforeEach(() => {
  api.fake.reset();
  api.fake.addSpreadsheet('book', { People: TABLE });
});

const TABLE: CellValue[][] = [
  ['id', 'name', 'note'],
  [1, 'Ada', '=kept'],
  [2, 'Grace', null],
  [3, 'Linus', 'x'],
  [4, 'Barbara', null],
  [],
  ['total', null, 'footer'],
];

function adapter(): GoogleSheets {
  return new GoogleSheets({
    auth: api.auth,
    rootUrl: api.fake.url,
    retry: { attempts: 3, baseMs: 1, capMs: 5 },
  });
}

const isBatchUpdate = (r: RecordedRequest): boolean => r.method === 'POST' && r.path.endsWith(':batchUpdate');

const request = (change: Partial<UpdateRequest>): UpdateRequest => ({
  spreadsheet_id: 'book',
  sheet_name: 'People',
  cells: [],
  deleteRows: [],
  expect: [],
  ...change,
});

describe('GoogleSheets.update', () => {
  it('sends one batchUpdate: updateCells with typed values, then deleteDimension from the bottom up', async () => {
    await adapter().update(
      request({
        cells: [{ row: 1, col: 1, values: ['Ada L.', '=1+1'] }],
        deleteRows: [2, 4, 3],
        expect: [
          { row: 1, col: 0, values: [1] },
          { row: 4, col: 0, values: [4] },
        ],
      }),
    );
    const updates = api.fake.requests.filter(isBatchUpdate);
    expect(updates).toHaveLength(1);
    const sheetId = api.fake.sheet('book', 'People')!.sheetId;
    expect(updates[0]!.json.requests).toEqual([
      {
        updateCells: {
          start: { sheetId, rowIndex: 1, columnIndex: 1 },
          rows: [
            {
              values: [
                { userEnteredValue: { stringValue: 'Ada L.' } },
                { userEnteredValue: { stringValue: '=1+1' } },
              ],
            },
          ],
          fields: 'userEnteredValue',
        },
      },
      { deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex: 2, endIndex: 5 } } },
    ]);
    expect(api.fake.sheet('book', 'People')!.cells).toEqual([
      ['id', 'name', 'note'],
      [1, 'Ada L.', '=1+1'],
      [],
      ['total', null, 'footer'],
    ]);
  });

  it('reads the expected cells again right before sending, and sends nothing when they moved', async () => {
    api.fake.arrivals.push((r) => {
      // Another writer inserts a row at the top just as the adapter looks at the keys.
      if (r.method === 'GET' && /!A3:A5$/.test(r.path))
        api.fake.edit('book', 'People', (sheet) => {
          sheet.cells.splice(1, 0, [0, 'Zero']);
          sheet.rowCount++;
        });
    });
    const error = await adapter()
      .update(
        request({
          cells: [{ row: 4, col: 1, values: ['B.'] }],
          expect: [
            { row: 2, col: 0, values: [2] },
            { row: 4, col: 0, values: [4] },
          ],
          deleteRows: [2],
        }),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SheetError);
    expect((error as SheetError).code).toBe('rows_moved');
    expect((error as SheetError).message).toContain('cell A3 holds 1 where 2 was found before');
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(0);
  });

  it('checks a delete whose answer was lost by reading the grid back, and does not delete twice', async () => {
    api.fake.faults.push({ match: isBatchUpdate, status: 503, reason: 'UNAVAILABLE', apply: true });
    await adapter().update(request({ deleteRows: [1], expect: [{ row: 1, col: 0, values: [1] }] }));
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(1);
    expect(api.fake.sheet('book', 'People')!.cells.slice(0, 2)).toEqual([
      ['id', 'name', 'note'],
      [2, 'Grace'],
    ]);
  });

  it('sends a cell update again after a lost answer: writing the same cells twice is harmless', async () => {
    api.fake.faults.push({ match: isBatchUpdate, status: 500, apply: true });
    await adapter().update(
      request({ cells: [{ row: 3, col: 2, values: ['y'] }], expect: [{ row: 3, col: 0, values: [3] }] }),
    );
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(2);
    expect(api.fake.sheet('book', 'People')!.cells[3]).toEqual([3, 'Linus', 'y']);
  });

  it('says the outcome is unknown when the grid changed by something else than the delete', async () => {
    api.fake.faults.push({ match: isBatchUpdate, status: 503, reason: 'UNAVAILABLE' });
    api.fake.arrivals.push((r) => {
      if (isBatchUpdate(r)) api.fake.edit('book', 'People', (sheet) => (sheet.rowCount += 7));
    });
    const error = await adapter()
      .update(request({ deleteRows: [1], expect: [{ row: 1, col: 0, values: [1] }] }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toMatch(/outcome of the update of sheet "People" .* is unknown/);
    expect(api.fake.sheet('book', 'People')!.cells[1]).toEqual([1, 'Ada', '=kept']);
  });
});
