/**
 * The durable run queue of `openPostgres`: one row of the table `step_jobs` per step job, in the
 * stepwire schema. A step's commit is one statement, and so one transaction: it writes the run
 * (guarded by the version it was executed on), appends its events, inserts the jobs it makes ready,
 * deletes its own job and, when the worker has a free slot for it, inserts the next step's job
 * already leased to that worker, its `step.started` logged with it. Only when another process
 * changed the run meanwhile does the commit lock the run's row and decide again. LISTEN/NOTIFY
 * wakes the workers and the processes waiting on a run (the notification carries the run's new
 * events), so a chain of steps never waits a poll. Workers fetch as many jobs as they have free
 * slots in one statement (jobs whose lease lapsed among them) and renew the leases of all the jobs
 * they hold in one statement.
 * @module
 */
import { CompiledQuery, sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { StepwireError } from '../../errors/index.js';
import type {
  Delivery,
  DurableRun,
  EnqueuedJob,
  ItemResult,
  LoggedEvent,
  LoggedEvents,
  QueueWorker,
  QueueWorkOptions,
  RunChange,
  RunQueue,
  RunState,
  StateChange,
  StepJob,
} from '../queue.js';
import type { Connection } from './connect.js';
import type { QueueJobsPage, QueueJobState } from '../queue-jobs.js';
import type { Tables } from './tables.js';
import { runColumns, runSummary } from '../run-list.js';
import { unstorableText } from './storage.js';

export type { QueueWorker } from '../queue.js';

/** Options of {@link PostgresQueue.work}. */
export type WorkOptions = QueueWorkOptions;

/** Timing of the queue; the defaults suit production, tests shorten them. */
export interface QueueTiming {
  /**
   * A worker renews its lease on a step every half of this; a step whose worker died is delivered
   * again once its lease (this long) lapses, at the next fetch of any worker (within `pollSeconds`).
   * @default 10
   */
  heartbeatSeconds?: number;
  /** Kept for compatibility: lapsed leases are found by the workers' fetches. @default 2 */
  monitorSeconds?: number;
  /** How often an idle worker looks for jobs when no notification came, in seconds (at least 0.5). @default 2 */
  pollSeconds?: number;
}

/**
 * The durable run queue on the database `openPostgres` opened: pass it as `new Engine({ storage,
 * queue })`. Steps then execute in every process that calls `engine.work()`.
 */
export interface PostgresQueue extends RunQueue {
  /** Stops the queue's own work (workers, listeners); `close()` of the database calls it. @internal */
  close(): Promise<void>;
}

/** How many times a step is delivered again after its worker died, before the run fails. @internal */
export const MAX_REDELIVERIES = 8;

/** How long a failed job is kept for the console before it is deleted, in days. */
const FAILED_KEPT_DAYS = 14;

/** A job as a worker holds it: its row's id, its step, and the delivery its lease belongs to. */
interface Job {
  id: string;
  data: StepJob;
  /** Deliveries before this one (0 on the first). */
  retryCount: number;
}

/** The queue of a database, in its schema's `step_jobs` table. @internal */
export function postgresQueue(
  connection: Connection,
  schema: string,
  scoped: Kysely<Tables>,
  timing: QueueTiming = {},
  prepared = true,
): PostgresQueue {
  return new TableQueue(connection, schema, scoped, timing, prepared);
}

/** One job of a change, as the statement that enqueues it reads it. */
interface JobRow {
  j: StepJob;
  /** Delay in ms. */
  d: number;
  /** Set on the job handed to the committing worker: inserted leased to it. */
  h: boolean;
}

/** What a run's write statement wrote: the run's new version, the handed job's id, and its notification. */
interface Written {
  version: string;
  handed: string | null;
  /** The record's JSON text as written. */
  record: string;
  /** The run's status as written (null for a record with none). */
  status: string | null;
  /** The run's scheduling state's JSON text as written. */
  state: string;
  /** The run's notification (the statement sent it, when it fits in one). */
  notice: string;
}

/**
 * A run's write guarded by the version it was executed on (see `RunQueue.commit`); none under its
 * lock or for a new run (`insert`).
 */
interface GuardedWrite {
  id: string;
  change: RunChange;
  version?: number | undefined;
  insert?: boolean;
  held: Held | undefined;
  hand: HandOff | undefined;
}

/** Most commits written in one statement. */
const MAX_BATCH = 64;

/** The job a commit hands to a worker of this process, with the events its start logs in that commit. */
interface HandOff {
  worker: StepWorker;
  job: StepJob;
  starting: unknown[] | undefined;
}

class TableQueue implements PostgresQueue {
  readonly available = true;
  readonly #connection: Connection;
  readonly #schema: string;
  readonly #db: Kysely<Tables>;
  readonly #timing: Required<QueueTiming>;
  readonly #channel: string;
  readonly #jobsTable: RawBuilder<unknown>;
  readonly #runsTable: RawBuilder<unknown>;
  readonly #eventsTable: RawBuilder<unknown>;
  /** The statement calling the function that writes runs, their events and jobs (see `writeRunsFunction`). */
  readonly #writeRunsSql: string;
  /** Whether a step's statements go to a server as prepared statements (see `#statement`). */
  readonly #prepared: boolean;
  #listeners = new Set<(runId: string, status?: string, logged?: LoggedEvents) => void>();
  #unlisten: Promise<() => Promise<void>> | undefined;
  /** Runs a statement on the LISTEN connection at once, when that connection is up (see `listenOnPool`). */
  #direct: Direct | undefined;
  #closed = false;
  /** The workers of this process, woken when jobs become ready. */
  #workers = new Set<StepWorker>();
  #wakeTimers = new Set<ReturnType<typeof setTimeout>>();
  /** When failed jobs past their keeping were last deleted (ms). */
  #swept = 0;
  /** Notifications of commits that landed, not sent yet; and the statement sending them, when under way. */
  #pending: string[] = [];
  /** How this process's notifications begin (it told itself of them already when they come back). */
  readonly #origin = `{"o":${JSON.stringify(crypto.randomUUID().slice(0, 8))},`;
  #flushing: Promise<void> | undefined;
  /** Guarded writes waiting for the statement under way; and whether one is. */
  #batch: { write: GuardedWrite; resolve: (w: Written | undefined) => void; reject: (e: unknown) => void }[] =
    [];
  #batching = false;

  constructor(
    connection: Connection,
    schema: string,
    db: Kysely<Tables>,
    timing: QueueTiming,
    prepared: boolean,
  ) {
    this.#connection = connection;
    this.#prepared = prepared;
    this.#schema = schema;
    this.#db = db;
    this.#timing = { heartbeatSeconds: 10, monitorSeconds: 2, pollSeconds: 2, ...timing };
    this.#channel = `stepwire_${schema}_runs`;
    this.#jobsTable = sql.table(`${schema}.step_jobs`);
    this.#runsTable = sql.table(`${schema}.runs`);
    this.#eventsTable = sql.table(`${schema}.run_events`);
    this.#writeRunsSql = `select n, base, version, handed from "${schema.replaceAll('"', '""')}"."write_runs"($1, $2::int, $3::text)`;
  }

  /**
   * Runs one of the queue's own statements, those of every step. On a server, outside a
   * transaction, it goes as a prepared statement named after its text: each connection parses and
   * plans it once, where a statement sent as text is planned at every call. In a transaction, on
   * PGlite, and with `preparedStatements: false`, it goes as it is.
   */
  async #statement<R>(
    text: string,
    values: readonly unknown[],
    executor: Kysely<Tables> | Transaction<Tables> = this.#db,
  ): Promise<R[]> {
    const client = this.#connection.client;
    if (!this.#prepared || executor !== this.#db || client.kind !== 'pool')
      return (await executor.executeQuery<R>(CompiledQuery.raw(text, [...values]))).rows;
    const pool = client.pool as unknown as {
      query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{ rows: R[] }>;
    };
    return (await pool.query({ name: statementName(text), text, values })).rows;
  }

  async begin(id: string, change: RunChange): Promise<void> {
    this.#open();
    // Its first job goes to an idle worker of this process, if one is, as a commit hands on the next.
    const hand = this.#handFirst(change.jobs);
    const [written] = await this.#writeAll([{ id, change, insert: true, held: undefined, hand }]);
    if (!written) return;
    this.#announce(written.notice, { written });
    this.#adopt(hand, written);
  }

  async commit(
    id: string,
    delivery: Delivery | undefined,
    decide: (run: DurableRun) => RunChange | undefined,
    loaded?: DurableRun,
  ): Promise<RunChange | undefined> {
    this.#open();
    const held = delivery?.ref as Held | undefined;
    // No run's id holds U+0000 (Postgres text cannot): such a run does not exist.
    if (unstorableText(id)) return held ? this.#completeAlone(held) : undefined;
    // Decided on the run as loaded, written only if nothing changed it since: one statement, no lock.
    const guess = loaded?.version === undefined ? undefined : decide(loaded);
    if (guess) {
      const hand = this.#handOff(held, guess.jobs);
      const written = await this.#writeBatched({ id, change: guess, version: loaded!.version!, held, hand });
      if (written) {
        this.#announce(written.notice, { written });
        this.#settled(held, guess, hand, written);
        return guess;
      }
    }
    // Changed since (or not loaded): the run's row is read under its lock and decided again.
    let settle: (() => void) | undefined;
    const change = await this.#db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('runs')
        .select([sql<string>`record::text`.as('record'), sql<string | null>`durable::text`.as('durable')])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      const change =
        row && row.durable !== null
          ? decide({ record: JSON.parse(row.record), state: JSON.parse(row.durable) })
          : undefined;
      if (!change) {
        if (held) await this.#complete(tx, held.job);
        settle = () => this.#settled(held, undefined, undefined, undefined);
        return undefined;
      }
      const hand = this.#handOff(held, change.jobs);
      const [written] = await this.#writeAll([{ id, change, version: undefined, held, hand }], tx);
      settle = () => {
        if (written) this.#announce(written.notice, { written });
        this.#settled(held, change, hand, written);
      };
      return change;
    });
    settle?.();
    return change;
  }

  async commitState(
    id: string,
    delivery: Delivery | undefined,
    decide: (run: RunState) => StateChange | undefined,
  ): Promise<StateChange | undefined> {
    this.#open();
    const held = delivery?.ref as Held | undefined;
    if (unstorableText(id)) return held ? this.#completeAlone(held) : undefined;
    let handed: Job | undefined;
    let announce: string | undefined;
    const written = await this.#db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('runs')
        .select(['status', sql<string | null>`durable::text`.as('durable'), 'event_count'])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      const change =
        row && row.durable !== null
          ? decide({ status: row.status ?? '', state: JSON.parse(row.durable) })
          : undefined;
      if (!change) {
        if (held) await this.#complete(tx, held.job);
        return undefined;
      }
      const events = JSON.stringify(change.events);
      const results = JSON.stringify(
        change.results.map((r) => ({ ...r, logs: r.logs && r.logs.length > 0 ? r.logs : null })),
      );
      const count = Number(row!.event_count);
      const hand = this.#handOff(held, change.jobs);
      const notice = this.#notice(id, undefined, events, change.jobs, hand !== undefined);
      const result = await sql<{ handed: string | null; base: number }>`
        with updated as (
          update ${this.#runsTable} set
            durable = ${json(change.state)}, progress = ${json(change.progress ?? null)},
            event_count = ${count} + json_array_length(${events}::text::json)
          where id = ${id}
          returning ${count}::int as base
        ), logged as (
          insert into ${this.#eventsTable} (run_id, seq, event)
          select ${id}, ${count}::int + ordinality::int, value
          from json_array_elements(${events}::text::json) with ordinality
        ), kept as (
          insert into ${sql.table(`${this.#schema}.step_results`)}
            (run_id, step, item, attempt, status, output, error, logs, finished_at)
          select ${id}, r.step, r.item, r.attempts, r.status, r.output, r.error, r.logs, now()
          from json_to_recordset(${results}::text::json)
            as r(step text, item int, attempts int, status text, output json, error json, logs json)
          on conflict do nothing
        )${this.#jobsSql(id, change.jobs, hand, held)}
        select ${hand ? sql`(select id from enqueued where state = 'active')` : sql`null::text`} as handed,
          base from updated`.execute(tx);
      const written = result.rows[0];
      if (hand && written?.handed) handed = { id: written.handed, data: hand.job, retryCount: 0 };
      if (written) announce = notice(Number(written.base));
      return change;
    });
    if (announce !== undefined) this.#announce(announce);
    if (held) {
      held.completed = true;
      if (handed) {
        held.handedOff = true;
        held.worker.adopt([{ job: handed }]);
      }
    }
    return written;
  }

  async eventCounts(ids: readonly string[]): Promise<Map<string, number>> {
    const wanted = ids.filter((id) => !unstorableText(id));
    if (wanted.length === 0) return new Map();
    const rows = await this.#db
      .selectFrom('runs')
      .select(['id', 'event_count'])
      .where('id', 'in', wanted)
      .where('durable', 'is not', null)
      .execute();
    return new Map(rows.map((row) => [row.id, Number(row.event_count)]));
  }

  async items(id: string, step: string): Promise<ItemResult[]> {
    if (unstorableText(id) || unstorableText(step)) return [];
    const rows = await this.#db
      .selectFrom('step_results')
      .select([
        'item',
        'attempt',
        'status',
        sql<string | null>`output::text`.as('output'),
        sql<string | null>`error::text`.as('error'),
        sql<string | null>`logs::text`.as('logs'),
      ])
      .where('run_id', '=', id)
      .where('step', '=', step)
      .where('item', '>=', 0)
      .orderBy('item')
      .execute();
    return rows.map((row) => ({
      step,
      item: Number(row.item),
      status: row.status,
      attempts: Number(row.attempt),
      output: row.output === null ? null : JSON.parse(row.output),
      error: row.error === null ? null : JSON.parse(row.error),
      ...(row.logs === null ? {} : { logs: JSON.parse(row.logs) as string[] }),
    }));
  }

  async load(id: string, log?: unknown[]): Promise<DurableRun | undefined> {
    this.#open();
    if (unstorableText(id)) return undefined;
    if (log) return runOf(await this.#logAndLoad(id, log));
    const statement = this.#db
      .selectFrom('runs')
      .select([
        sql<string>`record::text`.as('record'),
        sql<string | null>`durable::text`.as('durable'),
        'status',
        sql<string>`xmin::text`.as('version'),
      ])
      .where('id', '=', id)
      .compile();
    const [row] = await this.#statement<NonNullable<Parameters<typeof runOf>[0]>>(
      statement.sql,
      statement.parameters,
    );
    return runOf(row);
  }

  /** Appends `events`, marks a queued run running and notifies; the run as it is then, if not ended. */
  async #logAndLoad(id: string, events: unknown[]) {
    const text = JSON.stringify(events);
    // The notification as `#notice` writes it, its status filled in by the statement.
    const { tail, sendable } = this.#noticeParts(id, 'interrupted', text, [], false);
    const before = `${this.#origin}"r":${JSON.stringify(id)},"s":`;
    const channel = sendable ? this.#channel : null;
    const statement = sql`
      with counted as (
        update ${this.#runsTable} set
          event_count = event_count + json_array_length(${text}::text::json),
          status = case when status = 'queued' then 'running' else status end
        where id = ${id} and durable is not null and status in ('queued', 'running', 'waiting')
        returning event_count - json_array_length(${text}::text::json) as base, xmin, record, durable, status
      ), logged as (
        insert into ${this.#eventsTable} (run_id, seq, event)
        select ${id}, base + ordinality::int, value
        from counted, json_array_elements(${text}::text::json) with ordinality
      )
      select record::text as record, durable::text as durable, status, xmin::text as version, base,
        case when ${channel}::text is not null then pg_notify(${channel}, ${before} ||
          coalesce(to_json(status)::text, 'null') || ',"j":0' ||
          case when ${tail ?? null}::text is null then '}' else ',"b":' || base || ${tail ?? null}::text end) end
      from counted`.compile(this.#db);
    const [row] = await this.#statement<{
      record: string;
      durable: string | null;
      status: string | null;
      version: string;
      base: number;
    }>(statement.sql, statement.parameters);
    // The statement sent the notification (the run's status is known there): this process hears it now.
    if (row) this.#announce(this.#notice(id, row.status, text, [], false)(Number(row.base)), { sent: true });
    return row;
  }

  async events(id: string, after: number): Promise<LoggedEvent[]> {
    if (unstorableText(id)) return [];
    const rows = await this.#db
      .selectFrom('run_events')
      .select(['seq', sql<string>`event::text`.as('event')])
      .where('run_id', '=', id)
      .where('seq', '>', after)
      .orderBy('seq')
      .execute();
    return rows.map((row) => ({ seq: Number(row.seq), event: JSON.parse(row.event) }));
  }

  /** The step jobs that wait, run or failed: counts and the newest `limit` of each (read-only). */
  async jobs(limit: number): Promise<QueueJobsPage> {
    this.#open();
    const state = sql<QueueJobState>`case when state = 'ready' and start_after > now() then 'delayed'
      when state = 'ready' then 'waiting' else state end`;
    const counts = await sql<{ state: QueueJobState; count: string }>`
      select ${state} as state, count(*)::text as count from ${this.#jobsTable} group by 1`.execute(this.#db);
    const rows = await sql<{
      id: string;
      state: QueueJobState;
      data: string;
      retries: number;
      created: string;
      start_after: string;
      started: string | null;
    }>`
      select id::text as id, state, data, retries, created, start_after, started from (
        select id, ${state} as state, data::text as data, greatest(deliveries - 1, 0) as retries,
          created_at as created, start_after, started_at as started,
          row_number() over (partition by ${state} order by created_at desc, id desc) as place
        from ${this.#jobsTable}
      ) newest where place <= ${limit} order by created desc, id desc`.execute(this.#db);
    const iso = (value: unknown) => new Date(value as string).toISOString();
    const total: Record<QueueJobState, number> = { waiting: 0, delayed: 0, active: 0, failed: 0 };
    for (const row of counts.rows) total[row.state] = Number(row.count);
    return {
      counts: total,
      jobs: rows.rows.map((row) => ({
        id: row.id,
        state: row.state,
        job: JSON.parse(row.data) as StepJob,
        retries: Number(row.retries),
        created_at: iso(row.created),
        start_after: iso(row.start_after),
        started_at: row.started === null ? null : iso(row.started),
      })),
    };
  }

  watch(listener: (runId: string, status?: string, logged?: LoggedEvents) => void): () => void {
    this.#listeners.add(listener);
    this.#listening();
    return () => void this.#listeners.delete(listener);
  }

  /** Starts listening for the commits of every process, once. */
  #listening(): void {
    // Once closed nothing is listened to (the database is gone; a follower then polls and fails).
    if (!this.#closed && !this.#unlisten) {
      const unlisten = this.#listen();
      unlisten.catch(() => undefined); // a listener that cannot start is not an unhandled rejection
      this.#unlisten = unlisten;
    }
  }

  async work(
    handler: (delivery: Delivery) => Promise<void>,
    options: QueueWorkOptions = {},
  ): Promise<QueueWorker> {
    this.#open();
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    // Workers wake on the notifications of commits that make jobs ready.
    this.#listening();
    const worker = new StepWorker(concurrency, {
      handler,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.starting ? { starting: options.starting } : {}),
      fetch: (count) => this.#fetch(count),
      touch: (jobs) => this.#touch(jobs),
      complete: (job) => this.#complete(this.#db, job),
      fail: (job, error) => this.#fail(job, error),
      pollMs: this.#timing.pollSeconds * 1000,
      heartbeatMs: (this.#timing.heartbeatSeconds * 1000) / 2,
    });
    this.#workers.add(worker);
    return {
      stop: async () => {
        await worker.stop();
        this.#workers.delete(worker);
      },
    };
  }

  async log(id: string, events: unknown[]): Promise<void> {
    this.#open();
    if (unstorableText(id)) return;
    const text = JSON.stringify(events);
    const result = await sql<{ base: number }>`
      with counted as (
        update ${this.#runsTable} set event_count = event_count + json_array_length(${text}::text::json)
        where id = ${id} and durable is not null
        returning event_count - json_array_length(${text}::text::json) as base
      ), logged as (
        insert into ${this.#eventsTable} (run_id, seq, event)
        select ${id}, base + ordinality::int, value
        from counted, json_array_elements(${text}::text::json) with ordinality
      )
      select base from counted`.execute(this.#db);
    const row = result.rows[0];
    if (row) this.#announce(this.#notice(id, undefined, text, [], false)(Number(row.base)));
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#wakeTimers) clearTimeout(timer);
    // Steps in flight finish (a step still running after STOP_GRACE_MS is told to stop: its job is
    // delivered again).
    const workers = [...this.#workers];
    this.#workers.clear();
    const grace = setTimeout(() => workers.forEach((worker) => worker.abort()), STOP_GRACE_MS);
    await Promise.all(workers.map((worker) => worker.stop()));
    clearTimeout(grace);
    // The notifications of the last commits go out before the database closes.
    await this.#flushing;
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    this.#direct = undefined;
    await (await unlisten?.catch(() => undefined))?.().catch(() => undefined);
  }

  #open(): void {
    if (this.#closed) throw new StepwireError('closed', 'the queue was closed');
  }

  /** The job a commit of `held`'s step hands to its worker: the first one ready now, if it has room. */
  #handOff(held: Held | undefined, jobs: readonly EnqueuedJob[]): HandOff | undefined {
    if (!held || !held.worker.takes(jobs)) return undefined;
    const job = jobs.find((j) => !j.delayMs)!.job;
    return { worker: held.worker, job, starting: held.worker.starting(job) };
  }

  /** The job a new run's insert hands to a worker of this process with a slot free, if there is one. */
  #handFirst(jobs: readonly EnqueuedJob[]): HandOff | undefined {
    const first = jobs.find((j) => !j.delayMs)?.job;
    if (!first) return undefined;
    for (const worker of this.#workers)
      if (worker.idle()) return { worker, job: first, starting: worker.starting(first) };
    return undefined;
  }

  /**
   * Writes a run guarded by its version (see {@link TableQueue.#writeAll}), together with the
   * other commits of this process that came meanwhile: while one such statement is under way the
   * commits that come wait, and then go in one statement (and one transaction, one WAL flush) for
   * all of them. A lone commit goes at once.
   */
  #writeBatched(write: GuardedWrite): Promise<Written | undefined> {
    return new Promise((resolve, reject) => {
      this.#batch.push({ write, resolve, reject });
      if (!this.#batching) void this.#drainBatch();
    });
  }

  async #drainBatch(): Promise<void> {
    this.#batching = true;
    try {
      while (this.#batch.length > 0) {
        const waiting = this.#batch.splice(0, MAX_BATCH);
        let results: (Written | undefined)[] | undefined;
        try {
          results = await this.#writeAll(waiting.map((w) => w.write));
        } catch (error) {
          // One of them may be at fault: each goes alone, so the others land.
          if (waiting.length === 1) waiting[0]!.reject(error);
          else
            for (const { write, resolve, reject } of waiting)
              await this.#writeAll([write]).then(([written]) => resolve(written), reject);
          continue;
        }
        waiting.forEach(({ resolve }, n) => resolve(results[n]));
      }
    } finally {
      this.#batching = false;
    }
  }

  /**
   * Writes runs in one statement: each run (with a `version`, only if it is still at that version: its
   * row's `xmin`, which every update renews; without one, as the caller holds its row's lock), its
   * events and jobs, deletes each `held` job and inserts each handed-off job leased to its worker. For
   * each, what was written, or undefined when its version did not match (nothing of it was written).
   */
  async #writeAll(
    writes: readonly GuardedWrite[],
    executor: Kysely<Tables> | Transaction<Tables> = this.#db,
  ): Promise<(Written | undefined)[]> {
    const made = writes.map((write, n) => {
      const { id, change, version, held, hand } = write;
      const summary = runSummary(id, change.record);
      const columns = runColumns(summary);
      const events = JSON.stringify(hand?.starting ? [...change.events, ...hand.starting] : change.events);
      const record = JSON.stringify(change.record) ?? 'null';
      const state = JSON.stringify(change.state) ?? 'null';
      const status = hand?.starting && columns.status === 'queued' ? 'running' : columns.status;
      for (const { delayMs } of change.jobs) if (delayMs) this.#wakeAfter(delayMs);
      const jobs: JobRow[] = change.jobs.map(({ job, delayMs }) => ({
        j: job,
        d: delayMs ?? 0,
        h: job === hand?.job,
      }));
      // The notification, sent by the function once the run's event count is known (see `#notice`).
      // A run that ended or waits: its record rides along too when it fits (a follower elsewhere needs no read).
      const { head, tail, sendable } = this.#noticeParts(
        id,
        status,
        events,
        change.jobs,
        hand !== undefined,
        status !== null && !OPEN_STATUSES.has(status) ? record : undefined,
      );
      const fields = [
        ...(sendable ? [`"x":${JSON.stringify(head)}`] : []),
        ...(sendable && tail ? [`"y":${JSON.stringify(tail)}`] : []),
        `"n":${n}`,
        `"id":${JSON.stringify(id)}`,
        ...(write.insert ? ['"i":true'] : []),
        ...(version === undefined ? [] : [`"v":"${version}"`]),
        `"w":${JSON.stringify(columns.workflow)}`,
        `"s":${JSON.stringify(status)}`,
        `"a":${JSON.stringify(columns.started_at)}`,
        `"f":${JSON.stringify(columns.finished_at)}`,
        `"r":${record}`,
        `"d":${state}`,
        `"m":${JSON.stringify({ ...summary, id: undefined })}`,
        ...(change.progress ? [`"p":${JSON.stringify(change.progress)}`] : []),
        `"e":${events}`,
        `"j":${JSON.stringify(jobs)}`,
        ...(held ? [`"h":${held.job.id}`] : []),
      ];
      return {
        text: `{${fields.join(',')}}`,
        record,
        state,
        status,
        notice: (base: number) => noticeText(head, tail, base),
      };
    });
    const values = [`[${made.map((m) => m.text).join(',')}]`, this.#timing.heartbeatSeconds, this.#channel];
    const rows = await this.#statement<WriteRow>(this.#writeRunsSql, values, executor);
    const written: (Written | undefined)[] = writes.map(() => undefined);
    for (const row of rows) {
      const m = made[row.n]!;
      written[row.n] = {
        version: row.version,
        handed: row.handed,
        record: m.record,
        state: m.state,
        status: m.status,
        notice: m.notice(Number(row.base)),
      };
    }
    return written;
  }

  /**
   * The common table expressions, after `updated` (which yields a row only when the run was written),
   * that enqueue `jobs` (the handed-off one leased to its worker, as `enqueued`) and delete `held`'s job.
   */
  #jobsSql(
    runId: string,
    jobs: readonly EnqueuedJob[],
    hand: HandOff | undefined,
    held: Held | undefined,
  ): RawBuilder<unknown> {
    const rows: JobRow[] = jobs.map(({ job, delayMs }) => ({
      j: job,
      d: delayMs ?? 0,
      h: job === hand?.job,
    }));
    const lease = sql`now() + ${this.#timing.heartbeatSeconds}::int * interval '1 second'`;
    const enqueue =
      rows.length === 0
        ? sql``
        : sql`, enqueued as (
        insert into ${this.#jobsTable} (run_id, data, state, start_after, deliveries, lease_until, started_at)
        select ${runId}, e.j::jsonb, case when e.h then 'active' else 'ready' end,
          now() + e.d * interval '1 millisecond', case when e.h then 1 else 0 end,
          case when e.h then ${lease} end, case when e.h then now() end
        from updated, json_to_recordset(${JSON.stringify(rows)}::text::json) as e(j json, d float8, h boolean)
        returning id::text as id, state
      )`;
    const done = held
      ? sql`, done as (
        delete from ${this.#jobsTable} where id = ${held.job.id}::bigint and exists (select 1 from updated)
      )`
      : sql``;
    return sql`${enqueue}${done}`;
  }

  /** After a commit of `held`'s step landed: its job is completed, and the handed job goes to its worker. */
  #settled(
    held: Held | undefined,
    change: RunChange | undefined,
    hand: HandOff | undefined,
    written: Written | undefined,
  ): void {
    if (!held) return;
    held.completed = true;
    if (hand && change && written?.handed) {
      held.handedOff = true;
      this.#adopt(hand, written);
    }
  }

  /** Gives the job a commit (or a run's insert) handed over to its worker, with the run as written. */
  #adopt(hand: HandOff | undefined, written: Written): void {
    if (!hand || !written.handed) return;
    const job: Job = { id: written.handed, data: hand.job, retryCount: 0 };
    // The next step of this run starts on the run as this commit wrote it (its start logged with it).
    const loaded: DurableRun | undefined = hand.starting
      ? runOf({
          record: written.record,
          durable: written.state,
          status: written.status,
          version: written.version,
        })
      : undefined;
    hand.worker.adopt([loaded === undefined ? { job } : { job, loaded }]);
  }

  /** Takes up to `count` jobs ready now or whose lease lapsed, leased to the caller, in one statement. */
  async #fetch(count: number): Promise<Job[]> {
    this.#sweep();
    // The due jobs and those whose lease lapsed, each read along its own index in the order they
    // came due and no further than `count`: one condition over both (and `order by id`) read and
    // sorted every ready job at every fetch, a cost that grew with the backlog (1.3 ms with 3,000).
    const statement = sql`
      with due as (
        select id, start_after as at from ${this.#jobsTable}
        where state = 'ready' and start_after <= now()
        order by start_after, id limit ${count} for update skip locked
      ), lapsed as (
        select id, lease_until as at from ${this.#jobsTable}
        where state = 'active' and lease_until < now()
        order by lease_until limit ${count} for update skip locked
      ), taken as (
        select id, row_number() over (order by at, id) as place
        from (select * from due union all select * from lapsed) waiting
        order by at, id limit ${count}
      )
      update ${this.#jobsTable} j set state = 'active', deliveries = j.deliveries + 1,
        lease_until = now() + ${this.#timing.heartbeatSeconds}::int * interval '1 second', started_at = now()
      from taken where j.id = taken.id
      returning j.id::text as id, j.data::text as data, j.deliveries, taken.place`.compile(this.#db);
    const rows = await this.#statement<{ id: string; data: string; deliveries: number; place: string }>(
      statement.sql,
      statement.parameters,
    );
    // In the order they came due (an update returns its rows in no order of its own).
    return rows
      .sort((a, b) => Number(a.place) - Number(b.place))
      .map((row) => ({
        id: row.id,
        data: JSON.parse(row.data) as StepJob,
        retryCount: Number(row.deliveries) - 1,
      }));
  }

  /** Renews the leases of the jobs still held by the deliveries given; lists those. */
  async #touch(jobs: Job[]): Promise<{ settled: string[] }> {
    const ids = jobs.map((job) => job.id);
    const deliveries = jobs.map((job) => job.retryCount + 1);
    const result = await sql<{ id: string }>`
      update ${this.#jobsTable} set lease_until = now() + ${this.#timing.heartbeatSeconds}::int * interval '1 second'
      where state = 'active' and (id, deliveries) in (
        select * from unnest(${`{${ids.join(',')}}`}::text::bigint[], ${`{${deliveries.join(',')}}`}::text::int[])
      )
      returning id::text as id`.execute(this.#db);
    return { settled: result.rows.map((row) => row.id) };
  }

  /** Deletes a job whose step is done. */
  async #complete(executor: Kysely<Tables> | Transaction<Tables>, job: Job): Promise<void> {
    await sql`delete from ${this.#jobsTable} where id = ${job.id}::bigint`.execute(executor);
  }

  /** A delivery failed: the job is ready again at once, or, past its deliveries, failed for good. */
  async #fail(job: Job, error: unknown): Promise<void> {
    const message = { message: error instanceof Error ? error.message : String(error) };
    await sql`
      update ${this.#jobsTable} set
        state = case when deliveries > ${MAX_REDELIVERIES + 1} then 'failed' else 'ready' end,
        start_after = now(), lease_until = null, error = ${JSON.stringify(message)}::text::jsonb
      where id = ${job.id}::bigint and deliveries = ${job.retryCount + 1}`.execute(this.#db);
    for (const worker of this.#workers) worker.wake();
  }

  /** Deletes a delivered job of a run that cannot exist; nothing else is written. */
  async #completeAlone(held: Held): Promise<undefined> {
    await this.#complete(this.#db, held.job);
    held.completed = true;
    return undefined;
  }

  /** Now and then (at most once an hour a process), failed jobs past their keeping are deleted. */
  #sweep(): void {
    if (Date.now() - this.#swept < 60 * 60 * 1000) return;
    this.#swept = Date.now();
    void sql`delete from ${this.#jobsTable}
      where state = 'failed' and created_at < now() - ${FAILED_KEPT_DAYS}::int * interval '1 day'`
      .execute(this.#db)
      .catch(() => undefined);
  }

  /**
   * The payload of a run's notification, as SQL given the run's event count before this change:
   * its id, its status (or null), how many jobs the change made ready for any worker, and its new
   * events when they fit in a notification (Postgres takes at most 8000 bytes).
   */
  #notice(
    id: string,
    status: string | null | undefined,
    events: string,
    jobs: readonly EnqueuedJob[],
    handOff: boolean,
  ): (base: number) => string {
    const { head, tail } = this.#noticeParts(id, status, events, jobs, handOff);
    return (base) => noticeText(head, tail, base);
  }

  /**
   * A notification's text but the run's event count before the change: the head (this process, the
   * run, its status, the jobs ready) and, when the events fit, the tail that carries them, with the
   * run's `record` text (given for a run that ended or waits) when that fits too.
   */
  #noticeParts(
    id: string,
    status: string | null | undefined,
    events: string,
    jobs: readonly EnqueuedJob[],
    handOff: boolean,
    record?: string,
  ): { head: string; tail: string | undefined; sendable: boolean } {
    const ready = Math.max(0, jobs.filter((job) => !job.delayMs).length - (handOff ? 1 : 0));
    const head = `${this.#origin}"r":${JSON.stringify(id)},"s":${JSON.stringify(status ?? null)},"j":${ready}`;
    // Postgres refuses a payload of 8000 bytes or more (and the transaction sending it): the events
    // ride along only when they fit, and a run whose id alone does not is told of by no notification
    // (the polls of the other processes find its change).
    if (events === '[]' || !fitsNotice(head, events))
      return { head, tail: undefined, sendable: fitsNotice(head) };
    const withRecord = record !== undefined && fitsNotice(head, events, record);
    return { head, tail: `,"e":${events}${withRecord ? `,"c":${record}` : ''}}`, sendable: true };
  }

  /**
   * Tells this process at once of a change that committed (it does not hear its own notifications
   * when they come back), and the other processes: a run's write sent its notification itself, in
   * its transaction (`written`); the other changes' go out after their commit, several in one
   * statement. A transaction that notifies holds a lock the other notifying commits of the database
   * wait for until its WAL is flushed, so a process's writes go one statement at a time (commits that
   * come meanwhile join the next). A notification lost with its process is made up for by the polls
   * of the workers and of the processes waiting on a run.
   */
  #announce(
    payload: string,
    { written, sent = written !== undefined }: { written?: Written; sent?: boolean } = {},
  ): void {
    if (this.#unlisten) {
      // A run that ended or waits: its followers here get its record with the notification.
      const record = written?.status && !OPEN_STATUSES.has(written.status) ? written.record : undefined;
      queueMicrotask(() => this.#deliver(payload, record));
    }
    // One too long for a notification is left to the other processes' polls.
    if (sent || !fitsNotice(payload)) return;
    this.#pending.push(payload);
    this.#flushing ??= this.#flush();
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const payloads = this.#pending.splice(0);
        // On the LISTEN connection when it is up: sent at once, not after the work this tick has left.
        const sent =
          this.#direct?.('stepwire_notify', NOTIFY_SQL, [this.#channel, payloads]) ??
          sql`select pg_notify(${this.#channel}, payload)
            from unnest(${payloads}::text[]) with ordinality as n(payload, at) order by at`.execute(this.#db);
        await sent.catch(() => undefined);
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  /** Wakes this process's workers when a delayed job comes due, rather than at their next poll. */
  #wakeAfter(delayMs: number): void {
    const timer = setTimeout(() => {
      this.#wakeTimers.delete(timer);
      for (const worker of this.#workers) worker.wake();
    }, delayMs + 5);
    timer.unref?.();
    this.#wakeTimers.add(timer);
  }

  /** Tells this process's workers and listeners of a commit; `record`, its record's text (see `LoggedEvents`). */
  #deliver(payload: string, record?: string): void {
    if (this.#workers.size === 0 && this.#listeners.size === 0) return;
    const { runId, status, ready, logged } = readNotice(payload);
    // Here the record is the text this process wrote (its notification may not have carried it).
    if (logged && record !== undefined && this.#listeners.size > 0) logged.record = JSON.parse(record);
    if (ready > 0) for (const worker of this.#workers) worker.wake();
    for (const listener of this.#listeners) {
      try {
        listener(runId, status, logged);
      } catch {
        // A listener's error is its own.
      }
    }
  }

  /** Listens for commits of any process: LISTEN on the server, PGlite's own listener in process. */
  async #listen(): Promise<() => Promise<void>> {
    const deliver = (payload: string) => {
      if (!payload.startsWith(this.#origin)) this.#deliver(payload);
    };
    const client = this.#connection.client;
    if (client.kind === 'pglite') {
      const pglite = client.pglite as unknown as {
        listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
      };
      return pglite.listen(this.#channel, deliver);
    }
    const listening = await listenOnPool(client.pool, this.#channel, deliver);
    this.#direct = listening.direct;
    return listening.stop;
  }
}

/** Most bytes of a notification's payload but its event count (Postgres refuses payloads of 8000). */
const NOTICE_BYTES = 7900;

/** A notification's text, from its parts (see `TableQueue.#noticeParts`) and the run's event count before. */
function noticeText(head: string, tail: string | undefined, base: number): string {
  return tail ? `${head},"b":${base}${tail}` : `${head}}`;
}
/** How long `close()` lets the steps in flight finish before telling them to stop. */
const STOP_GRACE_MS = 30_000;

const encoder = new TextEncoder();

/** Whether texts fit in a notification together (their UTF-8 bytes counted only when they might not). */
function fitsNotice(...texts: string[]): boolean {
  let chars = 0;
  for (const text of texts) chars += text.length;
  if (chars * 3 <= NOTICE_BYTES) return true;
  let bytes = 0;
  for (const text of texts) bytes += encoder.encode(text).byteLength;
  return bytes <= NOTICE_BYTES;
}

/**
 * A notification's payload read: JSON from this version, or `<run id> <status>` from an earlier
 * one (still running beside it while a deployment rolls out). @internal
 */
export function readNotice(payload: string): {
  runId: string;
  status: string | undefined;
  ready: number;
  logged?: LoggedEvents;
} {
  if (payload.startsWith('{')) {
    const head = readHead(payload);
    if (head) return head;
    try {
      const notice = JSON.parse(payload) as {
        r: string;
        s: string | null;
        j: number;
        b?: number;
        e?: unknown[];
        c?: unknown;
      };
      const record = typeof notice.c === 'object' && notice.c !== null ? { record: notice.c } : {};
      return {
        runId: notice.r,
        status: notice.s ?? undefined,
        ready: notice.j,
        ...(Array.isArray(notice.e) && typeof notice.b === 'number'
          ? { logged: { after: notice.b, events: notice.e, ...record } }
          : {}),
      };
    } catch {
      // Not one of ours after all: read as the older form.
    }
  }
  const space = payload.indexOf(' ');
  const runId = space < 0 ? payload : payload.slice(0, space);
  const status = space < 0 ? undefined : payload.slice(space + 1) || undefined;
  // An earlier version's notification does not say whether jobs became ready: they may have.
  return { runId, status, ready: 1 };
}

/**
 * The head of a notification as `#noticeParts` writes it (`{"o":…,"r":…,"s":…,"j":…` then `}` or
 * `,"b":…`), read without parsing the rest: a process reads every notification, but the events
 * and record it carries only for the runs it follows (see {@link CarriedEvents}). Undefined for
 * any other form, which is then parsed whole.
 */
function readHead(
  payload: string,
): { runId: string; status: string | undefined; ready: number; logged?: LoggedEvents } | undefined {
  const origin = payload.indexOf('","r":');
  if (!payload.startsWith('{"o":"') || origin < 0) return undefined;
  const idEnd = stringEnd(payload, origin + 6);
  if (idEnd < 0 || !payload.startsWith(',"s":', idEnd)) return undefined;
  const statusAt = idEnd + 5;
  const statusEnd = payload.startsWith('null', statusAt) ? statusAt + 4 : stringEnd(payload, statusAt);
  if (statusEnd < 0 || !payload.startsWith(',"j":', statusEnd)) return undefined;
  let end = statusEnd + 5;
  while (end < payload.length && payload.charCodeAt(end) >= 48 && payload.charCodeAt(end) <= 57) end++;
  const carries = payload.startsWith(',"b":', end);
  if (end === statusEnd + 5 || (!carries && (end !== payload.length - 1 || payload[end] !== '}')))
    return undefined;
  const runId = JSON.parse(payload.slice(origin + 6, idEnd)) as unknown;
  const status = JSON.parse(payload.slice(statusAt, statusEnd)) as unknown;
  if (typeof runId !== 'string' || (status !== null && typeof status !== 'string')) return undefined;
  return {
    runId,
    status: status ?? undefined,
    ready: Number(payload.slice(statusEnd + 5, end)),
    ...(carries ? { logged: new CarriedEvents(payload) } : {}),
  };
}

/** Where the JSON string that begins at `at` ends (just past its closing quote), or -1. */
function stringEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== 34) return -1;
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 92) i++;
    else if (code === 34) return i + 1;
  }
  return -1;
}

/**
 * The events (and record) a notification carried, parsed from its text when first read: most
 * notifications a process hears are of runs it does not follow, and it reads only their heads.
 */
class CarriedEvents implements LoggedEvents {
  #payload: string;
  #read: { b: number; e: unknown[]; c?: unknown } | undefined;
  #record: unknown;
  #recordSet = false;

  constructor(payload: string) {
    this.#payload = payload;
  }

  #notice(): { b: number; e: unknown[]; c?: unknown } {
    return (this.#read ??= JSON.parse(this.#payload) as { b: number; e: unknown[]; c?: unknown });
  }

  get after(): number {
    return this.#notice().b;
  }

  get events(): unknown[] {
    return this.#notice().e;
  }

  /** The record it carried (or the one this process wrote, when set), or undefined. */
  get record(): unknown {
    if (this.#recordSet) return this.#record;
    const carried = this.#notice().c;
    return typeof carried === 'object' && carried !== null ? carried : undefined;
  }

  set record(record: unknown) {
    this.#record = record;
    this.#recordSet = true;
  }
}

/** A run's row as read: the run, or undefined when there is none or it is no durable run. */
function runOf(
  row: { record: string; durable: string | null; status: string | null; version: string } | undefined,
): DurableRun | undefined {
  if (!row || row.durable === null) return undefined;
  const record = JSON.parse(row.record) as { status?: unknown };
  // The status column is ahead of the record once a worker took the run's first step.
  if (row.status !== null) record.status = row.status;
  return { record, state: JSON.parse(row.durable), version: Number(row.version) };
}

/** A job a commit took for a worker, with its run when it was loaded then (null: it had ended). */
interface Taken {
  job: Job;
  loaded?: DurableRun | null;
}

/** A job a worker of this process holds: the job, its worker, its claim. */
interface Held {
  job: Job;
  worker: StepWorker;
  /** Aborted when the claim is lost (the lease lapsed and the job went to another worker). */
  claim: AbortController;
  /** Set once a commit completing the job landed. */
  completed: boolean;
  /** Set once a commit of the job handed its worker the next job. */
  handedOff: boolean;
}

/** What a {@link StepWorker} does with the database. */
interface WorkerCalls {
  handler: (delivery: Delivery) => Promise<void>;
  onError?: (error: unknown) => void;
  /** The events to log as a job starts (see `QueueWorkOptions.starting`). */
  starting?: (job: StepJob) => unknown[] | undefined;
  /** Takes up to `count` ready jobs, in one statement. */
  fetch(count: number): Promise<Job[]>;
  /** Renews the leases of the jobs, in one statement; `settled` lists those still held. */
  touch(jobs: Job[]): Promise<{ settled?: string[] }>;
  complete(job: Job): Promise<unknown>;
  fail(job: Job, error: unknown): Promise<unknown>;
  pollMs: number;
  heartbeatMs: number;
}

/**
 * The jobs of one `work()` call: at most `concurrency` at once. A free slot takes first a job a
 * commit handed over (the next step of the chain it committed, taken in the same transaction), then
 * as many jobs as there are free slots, in one fetch, when a notification says jobs became ready,
 * when the last fetch came back full, or every `pollMs`. The leases of every job held are renewed
 * together every `heartbeatMs`.
 */
class StepWorker {
  readonly #calls: WorkerCalls;
  #free: number;
  #stopping = false;
  /** Whether jobs may be waiting: the next free slot fetches. */
  #more = true;
  /** Jobs commits handed over, not started yet. */
  #handed: Taken[] = [];
  readonly #held = new Map<string, Held>();
  readonly #running = new Set<Promise<void>>();
  #wake: (() => void) | undefined;
  readonly #loop: Promise<void>;
  readonly #heartbeat: ReturnType<typeof setInterval>;

  constructor(concurrency: number, calls: WorkerCalls) {
    this.#calls = calls;
    this.#free = concurrency;
    this.#heartbeat = setInterval(() => void this.#renew(), calls.heartbeatMs);
    (this.#heartbeat as { unref?: () => void }).unref?.();
    this.#loop = this.#run();
  }

  /** Whether a commit of a job of this worker making `jobs` ready takes the next job for it. */
  takes(jobs: readonly EnqueuedJob[]): boolean {
    return !this.#stopping && jobs.some((job) => !job.delayMs);
  }

  /** Whether a slot is free that no job handed over waits for (a new run's first job may go to it). */
  idle(): boolean {
    return !this.#stopping && this.#free > this.#handed.length;
  }

  /** The events to log as `job` starts, when the worker was told them; else undefined. */
  starting(job: StepJob): unknown[] | undefined {
    return this.#calls.starting?.(job);
  }

  /** Jobs a commit took for this worker: they start as slots free up. */
  adopt(jobs: Taken[]): void {
    this.#handed.push(...jobs);
    this.#poke();
  }

  /** Jobs may have become ready: the next free slot fetches. */
  wake(): void {
    this.#more = true;
    this.#poke();
  }

  /** Tells the steps in flight to stop (their jobs are delivered again). */
  abort(): void {
    for (const held of this.#held.values()) held.claim.abort(new Error('the queue was closed'));
  }

  /** Takes no more jobs; resolves once the jobs it holds (those handed over too) have run. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#poke();
    await this.#loop;
    while (this.#handed.length > 0 || this.#running.size > 0) {
      this.#startHanded();
      if (this.#running.size > 0) await Promise.race(this.#running);
    }
    clearInterval(this.#heartbeat);
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      this.#startHanded();
      if (this.#free > 0 && this.#more) {
        this.#more = false;
        const asked = this.#free;
        let jobs: Job[] = [];
        try {
          jobs = await this.#calls.fetch(asked);
        } catch (error) {
          this.#calls.onError?.(error);
        }
        if (jobs.length === asked) this.#more = true;
        if (this.#stopping) this.#handed.push(...jobs.map((job) => ({ job })));
        else for (const job of jobs) this.#start({ job });
        if (jobs.length > 0) continue;
      }
      // A wake or a hand-over that came while the fetch was under way is not lost.
      if (this.#free > 0 && (this.#more || this.#handed.length > 0)) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#more = true;
          this.#poke();
        }, this.#calls.pollMs);
        (timer as { unref?: () => void }).unref?.();
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  #startHanded(): void {
    while (this.#free > 0 && this.#handed.length > 0) this.#start(this.#handed.shift()!);
  }

  #start({ job, loaded }: Taken): void {
    this.#free--;
    const held: Held = {
      job,
      worker: this,
      claim: new AbortController(),
      completed: false,
      handedOff: false,
    };
    this.#held.set(job.id, held);
    const delivery: Delivery = {
      job: job.data,
      redelivered: job.retryCount,
      signal: held.claim.signal,
      ref: held,
      ...(loaded === undefined ? {} : { loaded }),
    };
    const running = (async () => {
      try {
        await this.#calls.handler(delivery);
        // A handler that committed nothing still ends its job.
        if (!held.completed) await this.#calls.complete(job);
      } catch (error) {
        this.#calls.onError?.(error);
        // Failed, the job is delivered again (or, past its deliveries, fails for good).
        await this.#calls.fail(job, error).catch((failed: unknown) => this.#calls.onError?.(failed));
      }
    })().finally(() => {
      this.#held.delete(job.id);
      this.#running.delete(running);
      this.#free++;
      this.#poke();
    });
    this.#running.add(running);
  }

  /** Renews the leases of every job held; a job whose lease was lost is told to stop. */
  async #renew(): Promise<void> {
    const held = [...this.#held.values()].filter((h) => !h.claim.signal.aborted);
    const jobs = [...held.map((h) => h.job), ...this.#handed.map((taken) => taken.job)];
    if (jobs.length === 0) return;
    let touched: { settled?: string[] };
    try {
      touched = await this.#calls.touch(jobs);
    } catch (error) {
      // A renewal that could not run says nothing about the leases.
      this.#calls.onError?.(error);
      return;
    }
    if (!touched.settled) return;
    const renewed = new Set(touched.settled);
    for (const h of held)
      if (!renewed.has(h.job.id))
        h.claim.abort(new Error(`job ${h.job.id} is no longer held by this worker`));
    // Only those asked about are dropped: a job handed over while the renewal was under way stays.
    const asked = new Set(jobs.map((job) => job.id));
    this.#handed = this.#handed.filter((taken) => !asked.has(taken.job.id) || renewed.has(taken.job.id));
  }
}

/** The name of each statement text prepared (see `TableQueue.#statement`); a name is never given to another text. */
const statementNames = new Map<string, string>();
let statementCount = 0;

/** The prepared statement name of `text`: `stepwire_q<n>`, the same for the same text in this process. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    // Bounded: a text forgotten is prepared again under a new name, never an old one.
    if (statementNames.size >= 1_000) statementNames.clear();
    statementNames.set(text, (name = `stepwire_q${++statementCount}`));
  }
  return name;
}

/** A row `write_runs` returns: a run written (see `TableQueue.#writeAll`). */
type WriteRow = { n: number; base: number; version: string; handed: string | null };

/** Statuses of a run not ended nor waiting. */
const OPEN_STATUSES = new Set(['queued', 'running']);

/** Notifies `$1` of each payload of `$2`, in order. */
const NOTIFY_SQL = `select pg_notify($1, payload) from unnest($2::text[]) with ordinality as n(payload, at) order by at`;

/**
 * Runs a statement on a connection held for it, prepared once as `name`, or answers undefined when
 * there is none now.
 */
type Direct = (name: string, text: string, values: unknown[]) => Promise<unknown> | undefined;

type PgClient = {
  query(text: string, values?: unknown[]): Promise<unknown>;
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  release(error?: boolean | Error): void;
};

/**
 * LISTEN on a connection of its own, taken from the pool and kept; a dropped connection is replaced
 * after a second (notifications sent meanwhile are missed, and the waiting side polls as well).
 */
async function listenOnPool(
  pool: Connection['client'] extends infer C ? (C extends { pool: infer P } ? P : never) : never,
  channel: string,
  deliver: (payload: string) => void,
): Promise<{ stop: () => Promise<void>; direct: Direct }> {
  let stopped = false;
  let current: PgClient | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  // Tries again in a second, unless the pool was ended; the timer keeps no process alive.
  const again = (): void => {
    if (stopped || (pool as unknown as { ending?: boolean }).ending) return;
    retry = setTimeout(() => void connect(), 1000);
    (retry as { unref?: () => void }).unref?.();
  };
  const connect = async (): Promise<void> => {
    if (stopped) return;
    try {
      const client = (await (pool as unknown as { connect(): Promise<PgClient> }).connect()) as PgClient;
      current = client;
      client.on('notification', (message) => {
        if (message.channel === channel && message.payload) deliver(message.payload);
      });
      client.on('error', () => {
        client.release(true);
        if (current === client) current = undefined;
        again();
      });
      await client.query(`LISTEN "${channel}"`);
    } catch {
      again();
    }
  };
  await connect();
  const direct: Direct = (name, text, values) => current?.query({ name, text, values });
  const stop = async () => {
    stopped = true;
    clearTimeout(retry);
    const client = current;
    current = undefined;
    if (!client) return;
    await client.query(`UNLISTEN "${channel}"`).catch(() => undefined);
    client.release();
  };
  return { stop, direct };
}

/** JSON text as a `json` parameter (sent as text, so no driver serializer touches it). */
function json(value: unknown) {
  return sql<string>`${JSON.stringify(value) ?? 'null'}::text::json`;
}
