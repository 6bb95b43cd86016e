import { sql, type Kysely, type RawBuilder } from 'kysely';
import { StorageError } from '../../errors/storage-error.js';
import { ValidationError } from '../../errors/index.js';
import { checkRunQuery, runColumns, runCursor, runSummary } from '../run-list.js';
import { auditId, type CheckedAuditQuery } from '../audit-list.js';
import type {
  AuditEntry,
  AuditPage,
  AuditRecord,
  CallOptions,
  Collection,
  PutOptions,
  RunPage,
  RunQuery,
  StorageAdapter,
} from '../types.js';
import type { RunSummary } from '../../schema/index.js';
import { TAKES_JSON_TEXT, toJson } from '../json-text.js';
import type { Tables } from './tables.js';
import { holdsLoneSurrogate } from '../../schema/well-formed.js';

/**
 * Storage in a Postgres schema (server or PGlite), made by `openPostgres`: run records in the `runs`
 * table (workflow, status and times copied into columns for listing, and the run's summary into a
 * column of its own), every other collection in `definitions`. Values travel as JSON text and come
 * back parsed anew, so callers never share them.
 */
export class PostgresStorage implements StorageAdapter {
  /** Its `put` writes JSON text as it is (see `TAKES_JSON_TEXT`). @internal */
  static readonly [TAKES_JSON_TEXT] = true;
  readonly #db: Kysely<Tables>;
  readonly #where: string;
  readonly #isClosed: () => boolean;

  /** True on an embedded directory, which is locked to this process while open. */
  readonly exclusive: boolean;

  /**
   * @internal Made by `openPostgres`: `db` is scoped to the schema; `isClosed` tells when it was
   * closed; `exclusive` when it is an embedded directory.
   */
  constructor(db: Kysely<Tables>, where: string, isClosed: () => boolean, exclusive = false) {
    this.#db = db;
    this.#where = where;
    this.#isClosed = isClosed;
    this.exclusive = exclusive;
  }

  /** The value under `key`, or `undefined`. */
  async get<T = unknown>(collection: Collection, key: string, options?: CallOptions): Promise<T | undefined> {
    if (unstorableText(key)) return undefined;
    if (collection !== 'runs') {
      const text = await this.getText(collection, key, options);
      return text === undefined ? undefined : (JSON.parse(text) as T);
    }
    const row = await this.#open()
      .selectFrom('runs')
      .select([RECORD_TEXT, PROGRESS_TEXT, RUN_STATUS])
      .where('id', '=', key)
      .executeTakeFirst(abortable(options));
    return row === undefined ? undefined : (parseRecord(row) as T);
  }

  /**
   * The stored JSON text under `key`. For a run record, `undefined` when the record alone is not the
   * run as {@link PostgresStorage.get} gives it (a durable run whose progress or status columns lead).
   */
  async getText(collection: Collection, key: string, options?: CallOptions): Promise<string | undefined> {
    if (unstorableText(key)) return undefined;
    if (collection !== 'runs') {
      const row = await this.#open()
        .selectFrom('definitions')
        .select(VALUE_TEXT)
        .where('collection', '=', collection)
        .where('key', '=', key)
        .executeTakeFirst(abortable(options));
      return row?.json;
    }
    const row = await this.#open()
      .selectFrom('runs')
      .select([RECORD_TEXT, RUN_STATUS])
      .where('id', '=', key)
      .where('progress', 'is', null)
      .executeTakeFirst(abortable(options));
    if (row === undefined) return undefined;
    // A durable run a worker took is `running` in its column before its record says so. The record's
    // status is read here, not by `record->>'status'`: Postgres would decode every string of the
    // record, and refuses one holding U+0000 or half of a surrogate pair.
    if (row.status === 'running' && (JSON.parse(row.json) as { status?: unknown }).status === 'queued')
      return undefined;
    return row.json;
  }

  /**
   * Stores a JSON copy of `value`; a run record's workflow, status and times also go into their
   * columns, and its summary (`runSummary`) into `summary`.
   * A durable run's row belongs to its queue (its state, events and jobs go with the record): `put`
   * leaves it as it is and returns false, so an engine without the queue never rewrites a run in flight.
   * @throws a `ValidationError` naming `key` when it holds U+0000 or half of a surrogate pair, which
   *   Postgres text cannot hold.
   */
  async put(collection: Collection, key: string, value: unknown, options: PutOptions = {}): Promise<boolean> {
    if (unstorableText(key))
      throw new ValidationError([
        {
          code: 'invalid_key',
          path: 'key',
          message: 'a stored key must not hold U+0000 or half of a surrogate pair (Postgres text cannot)',
        },
      ]);
    const text = toJson(value) ?? 'null';
    const json = sql<string>`${text}::text::json`;
    const db = this.#open();
    if (collection === 'runs') {
      const summary = runSummary(key, value, text);
      const columns = runColumns(summary);
      const row = {
        id: key,
        workflow: columns.workflow,
        status: columns.status,
        started_at: time(columns.started_at),
        finished_at: time(columns.finished_at),
        record: json,
        summary: summaryJson(summary),
      };
      const result = await db
        .insertInto('runs')
        .values(row)
        .onConflict((c) =>
          options.ifAbsent
            ? c.column('id').doNothing()
            : c
                .column('id')
                .doUpdateSet((eb) => ({
                  workflow: eb.ref('excluded.workflow'),
                  status: eb.ref('excluded.status'),
                  started_at: eb.ref('excluded.started_at'),
                  finished_at: eb.ref('excluded.finished_at'),
                  record: eb.ref('excluded.record'),
                  summary: eb.ref('excluded.summary'),
                  progress: null,
                }))
                .where('runs.durable', 'is', null),
        )
        .executeTakeFirst(abortable(options));
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    }
    const result = await db
      .insertInto('definitions')
      .values({ collection, key, value: json })
      .onConflict((c) =>
        options.ifAbsent
          ? c.columns(['collection', 'key']).doNothing()
          : c
              .columns(['collection', 'key'])
              .doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), updated_at: sql`now()` })),
      )
      .executeTakeFirst(abortable(options));
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Removes `key`; returns whether it existed. */
  async delete(collection: Collection, key: string, options?: CallOptions): Promise<boolean> {
    if (unstorableText(key)) return false;
    const query =
      collection === 'runs'
        ? this.#open().deleteFrom('runs').where('id', '=', key)
        : this.#open().deleteFrom('definitions').where('collection', '=', collection).where('key', '=', key);
    const result = await query.executeTakeFirst(abortable(options));
    return Number(result.numDeletedRows) > 0;
  }

  /** Every entry of a collection, ordered by key (by code point). */
  async list<T = unknown>(
    collection: Collection,
    options?: CallOptions,
  ): Promise<{ key: string; value: T }[]> {
    const rows =
      collection === 'runs'
        ? await this.#open()
            .selectFrom('runs')
            .select(['id as key', RECORD_TEXT, PROGRESS_TEXT, RUN_STATUS])
            .orderBy('id')
            .execute(abortable(options))
        : await this.#open()
            .selectFrom('definitions')
            .select(['key', VALUE_TEXT, NO_PROGRESS, NO_STATUS])
            .where('collection', '=', collection)
            .orderBy('key')
            .execute(abortable(options));
    return rows.map((row) => ({ key: row.key, value: parseRecord(row) as T }));
  }

  /**
   * One page of run summaries, newest first by `started_at` then id; see {@link StorageAdapter.listRuns}.
   * Reads the `summary` column, never a record (but that of a run written before the column was).
   */
  async listRuns(query: RunQuery, options?: CallOptions): Promise<RunPage<RunSummary>> {
    const { workflow, status, limit, after, started_after, started_before } = checkRunQuery(query);
    // No stored run holds U+0000 in its workflow or status (the columns are text).
    if (unstorableText(workflow) || unstorableText(status)) return { runs: [] };
    let select = this.#open()
      .selectFrom('runs')
      .select([
        'id',
        RUN_STATUS,
        sql<string | null>`${sql.ref('summary')}::text`.as('summary'),
        sql<string | null>`case when ${sql.ref('summary')} is null then ${sql.ref('record')}::text end`.as(
          'json',
        ),
      ])
      .where('started_at', 'is not', null);
    if (workflow !== undefined) select = select.where('workflow', '=', workflow);
    if (status !== undefined) select = select.where('status', '=', status);
    // The bounds narrow the index range read (each index ends with `started_at, id`).
    if (started_after !== undefined) select = select.where('started_at', '>=', time(started_after));
    if (started_before !== undefined) select = select.where('started_at', '<', time(started_before));
    if (after) {
      // An id cut at U+0000 (no stored id holds one) and `<=`: the same runs come before it.
      const nul = after.id.indexOf('\u0000');
      const id = nul < 0 ? after.id : after.id.slice(0, nul);
      select = select.where(({ eb, refTuple, tuple }) =>
        eb(refTuple('started_at', 'id'), nul < 0 ? '<' : '<=', tuple(time(after.started_at), id)),
      );
    }
    const rows = await select
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute(abortable(options));
    const runs = rows.slice(0, limit).map(parseSummary);
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    const lastStarted = last ? runColumns(runs[limit - 1]).started_at : null;
    return { runs, ...(last && lastStarted ? { next: runCursor(lastStarted, last.id) } : {}) };
  }

  /**
   * Appends an entry to the `audit_log` table; its id is its `seq` zero-padded. See
   * {@link StorageAdapter.appendAudit}.
   * @throws a `ValidationError` naming `principal.id`, `action` or `resource` when it holds U+0000 or
   *   half of a surrogate pair, which Postgres text cannot hold.
   */
  async appendAudit(entry: AuditRecord & { at: string }, options?: CallOptions): Promise<AuditEntry> {
    const columns = { principal_id: entry.principal.id, action: entry.action, resource: entry.resource };
    for (const [path, text] of [
      ['principal.id', columns.principal_id],
      ['action', columns.action],
      ['resource', columns.resource],
    ] as const)
      if (unstorableText(text))
        throw new ValidationError([
          { code: 'invalid_text', path, message: 'must not hold U+0000 or half of a surrogate pair' },
        ]);
    const text = JSON.stringify(entry);
    const row = await this.#open()
      .insertInto('audit_log')
      .values({
        ...columns,
        at: sql<string>`${entry.at}::text::timestamptz`,
        entry: sql<string>`${text}::text::json`,
      })
      .returning(SEQ_TEXT)
      .executeTakeFirstOrThrow(abortable(options));
    return { id: auditId(row.seq_text), ...(JSON.parse(text) as AuditRecord & { at: string }) };
  }

  /**
   * One page of the audit log, oldest first by `seq`, from the index of the one filter given (or the
   * primary key); see {@link StorageAdapter.listAudit}.
   */
  async listAudit(query: CheckedAuditQuery, options?: CallOptions): Promise<AuditPage> {
    const { after, limit, action, principal, resource } = query;
    // No stored entry holds what Postgres text cannot.
    if ([action, principal, resource].some(unstorableText)) return { entries: [] };
    let select = this.#open().selectFrom('audit_log').select([SEQ_TEXT, ENTRY_TEXT]);
    if (after !== undefined) select = select.where('seq', '>', sql<string>`${after}::text::bigint`);
    if (action !== undefined) select = select.where('action', '=', action);
    if (principal !== undefined) select = select.where('principal_id', '=', principal);
    if (resource !== undefined) select = select.where('resource', '=', resource);
    const rows = await select
      .orderBy('seq')
      .limit(limit + 1)
      .execute(abortable(options));
    const entries = rows
      .slice(0, limit)
      .map((row) => ({ id: auditId(row.seq_text), ...(JSON.parse(row.json) as Omit<AuditEntry, 'id'>) }));
    return { entries, ...(rows.length > limit ? { next: entries.at(-1)!.id } : {}) };
  }

  #open(): Kysely<Tables> {
    if (this.#isClosed()) throw new StorageError('closed', `${this.#where} was closed`, this.#where);
    return this.#db;
  }
}

/** The JSON columns read back as text (then parsed here), under the name `json`. */
const RECORD_TEXT = sql<string>`${sql.ref('record')}::text`.as('json');
const VALUE_TEXT = sql<string>`${sql.ref('value')}::text`.as('json');
const PROGRESS_TEXT = sql<string | null>`${sql.ref('progress')}::text`.as('progress');
const NO_PROGRESS = sql<string | null>`null`.as('progress');
const ENTRY_TEXT = sql<string>`${sql.ref('entry')}::text`.as('json');
/**
 * An audit entry's `seq` as text (a bigint past 2^53 would lose digits as a number), named apart
 * from the column: `order by seq` would sort the text otherwise.
 */
const SEQ_TEXT = sql<string>`${sql.ref('seq')}::text`.as('seq_text');
const RUN_STATUS = sql<string | null>`${sql.ref('status')}`.as('status');
const NO_STATUS = sql<string | null>`null`.as('status');

/**
 * A stored value parsed. For a durable run, the status column (a run becomes `running` there when a
 * worker takes its first step) and the live progress (changes to step records by step name, such as
 * the counts of a `for_each` step whose items are still running) are merged into its record.
 * @internal
 */
export function parseRecord(row: { json: string; progress: string | null; status: string | null }): unknown {
  const value = JSON.parse(row.json) as { steps?: { name: string }[]; status?: unknown };
  if (row.status === 'running' && value?.status === 'queued') value.status = 'running';
  if (row.progress === null || !Array.isArray(value?.steps)) return value;
  const progress = JSON.parse(row.progress) as Record<string, object> | null;
  if (progress === null) return value;
  for (const step of value.steps)
    if (Object.hasOwn(progress, step.name)) Object.assign(step, progress[step.name]);
  return value;
}

/**
 * A listed run's summary: its `summary` column, or for a run written before that column was, its
 * record's. A durable run a worker took is `running` in its status column before its record (and
 * summary) says so, as {@link parseRecord} reads it.
 */
function parseSummary(row: {
  id: string;
  status: string | null;
  summary: string | null;
  json: string | null;
}): RunSummary {
  const summary: RunSummary =
    row.summary === null
      ? runSummary(row.id, JSON.parse(row.json!))
      : { id: row.id, ...(JSON.parse(row.summary) as Omit<RunSummary, 'id'>) };
  if (row.status === 'running' && summary.status === 'queued') summary.status = 'running';
  return summary;
}

/** A run's summary as a `json` parameter sent as text (without its id: the row's key holds it). @internal */
export function summaryJson(summary: RunSummary): RawBuilder<string> {
  return sql<string>`${JSON.stringify({ ...summary, id: undefined })}::text::json`;
}

/** A listing time (ISO) as a `timestamptz` parameter sent as text. */
function time(iso: string | null): RawBuilder<string | null> {
  return sql<string | null>`${iso}::text::timestamptz`;
}

/**
 * Whether a key or filter holds what Postgres text cannot: U+0000 (sending it would fail the
 * statement) or half of a surrogate pair (it would arrive as U+FFFD, so two keys would name one
 * row). Nothing stored matches it. @internal
 */
export function unstorableText(text: string | undefined): boolean {
  return text !== undefined && (text.includes('\u0000') || holdsLoneSurrogate(text));
}

function abortable(options: CallOptions | undefined): { signal: AbortSignal } | undefined {
  return options?.signal ? { signal: options.signal } : undefined;
}
