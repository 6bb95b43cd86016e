/**
 * A local fake of the Google Sheets API v4 on 127.0.0.1, answering the request and response shapes
 * Google documents for the endpoints stepwire uses, recording every request, and injecting faults
 * (429 with Retry-After, 5xx, slow answers, answers lost after the change was applied).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake received. */
export interface RecordedRequest {
  method: string;
  /** Decoded path, e.g. `/v4/spreadsheets/book/values/'My Sheet'!A1:B2`. */
  path: string;
  /** Query parameters; repeated ones (`ranges`) keep every value. */
  query: Record<string, string[]>;
  headers: IncomingMessage['headers'];
  body: Buffer;
  json?: any;
}

/** A fault answered instead of (or after) the normal handling. */
export interface Fault {
  /** Only requests this matches take the fault; default any. */
  match?: (request: RecordedRequest) => boolean;
  /** HTTP status of the fault answer. */
  status?: number;
  /** Google error status, e.g. `UNAVAILABLE`. */
  reason?: string;
  /** Legacy `errors[].reason` values, e.g. Drive's `userRateLimitExceeded`. */
  reasons?: string[];
  message?: string;
  /** `Retry-After` header. */
  retryAfter?: string;
  /** Wait before answering, ms. */
  delayMs?: number;
  /** Handle the request for real first, then answer the fault (the answer of a done change is lost). */
  apply?: boolean;
  /** Answer this raw text instead of an error (status 200 unless `status`), e.g. HTML or cut-off JSON. */
  body?: string;
  /** `Content-Type` of `body`; default JSON. */
  contentType?: string;
  /**
   * Answer normally, only `delayMs` late: the answer shows the data as it was when the request
   * arrived (a read overtaken by a later write).
   */
  late?: boolean;
}

/** An HTTP error of the fake, answered as `{ error: { code, message, status } }`. */
export class FakeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly reasons: string[] = [],
  ) {
    super(message);
  }
}

/** What a route handler returns: a JSON value, or raw bytes with a type. */
export type FakeAnswer = unknown | { raw: Buffer; contentType: string };

/** The running server with its record and fault queue. */
export interface FakeHttp {
  url: string;
  requests: RecordedRequest[];
  faults: Fault[];
  /** Called with each request as it arrives, before it is handled (e.g. another writer's change). */
  arrivals: ((request: RecordedRequest) => void)[];
  close(): Promise<void>;
}

/** Options of a fake server. */
export interface FakeHttpOptions {
  /**
   * A path the API is served under, e.g. `/proxy/google` (as behind a proxy): `url` ends with it,
   * requests outside it answer 404, and `path` is recorded without it.
   */
  prefix?: string;
}

/** Starts a fake on a free 127.0.0.1 port; `route` handles a request or throws a {@link FakeHttpError}. */
export async function startFakeHttp(
  route: (request: RecordedRequest) => FakeAnswer | Promise<FakeAnswer>,
  options: FakeHttpOptions = {},
): Promise<FakeHttp> {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  const arrivals: ((request: RecordedRequest) => void)[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const query: Record<string, string[]> = {};
    for (const [key, value] of url.searchParams) (query[key] ??= []).push(value);
    const fullPath = decodeURIComponent(url.pathname);
    if (prefix && !fullPath.startsWith(`${prefix}/`)) {
      res
        .writeHead(404, { 'content-type': 'text/html' })
        .end(`<html><body>Not Found: ${fullPath}</body></html>`);
      return;
    }
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: fullPath.slice(prefix.length),
      query,
      headers: req.headers,
      body: Buffer.concat(chunks),
    };
    if (String(req.headers['content-type'] ?? '').includes('json'))
      request.json = JSON.parse(request.body.toString('utf8') || 'null');
    requests.push(request);
    for (const arrival of arrivals) arrival(request);
    const index = faults.findIndex((fault) => !fault.match || fault.match(request));
    const fault = index >= 0 ? faults.splice(index, 1)[0] : undefined;
    let answer: FakeAnswer;
    let status = 200;
    if (fault?.body !== undefined) {
      if (fault.apply) await route(request);
      const contentType = fault.contentType ?? 'application/json; charset=UTF-8';
      res.writeHead(fault.status ?? 200, { 'content-type': contentType }).end(fault.body);
      return;
    }
    try {
      const faultError = (f: Fault): FakeHttpError =>
        new FakeHttpError(
          f.status ?? 500,
          f.reason ?? 'INTERNAL',
          f.message ?? 'Internal error encountered.',
          f.reasons,
        );
      if (fault && !fault.apply && !fault.late) throw faultError(fault);
      answer = await route(request);
      if (fault && !fault.late) throw faultError(fault);
    } catch (error) {
      if (!(error instanceof FakeHttpError)) throw error;
      status = error.status;
      const errors = error.reasons.map((reason) => ({ domain: 'global', reason, message: error.message }));
      answer = {
        error: {
          code: error.status,
          message: error.message,
          ...(errors.length ? { errors } : {}),
          status: error.reason,
        },
      };
    }
    if (fault?.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    if (res.destroyed || req.socket.destroyed) return;
    const headers: Record<string, string> = {};
    if (fault?.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
    if (
      answer &&
      typeof answer === 'object' &&
      'raw' in answer &&
      Buffer.isBuffer((answer as { raw: unknown }).raw)
    ) {
      const raw = answer as { raw: Buffer; contentType: string };
      res.writeHead(status, { ...headers, 'content-type': raw.contentType }).end(raw.raw);
    } else {
      res
        .writeHead(status, { ...headers, 'content-type': 'application/json; charset=UTF-8' })
        .end(JSON.stringify(answer));
    }
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${prefix}/`,
    requests,
    faults,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Checks the credentials googleapis sends: a bearer token or an API `key`. */
export function checkAuth(request: RecordedRequest, token: string, apiKey: string): void {
  if (request.headers.authorization === `Bearer ${token}` || request.query.key?.[0] === apiKey) return;
  throw new FakeHttpError(401, 'UNAUTHENTICATED', 'Request is missing required authentication credential.');
}

/**
 * A date or date-time cell: Google keeps its serial number (days since 1899-12-30, the time of day as
 * the fraction) and shows it in its number format (`text`, e.g. `1/15/2024` in the en_US locale).
 */
export interface FakeDateCell {
  serial: number;
  text: string;
}

type Cell = string | number | boolean | null;
type Rendered = string | number | boolean;

function isDateCell(value: unknown): value is FakeDateCell {
  return typeof value === 'object' && value !== null;
}

/** One sheet of the fake. */
export interface FakeSheet {
  sheetId: number;
  title: string;
  rowCount: number;
  columnCount: number;
  cells: Cell[][];
}

/** The fake Sheets API. */
export interface FakeSheets extends FakeHttp {
  token: string;
  apiKey: string;
  /**
   * Creates a spreadsheet with sheets of rows (grid 1000 x 26 unless larger data or `grid`); a
   * {@link FakeDateCell} is a date cell.
   */
  addSpreadsheet(
    id: string,
    sheets: Record<string, (Cell | FakeDateCell)[][]>,
    grid?: { rowCount?: number; columnCount?: number },
  ): void;
  /** The sheet as held (cells trimmed of trailing empties, as Google reads them; date cells as their serial). */
  sheet(id: string, title: string): FakeSheet | undefined;
  /** Changes a sheet directly, as another writer would (`cells` and `rowCount` may both change). */
  edit(id: string, title: string, change: (sheet: FakeSheet) => void): void;
  /** Makes every request on a spreadsheet answer 403. */
  deny(id: string): void;
  /** Forgets requests, faults, spreadsheets and denials. */
  reset(): void;
}

interface Parsed {
  sheet: FakeSheet;
  r0: number;
  c0: number;
  r1?: number;
  c1?: number;
}

/** Starts the fake Sheets API (under `options.prefix` when given). */
export async function startFakeSheets(options: FakeHttpOptions = {}): Promise<FakeSheets> {
  const books = new Map<string, Map<string, FakeSheet>>();
  const denied = new Set<string>();
  const token = 'test-token';
  const apiKey = 'test-api-key';
  let nextSheetId = 100;

  const book = (id: string): Map<string, FakeSheet> => {
    const found = books.get(id);
    if (!found) throw new FakeHttpError(404, 'NOT_FOUND', 'Requested entity was not found.');
    if (denied.has(id))
      throw new FakeHttpError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    return found;
  };

  const parse = (id: string, a1: string): Parsed => {
    const sheets = book(id);
    const bang = a1.lastIndexOf('!');
    const sheetPart = bang < 0 ? a1 : a1.slice(0, bang);
    const name =
      sheetPart.startsWith("'") && sheetPart.endsWith("'")
        ? sheetPart.slice(1, -1).replaceAll("''", "'")
        : sheetPart;
    const sheet = sheets.get(name);
    const bad = new FakeHttpError(400, 'INVALID_ARGUMENT', `Unable to parse range: ${a1}`);
    if (!sheet) throw bad;
    if (bang < 0) return { sheet, r0: 0, c0: 0 };
    const [start, end, extra] = a1.slice(bang + 1).split(':');
    const cell = /^([A-Z]*)(\d*)$/;
    const s = cell.exec(start ?? '');
    const e = end === undefined ? s : cell.exec(end);
    if (!s || !e || extra !== undefined || (!s[1] && !s[2])) throw bad;
    const parsed: Parsed = { sheet, r0: s[2] ? Number(s[2]) - 1 : 0, c0: s[1] ? colIndex(s[1]) : 0 };
    if (e[2]) parsed.r1 = Number(e[2]);
    if (e[1]) parsed.c1 = colIndex(e[1]) + 1;
    if (end === undefined) {
      parsed.r1 = parsed.r0 + 1;
      parsed.c1 = parsed.c0 + 1;
    }
    return parsed;
  };

  // valueRenderOption defaults to FORMATTED_VALUE and dateTimeRenderOption to SERIAL_NUMBER; the
  // latter is ignored when values are formatted, as Google documents.
  const render = (value: Cell | FakeDateCell, query: Record<string, string[]>): Rendered => {
    const option = query.valueRenderOption?.[0] ?? 'FORMATTED_VALUE';
    if (value === null) return '';
    if (isDateCell(value)) {
      if (option === 'FORMATTED_VALUE') return value.text;
      return query.dateTimeRenderOption?.[0] === 'FORMATTED_STRING' ? value.text : value.serial;
    }
    if (option === 'UNFORMATTED_VALUE') return value;
    if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
    return String(value);
  };

  const valueRange = (id: string, a1: string, query: Record<string, string[]>): object => {
    const p = parse(id, a1);
    const rowEnd = Math.min(p.r1 ?? p.sheet.rowCount, p.sheet.rowCount);
    const colEnd = Math.min(p.c1 ?? p.sheet.columnCount, p.sheet.columnCount);
    const values: Rendered[][] = [];
    for (let r = p.r0; r < rowEnd; r++) {
      const row: Rendered[] = [];
      for (let c = p.c0; c < colEnd; c++) row.push(render(p.sheet.cells[r]?.[c] ?? null, query));
      while (row.length && row[row.length - 1] === '') row.pop();
      values.push(row);
    }
    while (values.length && values[values.length - 1]!.length === 0) values.pop();
    const range = `${sheetA1(p.sheet.title)}!${letters(p.c0)}${p.r0 + 1}:${letters(Math.max(colEnd, p.c0 + 1) - 1)}${Math.max(rowEnd, p.r0 + 1)}`;
    return values.length ? { range, majorDimension: 'ROWS', values } : { range, majorDimension: 'ROWS' };
  };

  const put = (sheet: FakeSheet, r: number, c: number, value: Cell): void => {
    while (sheet.cells.length <= r) sheet.cells.push([]);
    const row = sheet.cells[r]!;
    while (row.length <= c) row.push(null);
    row[c] = value;
  };

  const writeValues = (
    p: Parsed,
    r0: number,
    values: Cell[][],
    inputOption: string,
  ): { rows: number; cols: number } => {
    let cols = 0;
    values.forEach((row, i) => {
      cols = Math.max(cols, row.length);
      row.forEach((value, j) => {
        if (r0 + i >= p.sheet.rowCount || p.c0 + j >= p.sheet.columnCount) {
          throw new FakeHttpError(
            400,
            'INVALID_ARGUMENT',
            `Range (${sheetA1(p.sheet.title)}!${letters(p.c0 + j)}${r0 + i + 1}) exceeds grid limits. Max rows: ${p.sheet.rowCount}, max columns: ${p.sheet.columnCount}`,
          );
        }
        let stored: Cell = value === '' ? null : value;
        if (inputOption === 'USER_ENTERED' && typeof stored === 'string' && /^-?\d+(\.\d+)?$/.test(stored))
          stored = Number(stored);
        put(p.sheet, r0 + i, p.c0 + j, stored);
      });
    });
    return { rows: values.length, cols };
  };

  const inputOption = (query: Record<string, string[]>): string => {
    const option = query.valueInputOption?.[0];
    if (option !== 'RAW' && option !== 'USER_ENTERED')
      throw new FakeHttpError(400, 'INVALID_ARGUMENT', "'valueInputOption' is required but not specified");
    return option;
  };

  const batchUpdate = (id: string, body: { requests?: any[] }): object => {
    const sheets = book(id);
    // All or nothing: work on copies, commit at the end.
    const copies = new Map(
      [...sheets].map(([title, s]) => [title, { ...s, cells: s.cells.map((row) => row.slice()) }]),
    );
    const byId = (sheetId: unknown, where: string): FakeSheet => {
      const found = [...copies.values()].find((s) => s.sheetId === sheetId);
      if (!found)
        throw new FakeHttpError(
          400,
          'INVALID_ARGUMENT',
          `Invalid ${where}: No grid with id: ${String(sheetId)}`,
        );
      return found;
    };
    (body.requests ?? []).forEach((request, i) => {
      const where = `requests[${i}]`;
      if (request.insertDimension) {
        const { range, inheritFromBefore } = request.insertDimension;
        const sheet = byId(range.sheetId ?? 0, `${where}.insertDimension`);
        const count = range.endIndex - range.startIndex;
        if (range.dimension !== 'ROWS')
          throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'fake supports ROWS inserts only');
        if (
          !(count > 0) ||
          range.startIndex >= sheet.rowCount ||
          (inheritFromBefore && range.startIndex === 0)
        ) {
          throw new FakeHttpError(
            400,
            'INVALID_ARGUMENT',
            `Invalid ${where}.insertDimension: range is not valid`,
          );
        }
        insertEmptyRows(sheet.cells, range.startIndex, count);
        sheet.rowCount += count;
      } else if (request.deleteDimension) {
        const { range } = request.deleteDimension;
        const sheet = byId(range.sheetId ?? 0, `${where}.deleteDimension`);
        if (range.dimension !== 'ROWS')
          throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'fake supports ROWS deletes only');
        const start = range.startIndex ?? 0;
        const end = range.endIndex ?? sheet.rowCount;
        if (!(end > start) || start < 0 || end > sheet.rowCount) {
          throw new FakeHttpError(
            400,
            'INVALID_ARGUMENT',
            `Invalid ${where}.deleteDimension: range is not valid`,
          );
        }
        if (end - start >= sheet.rowCount)
          throw new FakeHttpError(
            400,
            'INVALID_ARGUMENT',
            `Invalid ${where}.deleteDimension: You can't delete all the rows on the sheet.`,
          );
        sheet.cells.splice(start, end - start);
        sheet.rowCount -= end - start;
      } else if (request.appendDimension) {
        const { sheetId, dimension, length } = request.appendDimension;
        const sheet = byId(sheetId ?? 0, `${where}.appendDimension`);
        if (dimension === 'ROWS') sheet.rowCount += length;
        else sheet.columnCount += length;
      } else if (request.updateCells) {
        const { start, rows, fields } = request.updateCells;
        const sheet = byId(start.sheetId ?? 0, `${where}.updateCells`);
        if (fields !== 'userEnteredValue')
          throw new FakeHttpError(
            400,
            'INVALID_ARGUMENT',
            `Invalid ${where}.updateCells: fields must be given`,
          );
        (rows as { values?: any[] }[]).forEach((row, r) => {
          (row.values ?? []).forEach((cell, c) => {
            const rowIndex = (start.rowIndex ?? 0) + r;
            const colIndex = (start.columnIndex ?? 0) + c;
            if (rowIndex >= sheet.rowCount || colIndex >= sheet.columnCount) {
              throw new FakeHttpError(
                400,
                'INVALID_ARGUMENT',
                `Invalid ${where}.updateCells: GridCoordinate is outside the grid`,
              );
            }
            const v = cell.userEnteredValue;
            put(
              sheet,
              rowIndex,
              colIndex,
              v === undefined
                ? null
                : (v.stringValue ??
                    v.numberValue ??
                    v.boolValue ??
                    (v.formulaValue !== undefined ? `FORMULA:${v.formulaValue}` : null)),
            );
          });
        });
      } else {
        throw new FakeHttpError(400, 'INVALID_ARGUMENT', `Invalid ${where}: unsupported request kind`);
      }
    });
    for (const [title, copy] of copies) sheets.set(title, copy);
    return { spreadsheetId: id, replies: (body.requests ?? []).map(() => ({})) };
  };

  const http = await startFakeHttp((request) => {
    checkAuth(request, token, apiKey);
    const match = /^\/v4\/spreadsheets\/([^/:]+)(.*)$/.exec(request.path);
    if (!match) throw new FakeHttpError(404, 'NOT_FOUND', `No route for ${request.path}`);
    const id = match[1]!;
    const rest = match[2]!;
    const { method, query } = request;
    if (method === 'GET' && rest === '') {
      const sheets = [...book(id).values()].map((s, index) => ({
        properties: {
          sheetId: s.sheetId,
          title: s.title,
          index,
          sheetType: 'GRID',
          gridProperties: { rowCount: s.rowCount, columnCount: s.columnCount },
        },
      }));
      return { spreadsheetId: id, properties: { title: id, locale: 'en_US', timeZone: 'Etc/GMT' }, sheets };
    }
    if (method === 'POST' && rest === ':batchUpdate') return batchUpdate(id, request.json ?? {});
    if (method === 'GET' && rest === '/values:batchGet') {
      return { spreadsheetId: id, valueRanges: (query.ranges ?? []).map((a1) => valueRange(id, a1, query)) };
    }
    const values = /^\/values\/(.+?)(:append)?$/.exec(rest);
    if (values && method === 'GET' && !values[2]) return valueRange(id, values[1]!, query);
    if (values && method === 'PUT' && !values[2]) {
      const option = inputOption(query);
      const p = parse(id, values[1]!);
      const rows = (request.json?.values ?? []) as Cell[][];
      const size = writeValues(p, p.r0, rows, option);
      return {
        spreadsheetId: id,
        updatedRange: values[1],
        updatedRows: size.rows,
        updatedColumns: size.cols,
        updatedCells: rows.reduce((n, row) => n + row.length, 0),
      };
    }
    if (values && method === 'POST' && values[2]) {
      const option = inputOption(query);
      const p = parse(id, values[1]!);
      // Table detection as Google documents it: the rows with data from the range's first row down.
      const hasData = (r: number): boolean =>
        (p.sheet.cells[r] ?? []).some((v, c) => v !== null && c >= p.c0 && c < (p.c1 ?? Infinity));
      let end = p.r0;
      while (end < p.sheet.rowCount && hasData(end)) end++;
      const rows = (request.json?.values ?? []) as Cell[][];
      if (query.insertDataOption?.[0] === 'INSERT_ROWS') {
        insertEmptyRows(p.sheet.cells, end, rows.length);
        p.sheet.rowCount += rows.length;
      } else if (end + rows.length > p.sheet.rowCount) {
        p.sheet.rowCount = end + rows.length;
      }
      const size = writeValues(p, end, rows, option);
      const updatedRange = `${sheetA1(p.sheet.title)}!${letters(p.c0)}${end + 1}:${letters(p.c0 + Math.max(size.cols, 1) - 1)}${end + rows.length}`;
      const tableRange =
        end > p.r0
          ? `${sheetA1(p.sheet.title)}!${letters(p.c0)}${p.r0 + 1}:${letters(p.c0 + Math.max(size.cols, 1) - 1)}${end}`
          : undefined;
      return {
        spreadsheetId: id,
        ...(tableRange ? { tableRange } : {}),
        updates: {
          spreadsheetId: id,
          updatedRange,
          updatedRows: size.rows,
          updatedColumns: size.cols,
          updatedCells: rows.reduce((n, row) => n + row.length, 0),
        },
      };
    }
    throw new FakeHttpError(404, 'NOT_FOUND', `No route for ${method} ${request.path}`);
  }, options);

  return {
    ...http,
    token,
    apiKey,
    addSpreadsheet(id, sheets, grid = {}) {
      const map = new Map<string, FakeSheet>();
      for (const [title, rows] of Object.entries(sheets)) {
        const width = rows.reduce((max, row) => Math.max(max, row.length), 0);
        map.set(title, {
          sheetId: nextSheetId++,
          title,
          rowCount: Math.max(grid.rowCount ?? 1000, rows.length),
          columnCount: Math.max(grid.columnCount ?? 26, width),
          // Date cells are held as they are (render shows them); the FakeSheet type lists plain cells.
          cells: rows.map((row) => row.slice()) as Cell[][],
        });
      }
      books.set(id, map);
    },
    sheet(id, title) {
      const sheet = books.get(id)?.get(title);
      if (!sheet) return undefined;
      const cells = sheet.cells.map((row) => {
        const copy = row.map((cell: Cell | FakeDateCell) => (isDateCell(cell) ? cell.serial : cell));
        while (copy.length && copy[copy.length - 1] === null) copy.pop();
        return copy;
      });
      while (cells.length && cells[cells.length - 1]!.length === 0) cells.pop();
      return { ...sheet, cells };
    },
    edit(id, title, change) {
      const sheet = books.get(id)?.get(title);
      if (!sheet) throw new Error(`no sheet ${title} in ${id}`);
      change(sheet);
    },
    deny(id) {
      denied.add(id);
    },
    reset() {
      http.requests.length = 0;
      http.faults.length = 0;
      http.arrivals.length = 0;
      books.clear();
      denied.clear();
    },
  };
}

/** Inserts `count` empty rows at `at` (or at the end), without spreading them as arguments. */
function insertEmptyRows(cells: Cell[][], at: number, count: number): void {
  const start = Math.min(at, cells.length);
  const tail = cells.splice(start);
  for (let i = 0; i < count; i++) cells.push([]);
  for (const row of tail) cells.push(row);
}

function colIndex(letters: string): number {
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

function letters(col: number): string {
  let n = col + 1;
  let out = '';
  while (n > 0) {
    out = String.fromCharCode(65 + ((n - 1) % 26)) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/** A sheet name as Google prints it in ranges: quoted only when needed. */
function sheetA1(title: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(title) ? title : `'${title.replaceAll("'", "''")}'`;
}
