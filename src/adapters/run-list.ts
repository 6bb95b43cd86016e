/**
 * What storage adapters read from a run record to list runs, the summary a listing answers with,
 * and the paging of `StorageAdapter.listRuns`, shared so every adapter lists, filters and pages
 * runs alike.
 * @module
 */
import { ValidationError, type Issue } from '../errors/index.js';
import type { RunSummary } from '../schema/index.js';
import { toJson } from './json-text.js';
import type { RunPage, RunQuery } from './types.js';

/** The fields of a run record that listing uses; `null` when missing or not of the right kind. @internal */
export interface RunColumns {
  workflow: string | null;
  status: string | null;
  /** ISO time with milliseconds (`toISOString`), or null when missing or not a time of years 1 to 9999. */
  started_at: string | null;
  /** Same form as `started_at`. */
  finished_at: string | null;
}

/** A checked {@link RunQuery}. @internal */
export interface CheckedRunQuery {
  workflow?: string;
  status?: string;
  /** Only runs started at or after this time (an ISO time as {@link RunColumns} holds it). */
  started_after?: string;
  /** Only runs started before this time (same form). */
  started_before?: string;
  limit: number;
  /** The last run of the previous page. */
  after?: { started_at: string; id: string };
}

/** Most runs in one page. */
const MAX_LIMIT = 1000;
const CURSOR_SEPARATOR = '~';
const CANONICAL_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The listing fields of a stored run record (any JSON value may be stored under `runs`). @internal */
export function runColumns(value: unknown): RunColumns {
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  return {
    workflow: typeof record.workflow === 'string' ? record.workflow : null,
    status: typeof record.status === 'string' ? record.status : null,
    started_at: isoTime(record.started_at),
    finished_at: isoTime(record.finished_at),
  };
}

/**
 * What a listing shows of the run stored under `id` as `value` (see {@link RunSummary}): its fields
 * as the stored JSON holds them, without its input, output or steps. Made when a run is written,
 * so a listing reads no record. `json` is `value`'s JSON text, when the caller made it already;
 * it is read only for a value that is not a plain object.
 * @internal
 */
export function runSummary(id: string, value: unknown, json?: string): RunSummary {
  const record = jsonFields(value, json);
  const error = record.error as { code?: unknown; message?: unknown } | null | undefined;
  const summary = {
    id,
    workflow: record.workflow,
    status: record.status,
    started_at: record.started_at,
    finished_at: record.finished_at ?? null,
    error: typeof error === 'object' && error !== null ? { code: error.code, message: error.message } : null,
    ...(typeof record.parent_run_id === 'string' ? { parent_run_id: record.parent_run_id } : {}),
    ...(typeof record.initiator === 'object' && record.initiator !== null
      ? { initiator: record.initiator }
      : {}),
  };
  // Any JSON may be stored under `runs`: a value that is no run record is listed as it is.
  return summary as RunSummary;
}

/** The fields of a stored value a summary reads, as its JSON text holds them. */
function jsonFields(value: unknown, json: string | undefined): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !('toJSON' in value)) {
    // A plain object: each field as JSON gives it (a string as it is, anything else through JSON).
    const record = value as Record<string, unknown>;
    const fields: Record<string, unknown> = {};
    for (const name of SUMMARY_FIELDS) {
      const field = record[name];
      fields[name] =
        typeof field === 'string' || field === undefined || field === null
          ? field
          : JSON.parse(JSON.stringify(field) ?? 'null');
    }
    return fields;
  }
  const text = json ?? toJson(value);
  const parsed: unknown = text === undefined ? undefined : JSON.parse(text);
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}

/** The fields of a run record its summary is made of (besides the id, which is its key). */
const SUMMARY_FIELDS = [
  'workflow',
  'status',
  'started_at',
  'finished_at',
  'error',
  'parent_run_id',
  'initiator',
];

/**
 * The query with `after` decoded. @internal
 * @throws {@link ValidationError} naming every field that is wrong.
 */
export function checkRunQuery(query: RunQuery): CheckedRunQuery {
  const issues: Issue[] = [];
  const { workflow, status, limit, after, started_after, started_before } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    issues.push({
      code: 'invalid_limit',
      path: 'limit',
      message: `must be a whole number from 1 to ${MAX_LIMIT}`,
    });
  for (const [path, value] of [
    ['workflow', workflow],
    ['status', status],
  ] as const)
    if (value !== undefined && typeof value !== 'string')
      issues.push({ code: 'invalid_type', path, message: 'must be a string' });
  const bounds: { started_after?: string; started_before?: string } = {};
  for (const [path, value] of [
    ['started_after', started_after],
    ['started_before', started_before],
  ] as const) {
    if (value === undefined) continue;
    const at = isoTime(value);
    if (at === null)
      issues.push({
        code: 'invalid_time',
        path,
        message: 'must be an ISO date or date-time within years 1 to 9999, such as 2026-01-31T09:00:00Z',
      });
    else bounds[path] = at;
  }
  const cursor = after === undefined ? undefined : decodeCursor(after);
  if (after !== undefined && !cursor)
    issues.push({ code: 'invalid_cursor', path: 'after', message: 'must be the `next` of a previous page' });
  if (issues.length > 0) throw new ValidationError(issues);
  return {
    limit,
    ...(workflow === undefined ? {} : { workflow }),
    ...(status === undefined ? {} : { status }),
    ...bounds,
    ...(cursor ? { after: cursor } : {}),
  };
}

/**
 * One page of run records out of all of them, newest first by `started_at` then id: what a storage
 * without an index of its own answers to {@link StorageAdapter.listRuns}. @internal
 */
export function pageOfRuns<T>(entries: Iterable<{ key: string; value: T }>, query: RunQuery): RunPage<T> {
  const { workflow, status, limit, after, started_after, started_before } = checkRunQuery(query);
  const listed: { id: string; started_at: string; value: T }[] = [];
  for (const { key: id, value } of entries) {
    const columns = runColumns(value);
    if (columns.started_at === null) continue;
    if (workflow !== undefined && columns.workflow !== workflow) continue;
    if (status !== undefined && columns.status !== status) continue;
    // Times of one form (`toISOString`) compare as text.
    if (started_after !== undefined && columns.started_at < started_after) continue;
    if (started_before !== undefined && columns.started_at >= started_before) continue;
    if (after && !olderThan([columns.started_at, id], [after.started_at, after.id])) continue;
    listed.push({ id, started_at: columns.started_at, value });
  }
  listed.sort((a, b) => (olderThan([a.started_at, a.id], [b.started_at, b.id]) ? 1 : -1));
  const page = listed.slice(0, limit);
  const last = page.at(-1);
  return {
    runs: page.map((run) => run.value),
    ...(listed.length > limit && last ? { next: runCursor(last.started_at, last.id) } : {}),
  };
}

/**
 * Whether a run is in the query's time window, or undefined when the query gives no bounds (checked
 * ones: see {@link checkRunQuery}). @internal
 */
export function runWindow(query: RunQuery): ((run: { started_at?: unknown }) => boolean) | undefined {
  if (query.started_after === undefined && query.started_before === undefined) return undefined;
  const from = isoTime(query.started_after);
  const to = isoTime(query.started_before);
  return (run) => {
    const at = isoTime(run.started_at);
    return at !== null && (from === null || at >= from) && (to === null || at < to);
  };
}

/** Whether run `a` comes after run `b` in a listing (older, or as old with a smaller id). */
function olderThan(a: [string, string], b: [string, string]): boolean {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}

/** The `next` of a page whose last run is `id`, started at `started_at` (a {@link RunColumns} time). @internal */
export function runCursor(started_at: string, id: string): string {
  return `${started_at}${CURSOR_SEPARATOR}${id}`;
}

function decodeCursor(after: unknown): { started_at: string; id: string } | undefined {
  if (typeof after !== 'string') return undefined;
  const at = after.indexOf(CURSOR_SEPARATOR);
  const started_at = after.slice(0, at);
  if (at < 0 || !CANONICAL_ISO.test(started_at) || isoTime(started_at) !== started_at) return undefined;
  return { started_at, id: after.slice(at + 1) };
}

/** The time as `toISOString` gives it, when it is one within years 1 to 9999 (what Postgres and JSON both hold). */
function isoTime(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  const iso = new Date(ms).toISOString();
  return /^(?!0000)\d{4}-/.test(iso) ? iso : null;
}
