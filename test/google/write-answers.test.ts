import { beforeEach, describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { UpstreamError } from '../../src/errors/index.js';
import { Engine } from '../../src/index.js';
import { type RecordedRequest } from '../fakes/google-sheets.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();
beforeEach(() => {
  api.fake.reset();
  api.fake.addSpreadsheet('book', {
    S: [
      ['id', 'name'],
      [1, 'a'],
    ],
  });
});

const SHEET = [
  ['id', 'name'],
  [1, 'a'],
];
const isBatchUpdate = (r: RecordedRequest): boolean => r.method === 'POST' && r.path.endsWith(':batchUpdate');
const isValuesUpdate = (r: RecordedRequest): boolean => r.method === 'PUT';

function adapter(): GoogleSheets {
  return new GoogleSheets({
    auth: api.auth,
    rootUrl: api.fake.url,
    retry: { attempts: 3, baseMs: 1, capMs: 5 },
  });
}

async function engine(): Promise<Engine> {
  const e = new Engine({ spreadsheets: adapter() });
  await e.catalog.registerEntity({
    name: 'e',
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'name', type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'S', origin: { row: 0, col: 0 } },
  });
  return e;
}

const BODIES: [string, { body: string; contentType?: string }][] = [
  ['HTML', { body: '<html><body>Proxy OK</body></html>', contentType: 'text/html' }],
  ['an empty body', { body: '' }],
  ['cut-off JSON', { body: '{"spreadsheetId":"book","repl' }],
  ['JSON of another shape', { body: '{"ok":true}' }],
];

function expectUnknownOutcome(error: unknown, what: string): void {
  expect(error).toBeInstanceOf(UpstreamError);
  expect((error as UpstreamError).retryable).toBe(false);
  expect((error as Error).message).toMatch(
    new RegExp(
      `Google Sheets ${what} of spreadsheet "book", sheet "S".* got a malformed answer: .*outcome is unknown`,
    ),
  );
}

describe('GoogleSheets write answers are checked', () => {
  it.each(BODIES)(
    'fails an append answered 200 with %s, saying the outcome is unknown, and does not resend',
    async (_, fault) => {
      const e = await engine();
      api.fake.faults.push({ match: isBatchUpdate, ...fault });
      const error = await e.catalog.append('e', [{ id: 2, name: 'b' }]).catch((x: unknown) => x);
      expectUnknownOutcome(error, 'append');
      expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(1);
      expect(api.fake.sheet('book', 'S')!.cells).toEqual(SHEET);
    },
  );

  it('fails an append whose answer has fewer replies than requests', async () => {
    api.fake.faults.push({ match: isBatchUpdate, body: '{"spreadsheetId":"book","replies":[]}' });
    const error = await adapter()
      .append({ spreadsheet_id: 'book', sheet_name: 'S', row: 2, col: 0, values: [[2, 'b']] })
      .catch((x: unknown) => x);
    expectUnknownOutcome(error, 'append');
    expect((error as Error).message).toContain('0 replies for 2 requests');
  });

  it.each([
    ['update', [{ id: 1, name: 'CHANGED' }]],
    ['delete', [{ id: 1 }]],
  ] as const)('fails a write by key (%s) answered 200 with HTML', async (mode, rows) => {
    const e = await engine();
    api.fake.faults.push({ match: isBatchUpdate, body: '<html>ok</html>', contentType: 'text/html' });
    const error = await e.catalog.write([{ entity: 'e', rows: [...rows], mode }]).catch((x: unknown) => x);
    expectUnknownOutcome(error, 'update');
    expect(api.fake.requests.filter(isBatchUpdate)).toHaveLength(1);
    expect(api.fake.sheet('book', 'S')!.cells).toEqual(SHEET);
  });

  it.each(BODIES)('fails a replace (values.update) answered 200 with %s', async (_, fault) => {
    const e = await engine();
    api.fake.faults.push({ match: isValuesUpdate, ...fault });
    const error = await e.catalog
      .write([{ entity: 'e', rows: [{ id: 1, name: 'CHANGED' }], mode: 'replace' }])
      .catch((x: unknown) => x);
    expectUnknownOutcome(error, 'write');
    expect(api.fake.requests.filter(isValuesUpdate)).toHaveLength(1);
  });

  it('fails a write whose grid-growing batchUpdate is answered 200 with HTML, before writing', async () => {
    api.fake.reset();
    api.fake.addSpreadsheet('book', { S: [['id']] }, { rowCount: 2, columnCount: 1 });
    api.fake.faults.push({ match: isBatchUpdate, body: '<html>ok</html>', contentType: 'text/html' });
    const error = await adapter()
      .write({ spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0, values: [[1, 2, 3]] })
      .catch((x: unknown) => x);
    expectUnknownOutcome(error, 'write');
    expect(api.fake.requests.filter(isValuesUpdate)).toHaveLength(1);
  });

  it('still accepts the documented answers', async () => {
    const sheets = adapter();
    await sheets.append({ spreadsheet_id: 'book', sheet_name: 'S', row: 2, col: 0, values: [[2, 'b']] });
    await sheets.write({ spreadsheet_id: 'book', sheet_name: 'S', row: 1, col: 1, values: [['A']] });
    await sheets.update({
      spreadsheet_id: 'book',
      sheet_name: 'S',
      cells: [{ row: 2, col: 1, values: ['B'] }],
      deleteRows: [],
      expect: [{ row: 2, col: 0, values: [2] }],
    });
    expect(api.fake.sheet('book', 'S')!.cells).toEqual([
      ['id', 'name'],
      [1, 'A'],
      [2, 'B'],
    ]);
  });
});
