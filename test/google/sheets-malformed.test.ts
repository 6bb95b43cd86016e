import { beforeEach, describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import type { RangeRequest } from '../../src/adapters/types.js';
import { UpstreamError } from '../../src/errors/index.js';
import { type RecordedRequest } from '../fakes/google-sheets.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();
beforeEach(() => {
  api.fake.reset();
  api.fake.addSpreadsheet('book', { S: [['id'], [1]], T: [['t']] });
});

function adapter(): GoogleSheets {
  return new GoogleSheets({
    auth: api.auth,
    rootUrl: api.fake.url,
    retry: { attempts: 3, baseMs: 1, capMs: 10 },
    cache: { ttlMs: 60_000 },
  });
}

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

const S: RangeRequest = { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 };
const T: RangeRequest = { spreadsheet_id: 'book', sheet_name: 'T', row: 0, col: 0 };
const isBatchUpdate = (r: RecordedRequest): boolean => r.method === 'POST' && r.path.endsWith(':batchUpdate');
const isPropertiesGet = (r: RecordedRequest): boolean =>
  r.method === 'GET' && r.path === '/v4/spreadsheets/book';

describe('GoogleSheets malformed answers', () => {
  const single: [string, string, string?][] = [
    ['HTML', '<html>proxy login</html>', 'text/html'],
    ['an empty body', ''],
    ['cut-off JSON', '{"range":"S!A1:ZZZ","values":[["a"],["b"'],
    ['values that are not a list', '{"range":"S!A1:ZZZ","values":"oops"}'],
    ['a row that is not a list', '{"range":"S!A1:ZZZ","values":[["a"], 5]}'],
    ['an object cell', '{"range":"S!A1:ZZZ","values":[[{"x":1}]]}'],
  ];
  it.each(single)(
    'fails a read answered 200 with %s, not retried and not cached',
    async (_, body, contentType) => {
      const sheets = adapter();
      api.fake.faults.push(contentType ? { body, contentType } : { body });
      const error = await rejection(sheets.read([S]));
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/spreadsheet "book", sheet "S".*malformed answer/);
      expect(api.fake.requests).toHaveLength(1);
      // Nothing was cached: the next read asks Google again and gets the sheet.
      expect(await sheets.read([S])).toEqual([[['id'], [1]]]);
      expect(api.fake.requests).toHaveLength(2);
    },
  );

  it.each([
    ['without valueRanges', '{"spreadsheetId":"book"}'],
    ['with fewer valueRanges than ranges', '{"spreadsheetId":"book","valueRanges":[{"values":[["a"]]}]}'],
  ])('fails a batchGet answered %s', async (_, body) => {
    const sheets = adapter();
    api.fake.faults.push({ body });
    const error = await rejection(sheets.read([S, T]));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.message).toMatch(/malformed answer: .*for 2 ranges/);
    expect(await sheets.read([S, T])).toEqual([[['id'], [1]], [['t']]]);
  });

  it('reads a range answered without values as empty', async () => {
    api.fake.faults.push({ body: '{"range":"S!A1:ZZZ","majorDimension":"ROWS"}' });
    expect(await adapter().read([S])).toEqual([[]]);
  });

  it.each([
    ['no gridProperties', { sheets: [{ properties: { sheetId: 7, title: 'S' } }] }],
    [
      'no sheetId',
      { sheets: [{ properties: { title: 'S', gridProperties: { rowCount: 9, columnCount: 2 } } }] },
    ],
  ])('fails an append before any write when spreadsheets.get answers %s', async (_, answer) => {
    api.fake.faults.push({ match: isPropertiesGet, body: JSON.stringify(answer) });
    const error = await rejection(adapter().append({ ...S, row: 1, values: [[2]] }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.message).toMatch(/malformed answer: sheet "S" lacks sheetId or gridProperties/);
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(0);
    expect(api.fake.sheet('book', 'S')!.cells).toEqual([['id'], [1]]);
  });

  it('reports a spreadsheets.get answered 200 with HTML as malformed, not as sheet_not_found', async () => {
    api.fake.faults.push({
      match: isPropertiesGet,
      body: '<html>sign in</html>',
      contentType: 'text/html',
    });
    const error = await rejection(adapter().append({ ...S, row: 1, values: [[2]] }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.code).not.toBe('sheet_not_found');
    expect(error.message).toContain('no sheets list');
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(0);
  });
});
