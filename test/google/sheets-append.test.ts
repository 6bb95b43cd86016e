import { beforeEach, describe, expect, it } from 'vitest';
import { GoogleSheets, type GoogleSheetsOptions } from '../../src/adapters/google/index.js';
import { MemorySpreadsheets } from '../../src/adapters/memory/index.js';
import type { AppendRequest, CellValue } from '../../src/adapters/types.js';
import { SheetError, UpstreamError } from '../../src/errors/index.js';
import { type RecordedRequest } from '../fakes/google-sheets.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();
beforeEach(() => {
  api.fake.reset();
});

function adapter(options: Partial<GoogleSheetsOptions> = {}): GoogleSheets {
  return new GoogleSheets({
    auth: api.auth,
    rootUrl: api.fake.url,
    retry: { attempts: 4, baseMs: 1, capMs: 10 },
    ...options,
  });
}

const isBatchUpdate = (r: RecordedRequest): boolean => r.method === 'POST' && r.path.endsWith(':batchUpdate');
const isPropertiesGet = (r: RecordedRequest): boolean =>
  r.method === 'GET' && r.path === '/v4/spreadsheets/book';

/** A table with a blank row and a footer below it: values.append would land after the footer. */
const TABLE: CellValue[][] = [['id', 'name'], [1, 'Ada'], [2, 'Linus'], [], [null, null, 'footer note']];

function cells(): CellValue[][] {
  return api.fake.sheet('book', 'People')!.cells;
}

function expected(seed: CellValue[][], ...requests: AppendRequest[]): CellValue[][] {
  const memory = new MemorySpreadsheets({ book: { People: seed } });
  for (const request of requests) memory.append(request);
  const rows = memory.cells('book', 'People')!.map((row) => {
    const copy = row.slice();
    while (copy.length && copy[copy.length - 1] === null) copy.pop();
    return copy;
  });
  while (rows.length && rows[rows.length - 1]!.length === 0) rows.pop();
  return rows;
}

const at = (row: number, values: CellValue[][], col = 0): AppendRequest => ({
  spreadsheet_id: 'book',
  sheet_name: 'People',
  row,
  col,
  values,
});

describe('GoogleSheets.append', () => {
  it('inserts rows exactly at the requested row, moving the rows below down, like the memory adapter', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    const request = at(3, [
      [3, '=HYPERLINK("x")'],
      [4, null],
    ]);
    await adapter().append(request);
    expect(cells()).toEqual(expected(TABLE, request));
    expect(cells()[3]).toEqual([3, '=HYPERLINK("x")']);
    expect(cells()[6]).toEqual([null, null, 'footer note']);
  });

  it('sends one batchUpdate of insertDimension + updateCells with typed values (never formulas)', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    await adapter().append(at(3, [[3, '=1+1', true, null, 2.5]]));
    const updates = api.fake.requests.filter(isBatchUpdate);
    expect(updates).toHaveLength(1);
    const { requests } = updates[0]!.json;
    const sheetId = api.fake.sheet('book', 'People')!.sheetId;
    expect(requests[0]).toEqual({
      insertDimension: {
        range: { sheetId, dimension: 'ROWS', startIndex: 3, endIndex: 4 },
        inheritFromBefore: true,
      },
    });
    expect(requests[1].updateCells.start).toEqual({ sheetId, rowIndex: 3, columnIndex: 0 });
    expect(requests[1].updateCells.fields).toBe('userEnteredValue');
    expect(requests[1].updateCells.rows[0].values).toEqual([
      { userEnteredValue: { numberValue: 3 } },
      { userEnteredValue: { stringValue: '=1+1' } },
      { userEnteredValue: { boolValue: true } },
      {},
      { userEnteredValue: { numberValue: 2.5 } },
    ]);
    expect(JSON.stringify(requests)).not.toContain('formulaValue');
    expect(api.fake.requests.some((r) => r.path.endsWith(':append'))).toBe(false);
  });

  it('grows the grid when the rows go past its last row or column', async () => {
    const seed: CellValue[][] = [['id'], [1]];
    api.fake.addSpreadsheet('book', { People: seed }, { rowCount: 3, columnCount: 2 });
    const first = at(5, [[9, 'x', 'y']], 1);
    const second = at(0, [['top']]);
    await adapter().append(first);
    await adapter().append(second);
    expect(cells()).toEqual(expected(seed, first, second));
    expect(api.fake.sheet('book', 'People')!.columnCount).toBe(4);
  });

  it('is a no-op for no rows and reports a missing sheet as sheet_not_found', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    await adapter().append(at(1, []));
    expect(api.fake.requests).toHaveLength(0);
    const error = await adapter()
      .append({ spreadsheet_id: 'book', sheet_name: 'Nope', row: 1, col: 0, values: [[1]] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SheetError);
    expect((error as SheetError).code).toBe('sheet_not_found');
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(0);
  });

  it('retries a 429 without reading back (it was refused before processing)', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    api.fake.faults.push({
      match: isBatchUpdate,
      status: 429,
      reason: 'RESOURCE_EXHAUSTED',
      retryAfter: '0',
    });
    await adapter().append(at(3, [[3, 'Grace']]));
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(2);
    expect(api.fake.requests.filter(isPropertiesGet)).toHaveLength(1);
    expect(cells()).toEqual(expected(TABLE, at(3, [[3, 'Grace']])));
  });

  it('after a 500 whose change was applied, verifies by reading back and does not append twice', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    api.fake.faults.push({ match: isBatchUpdate, status: 500, apply: true });
    await adapter().append(at(3, [[3, 'Grace']]));
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(1);
    expect(api.fake.requests.filter((r) => r.path.includes('/values/'))[0]!.path).toBe(
      "/v4/spreadsheets/book/values/'People'!A4:B4",
    );
    expect(cells()).toEqual(expected(TABLE, at(3, [[3, 'Grace']])));
  });

  it('after a timeout whose change was applied, verifies and succeeds once', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    api.fake.faults.push({ match: isBatchUpdate, status: 200, apply: true, delayMs: 400 });
    await adapter({ timeoutMs: 100 }).append(at(3, [[3, 'Grace']]));
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(1);
    expect(cells()).toEqual(expected(TABLE, at(3, [[3, 'Grace']])));
  });

  it('after a 503 that was not applied, finds the rows absent and sends them again', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    api.fake.faults.push({ match: isBatchUpdate, status: 503, reason: 'UNAVAILABLE' });
    await adapter().append(at(3, [[3, 'Grace']]));
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(2);
    expect(cells()).toEqual(expected(TABLE, at(3, [[3, 'Grace']])));
  });

  it('fails saying the outcome is unknown when reading back cannot tell, and does not resend', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    // Every read of the grid after the first one (the one before the append) fails.
    const laterGets = (r: RecordedRequest): boolean =>
      isPropertiesGet(r) && api.fake.requests.filter(isPropertiesGet).length >= 2;
    api.fake.faults.push({ match: isBatchUpdate, status: 500, apply: true });
    for (let i = 0; i < 4; i++) api.fake.faults.push({ match: laterGets, status: 500 });
    const error = await adapter()
      .append(at(3, [[3, 'Grace']]))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toMatch(/outcome of the append .* is unknown/);
    expect((error as UpstreamError).retryable).toBe(false);
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(1);
  });

  it('fails saying the outcome is unknown when someone else changed the sheet meanwhile', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    api.fake.faults.push({
      match: (r) => {
        if (!isBatchUpdate(r)) return false;
        // Another writer inserts two rows at the same moment.
        void fetch(`${api.fake.url}v4/spreadsheets/book:batchUpdate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${api.fake.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            requests: [
              {
                insertDimension: {
                  range: {
                    sheetId: api.fake.sheet('book', 'People')!.sheetId,
                    dimension: 'ROWS',
                    startIndex: 1,
                    endIndex: 3,
                  },
                },
              },
            ],
          }),
        });
        return true;
      },
      status: 502,
      delayMs: 100,
    });
    const error = await adapter()
      .append(at(3, [[3, 'Grace']]))
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/is unknown/);
    const ours = api.fake.requests.filter(
      (r) => isBatchUpdate(r) && JSON.stringify(r.json).includes('updateCells'),
    );
    expect(ours).toHaveLength(1);
  });

  it('maps other 4xx answers to a SheetError naming spreadsheet, sheet and range, without retrying', async () => {
    api.fake.addSpreadsheet('book', { People: TABLE });
    api.fake.faults.push({
      match: isBatchUpdate,
      status: 400,
      reason: 'INVALID_ARGUMENT',
      message: 'Invalid requests[0]: something',
    });
    const error = await adapter()
      .append(at(3, [[3, 'Grace']]))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SheetError);
    expect((error as SheetError).location).toMatchObject({
      spreadsheet_id: 'book',
      sheet_name: 'People',
      range: "'People'!A4:A4",
    });
    expect((error as Error).message).toContain('something');
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(1);
  });
});
