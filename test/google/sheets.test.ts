import { sheets as buildSheetsClient } from '@googleapis/sheets';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemorySpreadsheets } from '../../src/adapters/memory/index.js';
import type { CellValue } from '../../src/adapters/types.js';
import {
  GoogleSheets,
  type GoogleSheetsOptions,
  type SheetsClient,
} from '../../src/adapters/google/index.js';
import { CancelledError, SheetError, UpstreamError } from '../../src/errors/index.js';
import { type RecordedRequest } from '../fakes/google-sheets.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();
beforeEach(() => {
  api.fake.reset();
});

const fastRetry = { attempts: 4, baseMs: 1, capMs: 20 };

function adapter(options: Partial<GoogleSheetsOptions> = {}): GoogleSheets {
  return new GoogleSheets({ auth: api.auth, rootUrl: api.fake.url, retry: fastRetry, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

const isValuesRead = (r: RecordedRequest): boolean => r.method === 'GET' && r.path.includes('/values');

const PEOPLE: CellValue[][] = [
  ['id', 'name', 'score', 'active', 'joined'],
  [1, 'Ada', 9.5, true, '2024-01-02'],
  [2, null, 7, false],
  [3, 'Linus'],
];

describe('GoogleSheets.read', () => {
  it('reads an open-ended range unformatted, with the sheet name quoted, empty cells as null', async () => {
    api.fake.addSpreadsheet('book', { 'My Sheet': PEOPLE });
    const [rows] = await adapter().read([{ spreadsheet_id: 'book', sheet_name: 'My Sheet', row: 0, col: 0 }]);
    expect(rows).toEqual(PEOPLE);
    expect(api.fake.requests).toHaveLength(1);
    const request = api.fake.requests[0]!;
    expect(request.path).toBe("/v4/spreadsheets/book/values/'My Sheet'!A1:ZZZ");
    expect(request.query.valueRenderOption).toEqual(['UNFORMATTED_VALUE']);
    expect(request.query.dateTimeRenderOption).toEqual(['SERIAL_NUMBER']);
    expect(request.headers.authorization).toBe(`Bearer ${api.fake.token}`);
  });

  it('asks only for the needed rectangle and matches the memory adapter', async () => {
    const seed: CellValue[][] = [
      ['a', 'b', 'c', 'd'],
      [1, 2, 3, 4],
      [5, null, 7],
      [null, null, null, 8],
      [9],
    ];
    api.fake.addSpreadsheet('book', { S: seed });
    const memory = new MemorySpreadsheets({ book: { S: seed } });
    const ranges = [
      { spreadsheet_id: 'book', sheet_name: 'S', row: 1, col: 1, rows: 2, cols: 2 },
      { spreadsheet_id: 'book', sheet_name: 'S', row: 1, col: 2, cols: 2 },
      { spreadsheet_id: 'book', sheet_name: 'S', row: 2, col: 1, rows: 2 },
      { spreadsheet_id: 'book', sheet_name: 'S', row: 3, col: 0 },
    ];
    const google = adapter();
    for (const range of ranges) {
      // Google leaves out trailing empty rows, which the interface allows.
      expect(await google.read([range])).toEqual(memory.read([range]).map(trimRows));
    }
    expect(api.fake.requests.map((r) => r.path.split('!')[1])).toEqual(['B2:C3', 'C2:D', 'B3:4', 'A4:ZZZ']);
  });

  it('batches several ranges of one spreadsheet into one values.batchGet, in request order', async () => {
    api.fake.addSpreadsheet('book', { S: PEOPLE, "It's": [['x', 'y']] });
    api.fake.addSpreadsheet('other', { T: [['t']] });
    const result = await adapter().read([
      { spreadsheet_id: 'book', sheet_name: "It's", row: 0, col: 0 },
      { spreadsheet_id: 'other', sheet_name: 'T', row: 0, col: 0 },
      { spreadsheet_id: 'book', sheet_name: 'S', row: 1, col: 1, rows: 1, cols: 1 },
    ]);
    expect(result).toEqual([[['x', 'y']], [['t']], [['Ada']]]);
    const batch = api.fake.requests.filter((r) => r.path.endsWith('values:batchGet'));
    expect(batch).toHaveLength(1);
    expect(batch[0]!.query.ranges).toEqual(["'It''s'!A1:ZZZ", "'S'!B2:B2"]);
    expect(api.fake.requests).toHaveLength(2);
  });

  it('returns [] for an empty range without asking Google', async () => {
    expect(await adapter().read([{ spreadsheet_id: 'x', sheet_name: 'S', row: 0, col: 0, rows: 0 }])).toEqual(
      [[]],
    );
    expect(api.fake.requests).toHaveLength(0);
  });

  it('reports a missing sheet or spreadsheet as SheetError sheet_not_found with its location', async () => {
    api.fake.addSpreadsheet('book', { S: PEOPLE });
    const sheetMissing = await rejection(
      adapter().read([{ spreadsheet_id: 'book', sheet_name: 'Nope', row: 0, col: 0 }]),
    );
    expect(sheetMissing).toBeInstanceOf(SheetError);
    expect(sheetMissing.code).toBe('sheet_not_found');
    expect(sheetMissing.location).toMatchObject({ spreadsheet_id: 'book', sheet_name: 'Nope' });
    expect(sheetMissing.message).toContain('"Nope"');

    const bookMissing = await rejection(
      adapter().read([{ spreadsheet_id: 'gone', sheet_name: 'S', row: 0, col: 0 }]),
    );
    expect(bookMissing.code).toBe('sheet_not_found');
    expect(bookMissing.message).toContain('"gone"');

    const inBatch = await rejection(
      adapter().read([
        { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 },
        { spreadsheet_id: 'book', sheet_name: 'Missing', row: 0, col: 0 },
      ]),
    );
    expect(inBatch.code).toBe('sheet_not_found');
    expect(inBatch.location.sheet_name).toBe('Missing');
    expect(api.fake.requests.length).toBe(3);
  });

  it('explains a 403 as a sharing problem', async () => {
    api.fake.addSpreadsheet('book', { S: PEOPLE });
    api.fake.deny('book');
    const error = await rejection(
      adapter().read([{ spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 }]),
    );
    expect(error).toBeInstanceOf(SheetError);
    expect(error.code).toBe('permission_denied');
    expect(error.message).toMatch(/share the spreadsheet with the service account/);
    expect(api.fake.requests).toHaveLength(1);
  });

  it('retries 429 (waiting its Retry-After) and 5xx, and the googleapis client does not retry on its own', async () => {
    api.fake.addSpreadsheet('book', { S: PEOPLE });
    api.fake.faults.push(
      { status: 429, reason: 'RESOURCE_EXHAUSTED', retryAfter: '0.15' },
      { status: 503, reason: 'UNAVAILABLE' },
    );
    const started = performance.now();
    const [rows] = await adapter({ retry: { attempts: 3, baseMs: 1, capMs: 1000 } }).read([
      { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 },
    ]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(rows).toEqual(PEOPLE);
    expect(api.fake.requests).toHaveLength(3);

    api.fake.requests.length = 0;
    api.fake.faults.push({ status: 500 });
    const error = await rejection(
      adapter({ retry: { attempts: 1 } }).read([{ spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 }]),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('"book"');
    expect(api.fake.requests).toHaveLength(1);
  });

  it('gives up after the configured attempts', async () => {
    api.fake.addSpreadsheet('book', { S: PEOPLE });
    for (let i = 0; i < 4; i++) api.fake.faults.push({ status: 502 });
    const error = await rejection(
      adapter().read([{ spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 }]),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.status).toBe(502);
    expect(api.fake.requests).toHaveLength(4);
  });

  it('retries an answer slower than timeoutMs', async () => {
    api.fake.addSpreadsheet('book', { S: PEOPLE });
    api.fake.faults.push({ status: 200, delayMs: 500 });
    const [rows] = await adapter({ timeoutMs: 100 }).read([
      { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 },
    ]);
    expect(rows).toEqual(PEOPLE);
    expect(api.fake.requests).toHaveLength(2);
  });

  it('stops with a CancelledError when the signal aborts', async () => {
    api.fake.addSpreadsheet('book', { S: PEOPLE });
    api.fake.faults.push({ status: 200, delayMs: 2000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await rejection(
      adapter().read([{ spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 }], {
        signal: controller.signal,
      }),
    );
    expect(error).toBeInstanceOf(CancelledError);
  });

  it('accepts an API key as auth and an already-built client', async () => {
    api.fake.addSpreadsheet('book', { S: PEOPLE });
    const [byKey] = await new GoogleSheets({ auth: api.fake.apiKey, rootUrl: api.fake.url }).read([
      { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0, rows: 1 },
    ]);
    expect(byKey).toEqual([PEOPLE[0]]);
    expect(api.fake.requests[0]!.query.key).toEqual([api.fake.apiKey]);

    // The client packages bundle their own google-auth-library copy, whose types differ from the top-level one.
    const client: SheetsClient = buildSheetsClient({
      version: 'v4',
      auth: api.auth as never,
      rootUrl: api.fake.url,
    });
    const [byClient] = await new GoogleSheets({ client }).read([
      { spreadsheet_id: 'book', sheet_name: 'S', row: 1, col: 1, rows: 1, cols: 1 },
    ]);
    expect(byClient).toEqual([['Ada']]);
  });
});

describe('GoogleSheets read cache', () => {
  it('serves repeated reads from the cache and drops a sheet’s entries on its own append and write', async () => {
    api.fake.addSpreadsheet('book', { S: [['id'], [1]], T: [['t']] });
    const sheets = adapter({ cache: { ttlMs: 60_000 } });
    const s = { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 };
    const t = { spreadsheet_id: 'book', sheet_name: 'T', row: 0, col: 0 };
    for (let i = 0; i < 5; i++) await sheets.read([s, t]);
    expect(api.fake.requests.filter(isValuesRead)).toHaveLength(1);

    await sheets.append({ spreadsheet_id: 'book', sheet_name: 'S', row: 2, col: 0, values: [[2]] });
    expect(await sheets.read([s])).toEqual([[['id'], [1], [2]]]);
    await sheets.read([t]);
    expect(api.fake.requests.filter(isValuesRead)).toHaveLength(2);

    await sheets.write({ spreadsheet_id: 'book', sheet_name: 'S', row: 1, col: 0, values: [[10]] });
    expect(await sheets.read([s])).toEqual([[['id'], [10], [2]]]);
    expect(api.fake.requests.filter(isValuesRead)).toHaveLength(3);
  });

  it('expires entries after ttlMs and hands out copies', async () => {
    api.fake.addSpreadsheet('book', { S: [['id']] });
    const sheets = adapter({ cache: { ttlMs: 50 } });
    const s = { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 };
    const [first] = await sheets.read([s]);
    first![0]![0] = 'changed';
    expect(await sheets.read([s])).toEqual([[['id']]]);
    await new Promise((resolve) => setTimeout(resolve, 70));
    await sheets.read([s]);
    expect(api.fake.requests.filter(isValuesRead)).toHaveLength(2);
  });
});

describe('GoogleSheets.write', () => {
  it('writes RAW over a range, clears nulls, grows the grid, like the memory adapter', async () => {
    const seed: CellValue[][] = [
      ['a', 'b'],
      [1, 2],
      [3, 4],
    ];
    api.fake.addSpreadsheet('book', { S: seed }, { rowCount: 4, columnCount: 3 });
    const memory = new MemorySpreadsheets({ book: { S: seed } });
    const requests = [
      { spreadsheet_id: 'book', sheet_name: 'S', row: 1, col: 1, values: [['=1+1', null], [true]] },
      { spreadsheet_id: 'book', sheet_name: 'S', row: 5, col: 2, values: [[7, 8]] },
    ];
    const google = adapter();
    for (const request of requests) {
      await google.write(request);
      memory.write(request);
    }
    expect(api.fake.sheet('book', 'S')!.cells).toEqual(memory.cells('book', 'S')!.map((row) => trimRow(row)));
    const updates = api.fake.requests.filter((r) => r.method === 'PUT');
    expect(updates[0]!.path).toBe("/v4/spreadsheets/book/values/'S'!B2:C3");
    expect(updates[0]!.query.valueInputOption).toEqual(['RAW']);
    expect(updates[0]!.json.values).toEqual([
      ['=1+1', ''],
      [true, ''],
    ]);
    expect(api.fake.sheet('book', 'S')!.rowCount).toBeGreaterThanOrEqual(6);
  });
});

function trimRows(rows: CellValue[][]): CellValue[][] {
  const copy = rows.map(trimRow);
  while (copy.length && copy[copy.length - 1]!.length === 0) copy.pop();
  return copy;
}

function trimRow(row: CellValue[]): CellValue[] {
  const copy = row.slice();
  while (copy.length && copy[copy.length - 1] === null) copy.pop();
  return copy;
}
