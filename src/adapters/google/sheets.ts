/**
 * The Google Sheets spreadsheet adapter (Sheets API v4 through `@googleapis/sheets`).
 * @module
 */
import { SheetError, UpstreamError } from '../../errors/index.js';
import { normalizeRetry, withRetry, type RetryOptions, type RetryPolicy } from '../../retry/index.js';
import type {
  AppendRequest,
  CallOptions,
  CellRows,
  CellValue,
  RangeRequest,
  SheetRef,
  SpreadsheetAdapter,
  UpdateRequest,
  WriteRequest,
} from '../types.js';
import { boxA1, rangeA1 } from './a1.js';
import type { GoogleAnswer, GoogleAuthInput, GoogleCallConfig, SheetsClient } from './clients.js';
import { classifySafe, describeFailure, readGoogleError } from './errors.js';
import { checkRootUrl, googleClient } from './clients.js';
import { ReadCache } from './read-cache.js';
import { appendRows, type AppendDeps, type SheetProperties } from './sheets-append.js';
import { updateRows } from './sheets-update.js';

/** Options of {@link GoogleSheets}. */
export interface GoogleSheetsOptions {
  /**
   * Credentials: a google-auth-library client (`GoogleAuth`, `JWT`, `OAuth2Client`, …) or an API key
   * string (reads of public sheets only). Not needed when `client` is given.
   */
  auth?: GoogleAuthInput;
  /**
   * Root of the Sheets API, e.g. a proxy or a local fake: `http://127.0.0.1:8080/`. An `http` or
   * `https` URL without query or fragment (else the constructor throws a `TypeError`); a path is
   * kept (`https://proxy.example/google/` calls `https://proxy.example/google/v4/…`). Also applies
   * to a `client` given.
   */
  rootUrl?: string;
  /** An already-built `sheets_v4.Sheets` client; then `@googleapis/sheets` is not imported. */
  client?: SheetsClient;
  /** Retries of 429, 5xx and network failures, with exponential backoff and full jitter. */
  retry?: RetryOptions;
  /**
   * Longest wait for one answer, in ms.
   * @default 60000
   */
  timeoutMs?: number;
  /**
   * Keeps range reads for `ttlMs` to stay inside Sheets quotas; the adapter's own appends and
   * writes drop the cached reads of that sheet, and a read they overtook (sent before one finished,
   * answered after it) is not kept. Changes made by others show after at most `ttlMs`.
   */
  cache?: { ttlMs: number };
}

/** Location of a failure: spreadsheet, sheet and A1 range. @internal */
export type SheetLocation = { spreadsheet_id: string; sheet_name: string; range?: string };

/**
 * Cells unformatted, dates and times as serial numbers (days since 1899-12-30, the time as the
 * fraction): the display text of a date (`1/15/2024`) depends on the sheet's locale and format,
 * while `DATE`/`DATETIME` columns read serials as they are. A `STRING` column over a date cell reads
 * the serial as text (`"45306"`).
 */
const READ_OPTIONS = {
  valueRenderOption: 'UNFORMATTED_VALUE',
  dateTimeRenderOption: 'SERIAL_NUMBER',
  majorDimension: 'ROWS',
};
const PROPERTIES_FIELDS = 'sheets.properties(sheetId,title,gridProperties(rowCount,columnCount))';

/**
 * Google Sheets as the engine's spreadsheets. Reads fetch only the requested ranges, unformatted,
 * several at once with `values.batchGet`; appends insert rows exactly at the requested row in one
 * atomic `batchUpdate`, as raw values; 429 and 5xx are retried, and an append whose outcome is
 * unknown is verified by reading back before anything is sent again.
 * @example
 * ```ts
 * import { GoogleAuth } from 'google-auth-library';
 * import { GoogleSheets } from 'stepwire/google';
 *
 * const auth = new GoogleAuth({ keyFile: 'service-account.json', scopes: ['https://www.googleapis.com/auth/spreadsheets'] });
 * const engine = new Engine({ spreadsheets: new GoogleSheets({ auth }) });
 * ```
 */
export class GoogleSheets implements SpreadsheetAdapter {
  readonly #options: GoogleSheetsOptions;
  readonly #policy: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #cache: ReadCache | undefined;
  readonly #rootUrl: string | undefined;
  #client: Promise<SheetsClient> | undefined;

  constructor(options: GoogleSheetsOptions = {}) {
    this.#rootUrl = checkRootUrl('GoogleSheets', options.rootUrl);
    this.#options = this.#rootUrl === undefined ? options : { ...options, rootUrl: this.#rootUrl };
    this.#policy = normalizeRetry(options.retry);
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    if (options.cache !== undefined && !(Number.isFinite(options.cache.ttlMs) && options.cache.ttlMs >= 0)) {
      throw new TypeError(
        `cache.ttlMs must be a number of ms of at least 0, got ${String(options.cache.ttlMs)}`,
      );
    }
    this.#cache = options.cache && options.cache.ttlMs > 0 ? new ReadCache(options.cache.ttlMs) : undefined;
    if (options.client) this.#client = Promise.resolve(options.client);
  }

  /** Reads ranges; ranges of one spreadsheet go in one `values.batchGet`. Empty cells read as `null`. */
  async read(ranges: readonly RangeRequest[], options: CallOptions = {}): Promise<CellRows[]> {
    const results: (CellRows | undefined)[] = ranges.map((range) =>
      range.rows === 0 || range.cols === 0 ? [] : undefined,
    );
    const groups = new Map<
      string,
      { index: number; range: RangeRequest; a1: string; generation: number }[]
    >();
    ranges.forEach((range, index) => {
      if (results[index] !== undefined) return;
      const a1 = rangeA1(range);
      const cached = this.#cache?.get(range.spreadsheet_id, a1);
      if (cached) return void (results[index] = cached);
      const group = groups.get(range.spreadsheet_id) ?? [];
      // Taken before sending: an answer that a write of the sheet overtook is not cached.
      group.push({ index, range, a1, generation: this.#cache?.generation(range) ?? 0 });
      groups.set(range.spreadsheet_id, group);
    });
    await Promise.all(
      [...groups.entries()].map(async ([spreadsheetId, group]) => {
        const rows = await this.#fetchRanges(spreadsheetId, group, options.signal);
        group.forEach((item, i) => {
          const read = rows[i] ?? [];
          this.#cache?.set(item.range, item.a1, read, item.generation);
          results[item.index] = read;
        });
      }),
    );
    return results.map((rows) => rows ?? []);
  }

  /** Inserts rows at `request.row` (rows below move down), as raw values; all or nothing. */
  async append(request: AppendRequest, options: CallOptions = {}): Promise<void> {
    if (request.values.length === 0) return;
    const range = boxA1(request, request.row, request.col, request.values.length, 1);
    try {
      await appendRows(this.#batchDeps(request, 'append', range, options.signal), request);
    } finally {
      this.#cache?.invalidate(request);
    }
  }

  /**
   * Reads the `expect` cells again, then overwrites cells and deletes rows in one atomic
   * `spreadsheets.batchUpdate` (typed values, never formulas); an attempt whose outcome is unknown
   * is checked by reading the sheet back before anything is sent again.
   */
  async update(request: UpdateRequest, options: CallOptions = {}): Promise<void> {
    try {
      await updateRows(this.#batchDeps(request, 'update', undefined, options.signal), request);
    } finally {
      this.#cache?.invalidate(request);
    }
  }

  /** Overwrites values from `(row, col)` with `values.update`, RAW; `null` clears a cell. Grows the grid when needed. */
  async write(request: WriteRequest, options: CallOptions = {}): Promise<void> {
    const width = request.values.reduce((max, row) => Math.max(max, row.length), 0);
    if (request.values.length === 0 || width === 0) return;
    const range = boxA1(request, request.row, request.col, request.values.length, width);
    const values = request.values.map((row) => Array.from({ length: width }, (_, i) => row[i] ?? ''));
    const where = { ...location(request), range };
    const update = async (): Promise<void> => {
      const answer = await this.#call('write', where, options.signal, (client, config) =>
        client.spreadsheets.values.update(
          {
            spreadsheetId: request.spreadsheet_id,
            range,
            valueInputOption: 'RAW',
            requestBody: { range, majorDimension: 'ROWS', values },
          },
          config,
        ),
      );
      const problem = updateValuesProblem(answer.data, request.spreadsheet_id);
      if (problem !== undefined) throw untrusted('write', where, problem);
    };
    try {
      try {
        await update();
      } catch (error) {
        // values.update refuses cells past the grid; grow it the way the memory adapter grows, then write.
        if (!(error instanceof SheetError && /exceeds grid limits/i.test(error.message))) throw error;
        await this.#growGrid(
          request,
          request.row + request.values.length,
          request.col + width,
          options.signal,
        );
        await update();
      }
    } finally {
      this.#cache?.invalidate(request);
    }
  }

  /** What one atomic `batchUpdate` of a sheet (append or update) needs. */
  #batchDeps(
    ref: SheetRef,
    what: 'append' | 'update',
    range: string | undefined,
    signal: AbortSignal | undefined,
  ): AppendDeps {
    const where = range === undefined ? location(ref) : { ...location(ref), range };
    return {
      policy: this.#policy,
      signal,
      properties: (s) => this.#properties(ref, s),
      readBox: (row, col, rows, cols, s) => this.#readBox(ref, row, col, rows, cols, s),
      batchUpdate: async (requestBody, s) => {
        const client = await this.#getClient();
        const answer = await client.spreadsheets.batchUpdate(
          { spreadsheetId: ref.spreadsheet_id, requestBody },
          this.#config(s),
        );
        const problem = batchUpdateProblem(answer.data, ref.spreadsheet_id, requestBody.requests.length);
        if (problem !== undefined) throw untrusted(what, where, problem);
        return answer;
      },
      fail: (error, failed) => this.#mapError(error, failed, where),
    };
  }

  async #fetchRanges(
    spreadsheetId: string,
    group: { range: RangeRequest; a1: string }[],
    signal?: AbortSignal,
  ): Promise<CellRows[]> {
    const first = group[0]!.range;
    if (group.length === 1) {
      const a1 = group[0]!.a1;
      const answer = await this.#call('read', { ...location(first), range: a1 }, signal, (client, config) =>
        client.spreadsheets.values.get({ spreadsheetId, range: a1, ...READ_OPTIONS }, config),
      );
      return [
        toRows(answer.data, (problem) => malformed('read', { ...location(first), range: a1 }, problem)),
      ];
    }
    const ranges = group.map((item) => item.a1);
    const answer = await this.#call(
      'read',
      { ...location(first), range: ranges.join(', ') },
      signal,
      (client, config) =>
        client.spreadsheets.values.batchGet({ spreadsheetId, ranges, ...READ_OPTIONS }, config),
      (message) => group.find((item) => message.includes(item.a1))?.range,
    );
    const where = { ...location(first), range: ranges.join(', ') };
    const valueRanges = isRecord(answer.data) ? answer.data.valueRanges : undefined;
    if (!Array.isArray(valueRanges) || valueRanges.length !== ranges.length) {
      const got = Array.isArray(valueRanges)
        ? `${valueRanges.length} valueRanges`
        : `no valueRanges (${bodyText(answer.data)})`;
      throw malformed('read', where, `${got} for ${ranges.length} ranges`);
    }
    return group.map((item, i) =>
      toRows(valueRanges[i], (problem) => malformed('read', { ...where, range: item.a1 }, problem)),
    );
  }

  async #readBox(
    ref: SheetRef,
    row: number,
    col: number,
    rows: number,
    cols: number,
    signal?: AbortSignal,
  ): Promise<CellRows> {
    const [read] = await this.#fetchRanges(
      ref.spreadsheet_id,
      [{ range: { ...ref, row, col, rows, cols }, a1: boxA1(ref, row, col, rows, cols) }],
      signal,
    );
    return read ?? [];
  }

  async #properties(ref: SheetRef, signal?: AbortSignal): Promise<SheetProperties> {
    const answer = await this.#call('read', location(ref), signal, (client, config) =>
      client.spreadsheets.get({ spreadsheetId: ref.spreadsheet_id, fields: PROPERTIES_FIELDS }, config),
    );
    const sheets = isRecord(answer.data) ? answer.data.sheets : undefined;
    if (!Array.isArray(sheets))
      throw malformed('read', location(ref), `no sheets list (${bodyText(answer.data)})`);
    const properties = sheets
      .map((sheet: unknown) => (isRecord(sheet) && isRecord(sheet.properties) ? sheet.properties : undefined))
      .find((p) => p?.title === ref.sheet_name);
    if (!properties) {
      throw new SheetError(
        `sheet "${ref.sheet_name}" does not exist in spreadsheet "${ref.spreadsheet_id}"`,
        location(ref),
        { code: 'sheet_not_found' },
      );
    }
    // Defaults of 0 would aim the batchUpdate at another sheet or insert over existing rows.
    const grid = isRecord(properties.gridProperties) ? properties.gridProperties : {};
    const { sheetId } = properties;
    const { rowCount, columnCount } = grid;
    if (!isCount(sheetId) || !isCount(rowCount) || !isCount(columnCount)) {
      throw malformed(
        'read',
        location(ref),
        `sheet "${ref.sheet_name}" lacks sheetId or gridProperties.rowCount/columnCount (${bodyText(properties)})`,
      );
    }
    return { sheetId, rowCount, columnCount };
  }

  async #growGrid(ref: SheetRef, rows: number, cols: number, signal?: AbortSignal): Promise<void> {
    const grid = await this.#properties(ref, signal);
    const requests: object[] = [];
    if (rows > grid.rowCount)
      requests.push({
        appendDimension: { sheetId: grid.sheetId, dimension: 'ROWS', length: rows - grid.rowCount },
      });
    if (cols > grid.columnCount)
      requests.push({
        appendDimension: { sheetId: grid.sheetId, dimension: 'COLUMNS', length: cols - grid.columnCount },
      });
    if (requests.length === 0) return;
    // Only one attempt: appendDimension is not idempotent, and a lost answer just means a bigger grid.
    const client = await this.#getClient();
    let answer: GoogleAnswer;
    try {
      answer = await client.spreadsheets.batchUpdate(
        { spreadsheetId: ref.spreadsheet_id, requestBody: { requests } },
        this.#config(signal),
      );
    } catch (error) {
      throw this.#mapError(error, 'write', location(ref));
    }
    const problem = batchUpdateProblem(answer.data, ref.spreadsheet_id, requests.length);
    if (problem !== undefined) throw untrusted('write', location(ref), problem);
  }

  /** One retried call of a request that is safe to repeat; failures become stepwire errors. */
  async #call(
    what: string,
    where: SheetLocation,
    signal: AbortSignal | undefined,
    run: (client: SheetsClient, config: GoogleCallConfig) => Promise<GoogleAnswer>,
    locate?: (message: string) => RangeRequest | undefined,
  ): Promise<GoogleAnswer> {
    const client = await this.#getClient();
    try {
      return await withRetry(() => run(client, this.#config(signal)), {
        policy: this.#policy,
        signal,
        classify: (error) => classifySafe(readGoogleError(error)),
      });
    } catch (error) {
      if (
        error instanceof SheetError ||
        error instanceof UpstreamError ||
        (error as Error)?.name === 'CancelledError'
      )
        throw error;
      const named = locate?.(readGoogleError(error).message);
      throw this.#mapError(error, what, named ? { ...location(named), range: rangeA1(named) } : where);
    }
  }

  #config(signal: AbortSignal | undefined): GoogleCallConfig {
    const config: GoogleCallConfig = { retry: false, timeout: this.#timeoutMs };
    if (signal) config.signal = signal;
    // Per call too: googleapis keeps a root's path only when the call names the root.
    if (this.#rootUrl !== undefined) config.rootUrl = this.#rootUrl;
    return config;
  }

  #mapError(error: unknown, what: string, where: SheetLocation): Error {
    if (
      error instanceof SheetError ||
      error instanceof UpstreamError ||
      (error as Error)?.name === 'CancelledError'
    )
      return error as Error;
    return sheetsError(readGoogleError(error), what, where, error);
  }

  #getClient(): Promise<SheetsClient> {
    this.#client ??= googleClient<SheetsClient>('@googleapis/sheets', 'sheets', 'v4', this.#options);
    this.#client.catch(() => (this.#client = undefined));
    return this.#client;
  }
}

/** A googleapis failure as a stepwire error naming spreadsheet, sheet and range. @internal */
export function sheetsError(
  failure: ReturnType<typeof readGoogleError>,
  what: string,
  where: SheetLocation,
  cause: unknown,
): Error {
  const place = `spreadsheet "${where.spreadsheet_id}", sheet "${where.sheet_name}"${where.range ? `, range ${where.range}` : ''}`;
  const said = describeFailure(failure);
  const { status } = failure;
  if (classifySafe(failure).retry && status !== 401) {
    return new UpstreamError(`Google Sheets ${what} of ${place} failed: ${said}`, status, {
      cause,
      retryable: true,
    });
  }
  if (failure.credentials) {
    return new UpstreamError(
      `Google Sheets could not use the credentials (options.auth) for ${place}: ${said}`,
      status,
      { cause, retryable: false },
    );
  }
  if (status === 404) {
    return new SheetError(`spreadsheet "${where.spreadsheet_id}" was not found (${said})`, where, {
      code: 'sheet_not_found',
      cause,
    });
  }
  if (status === 400 && /unable to parse range/i.test(failure.message)) {
    return new SheetError(
      `sheet "${where.sheet_name}" does not exist in spreadsheet "${where.spreadsheet_id}" (${said})`,
      where,
      {
        code: 'sheet_not_found',
        cause,
      },
    );
  }
  if (status === 403) {
    return new SheetError(
      `no permission to ${what} ${place}: share the spreadsheet with the service account's email (client_email in its key JSON), ` +
        `as Editor to append or write, and check that the Google Sheets API is enabled for its project (${said})`,
      where,
      { code: 'permission_denied', cause },
    );
  }
  if (status === 401) {
    return new UpstreamError(`Google Sheets refused the credentials for ${place}: ${said}`, status, {
      cause,
      retryable: false,
    });
  }
  return new SheetError(`Google Sheets ${what} of ${place} failed: ${said}`, where, { cause });
}

function location(ref: SheetRef): SheetLocation {
  return { spreadsheet_id: ref.spreadsheet_id, sheet_name: ref.sheet_name };
}

/**
 * Rows of a `ValueRange` as cells: `""` (an empty cell inside a row) reads as `null`. Anything but
 * the documented shape (`values` absent, or rows of strings, numbers and booleans) is `malformed`.
 */
function toRows(range: unknown, malformed: (problem: string) => Error): CellRows {
  if (!isRecord(range)) throw malformed(`the answer is not a ValueRange (${bodyText(range)})`);
  const { values } = range;
  if (values === undefined) return [];
  if (!Array.isArray(values)) throw malformed(`values is not a list of rows (${bodyText(values)})`);
  return values.map((row: unknown, r) => {
    if (!Array.isArray(row)) throw malformed(`row ${r + 1} is not a list of cells (${bodyText(row)})`);
    return row.map((value: unknown, c): CellValue => {
      if (value === '') return null;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
      throw malformed(
        `cell ${c + 1} of row ${r + 1} is not a string, number or boolean (${bodyText(value)})`,
      );
    });
  });
}

/** A 200 answer that is not what the API documents: not retried, and nothing of it is cached. */
function malformed(what: string, where: SheetLocation, problem: string): UpstreamError {
  const place = `spreadsheet "${where.spreadsheet_id}", sheet "${where.sheet_name}"${where.range ? `, range ${where.range}` : ''}`;
  return new UpstreamError(
    `Google Sheets ${what} of ${place} got a malformed answer: ${problem}`,
    undefined,
    {
      retryable: false,
    },
  );
}

/**
 * What is wrong with a 200 answer of `spreadsheets.batchUpdate`, or `undefined` when it is the
 * documented `BatchUpdateSpreadsheetResponse`: this `spreadsheetId` and `replies`, one per request.
 */
function batchUpdateProblem(data: unknown, spreadsheetId: string, requests: number): string | undefined {
  if (!isRecord(data)) return `the answer is not a BatchUpdateSpreadsheetResponse (${bodyText(data)})`;
  if (data.spreadsheetId !== spreadsheetId)
    return `spreadsheetId is ${bodyText(data.spreadsheetId)}, not "${spreadsheetId}"`;
  const { replies } = data;
  if (!Array.isArray(replies) || replies.length !== requests) {
    const got = Array.isArray(replies) ? `${replies.length} replies` : `no replies (${bodyText(replies)})`;
    return `${got} for ${requests} requests`;
  }
  return undefined;
}

/**
 * What is wrong with a 200 answer of `values.update`, or `undefined` when it is the documented
 * `UpdateValuesResponse`: this `spreadsheetId` and an `updatedRange`.
 */
function updateValuesProblem(data: unknown, spreadsheetId: string): string | undefined {
  if (!isRecord(data)) return `the answer is not an UpdateValuesResponse (${bodyText(data)})`;
  if (data.spreadsheetId !== spreadsheetId)
    return `spreadsheetId is ${bodyText(data.spreadsheetId)}, not "${spreadsheetId}"`;
  if (typeof data.updatedRange !== 'string') return `no updatedRange (${bodyText(data.updatedRange)})`;
  return undefined;
}

/**
 * A 200 answer to a change that is not what the API documents: whether the change was applied is
 * unknown, so it is not sent again (not retryable) and the caller is told to check the sheet.
 */
function untrusted(what: string, where: SheetLocation, problem: string): UpstreamError {
  const place = `spreadsheet "${where.spreadsheet_id}", sheet "${where.sheet_name}"${where.range ? `, range ${where.range}` : ''}`;
  return new UpstreamError(
    `Google Sheets ${what} of ${place} got a malformed answer: ${problem}. The outcome is unknown: ` +
      'the change may or may not have been applied and was not sent again; check the sheet before retrying.',
    undefined,
    { retryable: false },
  );
}

/** A short view of a body or value for messages (gaxios hands over a body that is not JSON as text). */
function bodyText(body: unknown): string {
  if (body === '' || body === undefined) return 'empty';
  const text = `${typeof body === 'string' ? 'text ' : ''}${JSON.stringify(body)}`;
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
