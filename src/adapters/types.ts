/**
 * The adapter interfaces: how the engine reaches storage, spreadsheets, file stores and chat.
 * Every method is async (or may return a value directly), takes an optional `AbortSignal`, and uses
 * plain data only, so adapters run on Node and on edge runtimes alike.
 * @module
 */

import type { RunSummary } from '../schema/index.js';

/** Options every adapter call accepts. */
export interface CallOptions {
  /** Cancels the call; adapters pass it on to their I/O. */
  signal?: AbortSignal;
  /**
   * The step execution's idempotency key (`<run id>:<step name>[:<item>]`, the same across retries
   * and redeliveries). Adapters that cause effects use it to deduplicate: a second call with a key
   * already used returns the first call's result without repeating the effect.
   */
  idempotencyKey?: string;
}

/** A value that may be returned directly or as a promise. */
export type MaybePromise<T> = T | Promise<T>;

/** A cell value as read from or written to a sheet. Empty cells are `null` (or missing at a row's end). */
export type CellValue = string | number | boolean | null;

/** A sheet of a spreadsheet. */
export interface SheetRef {
  /** Identifier of the spreadsheet document. */
  spreadsheet_id: string;
  /** Name of the sheet inside it. */
  sheet_name: string;
}

/** A rectangular range of a sheet; zero-based, `{row: 0, col: 0}` is A1. */
export interface RangeRequest extends SheetRef {
  /** First row, zero-based. */
  row: number;
  /** First column, zero-based. */
  col: number;
  /** Number of rows; omitted: to the last row of the sheet that holds data. */
  rows?: number;
  /** Number of columns; omitted: to the last column of the sheet that holds data. */
  cols?: number;
}

/** Rows of cells read from a range. Rows may be shorter than the range (trailing empty cells left out) and trailing empty rows may be left out. */
export type CellRows = CellValue[][];

/** Rows to insert into a sheet at a position. */
export interface AppendRequest extends SheetRef {
  /** Zero-based row where the first new row goes; rows at and below it move down. */
  row: number;
  /** Zero-based column of the first value of each row. */
  col: number;
  /** The rows, written as raw values (never evaluated as formulas). */
  values: CellValue[][];
  /**
   * Optional: cells that must hold exactly these values when the rows are inserted (the last rows
   * read, so `row` is still the end of the data). When one differs, nothing is inserted and the call
   * throws a `SheetError` with code `rows_moved`, as `update` does. Adapters that cannot check cells
   * may ignore it.
   */
  expect?: CellRun[];
}

/** Values written over a range (used by `write_mode: replace`). */
export interface WriteRequest extends SheetRef {
  /** Zero-based first row. */
  row: number;
  /** Zero-based first column. */
  col: number;
  /** Rows of values; `null` clears a cell. */
  values: CellValue[][];
}

/** A run of cells on one row: `values` from zero-based `col` on. */
export interface CellRun {
  /** Zero-based row. */
  row: number;
  /** Zero-based column of the first value. */
  col: number;
  /** The cells, left to right; `null` is an empty cell. */
  values: CellValue[];
}

/**
 * One change to a sheet, applied whole or not at all (used by writes by key: update, upsert,
 * delete). Row numbers are those of the sheet before the change: the cells are written first,
 * then the rows deleted.
 */
export interface UpdateRequest extends SheetRef {
  /** Cells overwritten in place, as raw values (never evaluated as formulas); `null` empties a cell. */
  cells: CellRun[];
  /** Zero-based rows deleted whole; the rows below move up. */
  deleteRows: number[];
  /**
   * Cells that must hold exactly these values (as `read` returns them, an empty cell `null`) when
   * the change is applied. When one differs, nothing changes and the call throws a `SheetError`
   * with code `rows_moved`: another writer moved or changed the rows in between.
   */
  expect: CellRun[];
}

/**
 * Spreadsheets: where entity rows live. Required: batched range reads and row inserts.
 * A missing spreadsheet or sheet is a `SheetError` with code `sheet_not_found`.
 */
export interface SpreadsheetAdapter {
  /** Reads several ranges in one call when the backend allows; results are in request order. */
  read(ranges: readonly RangeRequest[], options?: CallOptions): MaybePromise<CellRows[]>;
  /** Inserts rows at a position, as raw values. All rows are written, or none. */
  append(request: AppendRequest, options?: CallOptions): MaybePromise<void>;
  /** Optional: overwrites values in a range (needed for `write_mode: replace`). */
  write?(request: WriteRequest, options?: CallOptions): MaybePromise<void>;
  /**
   * Optional: overwrites cells and deletes rows as one change, after checking `expect` (needed
   * for writes by key: `update`, `upsert`, `delete`). All of it is applied, or none of it.
   */
  update?(request: UpdateRequest, options?: CallOptions): MaybePromise<void>;
  /**
   * Optional: a token that changes whenever the sheet's content changes. When present, the
   * engine keeps the mapped table between reads and re-reads only when the token changes. A number
   * is a count of the sheet's changes (each `append`, `write` or `update` adds exactly one): the
   * engine then keeps its own appends in its table without reading the sheet again. Any other
   * token (a string) makes the engine read the sheet again after its own writes.
   */
  revision?(sheet: SheetRef): MaybePromise<string | number | undefined>;
}

/** Collections the storage adapter keeps. */
export type Collection =
  | 'entities'
  | 'relationships'
  | 'workflows'
  | 'applications'
  | 'scripts'
  | 'runs'
  /** Run keys: which run a key of a workflow started. */
  | 'run_keys'
  /** Trigger definitions. */
  | 'triggers'
  /** What triggers remember between ticks: a schedule's last slot, an entity's row snapshot. */
  | 'trigger_state'
  /** Submissions of delete forms: each render's one-time token, and what its delete wrote. */
  | 'form_submissions'
  /** The access policy (key `policy`). */
  | 'access'
  /** Audit entries, by a key that sorts in the order they were made (storages without `appendAudit`). */
  | 'audit'
  /**
   * Versions of definitions, one per change, never changed once put: key `<kind>/<name>/<version>`
   * with the version in ten digits, so a listing sorts them (see `DefinitionHistory`).
   */
  | 'definition_versions'
  /** API keys, by the SHA-256 (hex) of the secret; `<sha256>/last_used` holds when one was last used. */
  | 'api_keys'
  /** Users, by id, with the PHC string of their password. */
  | 'users'
  /** Which user has an e-mail address: lower-case address to `{ id }`, claimed with `ifAbsent`. */
  | 'user_emails'
  /** Cookie sessions, by the SHA-256 (hex) of the token; `<sha256>/seen` holds when one was last used. */
  | 'sessions'
  /** Sign-in attempts: `<account|address>/<name>/<window>/<n>`, one slot claimed per attempt. */
  | 'sign_in_attempts'
  /**
   * OpenID Connect sign-ins under way, by the SHA-256 (hex) of their `state`: the PKCE verifier,
   * the nonce, the redirect URI and where to go next, for 10 minutes; deleted when the provider
   * sends the browser back (so any process on the database can finish the sign-in, and only once).
   */
  | 'oidc_flows'
  /** Waits of `wait` steps, by id: what each waits for, and whether it has ended. */
  | 'waits'
  /** The waits not ended yet: `<kind>/<id>` to `{ id, due_at }` (deleted when one ends). */
  | 'open_waits'
  /** Answers of waits: `<wait id>/<nnn>`, one slot claimed with `ifAbsent` per decision, event or timeout. */
  | 'wait_slots'
  /** Events sent, kept for waits that begin later: `<event>/<sent at>/<id>`. */
  | 'wait_events'
  /** Links for outside approvers, by the SHA-256 (hex) of their token; `<sha256>/used` once used. */
  | 'wait_links';

/** Options of {@link StorageAdapter.put}. */
export interface PutOptions extends CallOptions {
  /** Write only when the key is absent; `put` then returns false if it was present. */
  ifAbsent?: boolean;
}

/**
 * Storage of definitions, scripts and run records: a small key-value store of JSON values by
 * collection. Values are plain JSON data; an adapter must not share them with callers (copy them).
 */
export interface StorageAdapter {
  /** The value under `key`, or `undefined`. */
  get<T = unknown>(collection: Collection, key: string, options?: CallOptions): MaybePromise<T | undefined>;
  /**
   * Optional: the JSON text of the value under `key` (what {@link StorageAdapter.get} would parse and
   * return), or `undefined` when there is none or the text alone does not give the value. Lets the HTTP
   * API answer with a stored run record without parsing and serializing it again.
   */
  getText?(collection: Collection, key: string, options?: CallOptions): MaybePromise<string | undefined>;
  /**
   * Stores `value` under `key`. Returns false when `ifAbsent` is set and the key exists, or when the
   * adapter keeps that key for another owner and leaves it as it is (`PostgresStorage` does for the
   * record of a run its queue executes).
   */
  put(collection: Collection, key: string, value: unknown, options?: PutOptions): MaybePromise<boolean>;
  /** Removes `key`; returns whether it existed. */
  delete(collection: Collection, key: string, options?: CallOptions): MaybePromise<boolean>;
  /** Every entry of a collection, ordered by key. */
  list<T = unknown>(collection: Collection, options?: CallOptions): MaybePromise<{ key: string; value: T }[]>;
  /**
   * Optional: one page of the runs stored (collection `runs`) as summaries, newest first by
   * `started_at` then by id (descending). Only records with a valid ISO `started_at` are listed, and
   * with `started_after` or `started_before` only those started at or after the one and before the
   * other (`checkRunQuery` in `run-list.ts` reads them; older adapters that ignore them still work,
   * the engine then drops the runs outside the window from their pages). A
   * summary holds what `runSummary` (in `run-list.ts`) takes from the record, never its input,
   * output or steps: an adapter keeps it beside the record when the record is put, so a listing
   * reads no record. Pass a page's `next` as `after` to get the page that follows; `next` is absent
   * on the last page.
   * @throws {@link ValidationError} when `limit` is not a whole number from 1 to 1000, `after` is
   *   not a `next` this method returned, or a bound is no time.
   */
  listRuns?(query: RunQuery, options?: CallOptions): MaybePromise<RunPage<RunSummary>>;
  /**
   * Optional: appends one entry to the audit log and returns it with its `id`, a string that sorts
   * (as text) after the id of every entry appended before it (see `audit-list.ts` for the form).
   * An entry is never changed or deleted once appended. Without this method (and
   * {@link StorageAdapter.listAudit}), `AuditLog` keeps entries in collection `audit` instead.
   */
  appendAudit?(entry: AuditRecord & { at: string }, options?: CallOptions): MaybePromise<AuditEntry>;
  /**
   * Optional: one page of the audit log, oldest first (in append order), filtered by `action`,
   * `principal` (id) and `resource` when given. Pass a page's `next` as `after` for the page that
   * follows; `next` is absent on the last page. The query is checked by `AuditLog.list` first.
   */
  listAudit?(
    query: Required<Pick<AuditQuery, 'limit'>> & AuditQuery,
    options?: CallOptions,
  ): MaybePromise<AuditPage>;
  /**
   * Optional: true when no other process can use this storage (an embedded database directory,
   * locked while open). A run not on a queue that such storage holds as `running` when an engine
   * opens it can then be executing nowhere, and is marked `interrupted` also by an engine with a
   * queue (which otherwise leaves the runs it finds alone: another process may be running them).
   */
  readonly exclusive?: boolean;
}

/** Filters and paging of {@link StorageAdapter.listRuns}. */
export interface RunQuery {
  /** Only runs of this workflow. */
  workflow?: string;
  /** Only runs with this status, e.g. `running`. */
  status?: string;
  /** Only runs started at or after this ISO date or date-time. */
  started_after?: string;
  /** Only runs started before this ISO date or date-time. */
  started_before?: string;
  /** Most runs in the page, 1 to 1000. */
  limit: number;
  /** The `next` of the previous page. */
  after?: string;
}

/** A page of {@link StorageAdapter.listRuns}. */
export interface RunPage<T = RunSummary> {
  /** Runs, newest first. */
  runs: T[];
  /** Where the next page starts (pass it as `after`); absent on the last page. */
  next?: string;
}

/**
 * One entry of the audit log: who did what to which resource, and how it came out. Entries hold
 * names, ids, counts and codes, never cell values or secrets: that is for the code recording them.
 */
export interface AuditEntry {
  /** Opaque; sorts (as text) in the order entries were appended. Pass it as `after` to list those after it. */
  id: string;
  /** When the entry was appended (ISO 8601, UTC). Informative: entries are ordered by `id`, not by it. */
  at: string;
  /** Who acted: a principal's id and kind (never its roles, email or a secret). */
  principal: { id: string; kind: 'user' | 'key' | 'service' };
  /** What was done, e.g. `definition.put`, `run.start`, `run.cancel`, `access.put`, `rows.write`. */
  action: string;
  /** What it was done to, e.g. `workflow:invoice`, `entity:customers`, `run:<id>`, `access:policy`. */
  resource: string;
  /** Whether it was done (`success`), refused for want of a permission (`denied`) or failed. */
  outcome: 'success' | 'failure' | 'denied';
  /** More about it as JSON (a mode, a count, an error code): at most about 4,000 characters of JSON. */
  detail?: Record<string, unknown>;
}

/** An audit entry to append: the log gives it its `id` and `at`. */
export type AuditRecord = Omit<AuditEntry, 'id' | 'at'>;

/** Filters and paging of the audit log. Filters compare exactly; given together, all must match. */
export interface AuditQuery {
  /** The `next` of the previous page (or any entry's `id`): only entries appended after it. */
  after?: string;
  /** Most entries in the page, 1 to 1000. @default 100 */
  limit?: number;
  /** Only entries of this action, e.g. `run.start`. */
  action?: string;
  /** Only entries of the principal with this id. */
  principal?: string;
  /** Only entries about this resource, e.g. `workflow:invoice`. */
  resource?: string;
}

/** A page of the audit log. */
export interface AuditPage {
  /** Entries, oldest first. */
  entries: AuditEntry[];
  /** Where the next page starts (pass it as `after`); absent on the last page. */
  next?: string;
}

/** A file to store. */
export interface FileInput {
  /** File name, without folders. */
  name: string;
  /** Folder to store into; the store's meaning (a Drive folder id, a sub-folder). */
  folder?: string;
  /** MIME type, e.g. `application/pdf`. */
  contentType: string;
  /** The bytes. */
  data: Uint8Array;
}

/** A stored file. */
export interface StoredFile {
  /** Address that opens the file (`file_url` of `upload_file`). */
  url: string;
}

/** A file store: where `upload_file` puts files. */
export interface FileStore {
  /** Stores a file and returns where it can be opened. */
  put(file: FileInput, options?: CallOptions): MaybePromise<StoredFile>;
  /** Optional: reads a stored file back by its url. */
  get?(
    url: string,
    options?: CallOptions,
  ): MaybePromise<{ data: Uint8Array; contentType: string } | undefined>;
}

/** A chat message. */
export interface ChatMessage {
  /** Channel name or id. */
  channel: string;
  /** Text of the message. */
  message: string;
}

/** Chat: where `send_message` posts. */
export interface ChatAdapter {
  /** Posts a message; resolves with the backend's id of it, when it has one. */
  send(message: ChatMessage, options?: CallOptions): MaybePromise<{ id?: string }>;
}
