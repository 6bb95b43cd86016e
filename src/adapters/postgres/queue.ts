/**
 * The durable run queue of `openPostgres`, on pg-boss in the same database: one pg-boss job per
 * step, in the schema `<schema>_jobs`. A commit locks the run's row, writes the run, its events and
 * the jobs it makes ready, and completes the delivered job, all in one transaction; the worker whose
 * step committed takes its next job in that same transaction. LISTEN/NOTIFY wakes the workers and
 * the processes waiting on a run (the notification carries the run's new events), so a chain of
 * steps never waits a poll. Workers fetch as many jobs as they have free slots in one statement and
 * renew the leases of all the jobs they hold in one statement.
 * @module
 */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { StepwireError } from '../../errors/index.js';
import { importOptional } from '../import-optional.js';
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
import { summaryJson, unstorableText } from './storage.js';

export type { QueueWorker } from '../queue.js';

/** Options of {@link PostgresQueue.work}. */
export type WorkOptions = QueueWorkOptions;

/** Timing of the queue; the defaults suit production, tests shorten them. */
export interface QueueTiming {
  /**
   * A worker renews its lease on a step this often; a step whose worker died is delivered again
   * once its lease lapses, within about twice this plus `monitorSeconds`. At least 10 (pg-boss).
   * @default 10
   */
  heartbeatSeconds?: number;
  /** How often lapsed leases are looked for, in seconds. @default 2 */
  monitorSeconds?: number;
  /** How often an idle worker looks for jobs when no notification came, in seconds (at least 0.5). @default 2 */
  pollSeconds?: number;
}

/**
 * The durable run queue on the database `openPostgres` opened: pass it as `new Engine({ storage,
 * queue })`. Steps then execute in every process that calls `engine.work()`.
 */
export interface PostgresQueue extends RunQueue {
  /** Stops the queue's own work (workers, listeners, maintenance); `close()` of the database calls it. @internal */
  close(): Promise<void>;
}

/** How many times a step is delivered again after its worker died, before the run fails. @internal */
export const MAX_REDELIVERIES = 8;

const QUEUE = 'steps';

type Boss = import('pg-boss').PgBoss;
type BossModule = typeof import('pg-boss');
type Job = import('pg-boss').Job<StepJob>;

/** The queue of a database: pg-boss started on first use. @internal */
export function postgresQueue(
  connection: Connection,
  schema: string,
  scoped: Kysely<Tables>,
  timing: QueueTiming = {},
): PostgresQueue {
  return new BossQueue(connection, schema, scoped, timing);
}

class BossQueue implements PostgresQueue {
  readonly available = true;
  readonly #connection: Connection;
  readonly #schema: string;
  readonly #db: Kysely<Tables>;
  readonly #timing: Required<QueueTiming>;
  readonly #channel: string;
  #started: Promise<{ boss: Boss; module: BossModule }> | undefined;
  #listeners = new Set<(runId: string, status?: string, logged?: LoggedEvents) => void>();
  #unlisten: Promise<() => Promise<void>> | undefined;
  #closed = false;
  /** The workers of this process, woken when jobs become ready. */
  #workers = new Set<StepWorker>();
  #wakeTimers = new Set<ReturnType<typeof setTimeout>>();

  constructor(connection: Connection, schema: string, db: Kysely<Tables>, timing: QueueTiming) {
    this.#connection = connection;
    this.#schema = schema;
    this.#db = db;
    this.#timing = { heartbeatSeconds: 10, monitorSeconds: 2, pollSeconds: 2, ...timing };
    this.#channel = `stepwire_${schema}_runs`;
  }

  async begin(id: string, change: RunChange): Promise<void> {
    const { boss, module } = await this.#boss();
    await this.#db.transaction().execute(async (tx) => {
      const summary = runSummary(id, change.record);
      const columns = runColumns(summary);
      await tx
        .insertInto('runs')
        .values({
          id,
          workflow: columns.workflow,
          status: columns.status,
          started_at: time(columns.started_at),
          finished_at: time(columns.finished_at),
          record: json(change.record),
          durable: json(change.state),
          summary: summaryJson(summary),
        })
        .execute();
      await this.#write(tx, id, change, boss, module);
    });
  }

  async commit(
    id: string,
    delivery: Delivery | undefined,
    decide: (run: DurableRun) => RunChange | undefined,
    loaded?: DurableRun,
  ): Promise<RunChange | undefined> {
    const { boss, module } = await this.#boss();
    // No run's id holds U+0000 (Postgres text cannot): such a run does not exist.
    if (unstorableText(id)) return delivery ? this.#completeAlone(delivery, boss, module) : undefined;
    // Decided on the run as loaded, written only if nothing changed it since: no locking read.
    const guess = loaded?.version === undefined ? undefined : decide(loaded);
    const held = delivery?.ref as Held | undefined;
    let next: Taken[] = [];
    const change = await this.#db.transaction().execute(async (tx) => {
      let change: RunChange | undefined;
      let handOff = guess !== undefined && held !== undefined && held.worker.takes(guess.jobs);
      if (guess && (await this.#write(tx, id, guess, boss, module, loaded!.version, handOff))) change = guess;
      else {
        const row = await tx
          .selectFrom('runs')
          .select([sql<string>`record::text`.as('record'), sql<string | null>`durable::text`.as('durable')])
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        change =
          row && row.durable !== null
            ? decide({ record: JSON.parse(row.record), state: JSON.parse(row.durable) })
            : undefined;
        handOff = change !== undefined && held !== undefined && held.worker.takes(change.jobs);
        if (change) await this.#write(tx, id, change, boss, module, undefined, handOff);
      }
      if (delivery) await this.#complete(tx, delivery, boss, module);
      if (change && handOff) next = await this.#fetchIn(tx, held!, boss, module);
      return change;
    });
    this.#settled(held, next);
    return change;
  }

  async commitState(
    id: string,
    delivery: Delivery | undefined,
    decide: (run: RunState) => StateChange | undefined,
  ): Promise<StateChange | undefined> {
    const { boss, module } = await this.#boss();
    if (unstorableText(id)) return delivery ? this.#completeAlone(delivery, boss, module) : undefined;
    const held = delivery?.ref as Held | undefined;
    let next: Taken[] = [];
    let handOff = false;
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
      if (change) {
        const events = JSON.stringify(change.events);
        const results = JSON.stringify(
          change.results.map((r) => ({ ...r, logs: r.logs && r.logs.length > 0 ? r.logs : null })),
        );
        const count = Number(row!.event_count);
        handOff = held !== undefined && held.worker.takes(change.jobs);
        const notice = this.#notice(id, undefined, events, change.jobs, handOff);
        await sql`
          with updated as (
            update ${sql.table(`${this.#schema}.runs`)} set
              durable = ${json(change.state)}, progress = ${json(change.progress ?? null)},
              event_count = ${count} + json_array_length(${events}::text::json)
            where id = ${id}
            returning id
          ), logged as (
            insert into ${sql.table(`${this.#schema}.run_events`)} (run_id, seq, event)
            select ${id}, ${count}::int + ordinality::int, value
            from json_array_elements(${events}::text::json) with ordinality
          ), kept as (
            insert into ${sql.table(`${this.#schema}.step_results`)}
              (run_id, step, item, attempt, status, output, error, logs, finished_at)
            select ${id}, r.step, r.item, r.attempts, r.status, r.output, r.error, r.logs, now()
            from json_to_recordset(${results}::text::json)
              as r(step text, item int, attempts int, status text, output json, error json, logs json)
            on conflict do nothing
          )
          select pg_notify(${this.#channel}, ${notice(sql`${count}::int`)})`.execute(tx);
        await this.#enqueue(tx, change.jobs, boss, module);
      }
      if (delivery) await this.#complete(tx, delivery, boss, module);
      if (handOff) next = await this.#fetchIn(tx, held!, boss, module);
      return change;
    });
    this.#settled(held, next);
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
    await this.#boss();
    if (unstorableText(id)) return undefined;
    const row = log
      ? await this.#logAndLoad(id, log)
      : await this.#db
          .selectFrom('runs')
          .select([
            sql<string>`record::text`.as('record'),
            sql<string | null>`durable::text`.as('durable'),
            'status',
            sql<string>`xmin::text`.as('version'),
          ])
          .where('id', '=', id)
          .executeTakeFirst();
    return runOf(row);
  }

  /** Appends `events`, marks a queued run running and notifies; the run as it is then, if not ended. */
  async #logAndLoad(
    id: string,
    events: unknown[],
    executor: Kysely<Tables> | Transaction<Tables> = this.#db,
  ) {
    const text = JSON.stringify(events);
    const notice = this.#notice(id, sql`status`, text, [], false);
    const runs = sql.table(`${this.#schema}.runs`);
    const result = await sql<{
      record: string;
      durable: string | null;
      status: string | null;
      version: string;
    }>`
      with counted as (
        update ${runs} set
          event_count = event_count + json_array_length(${text}::text::json),
          status = case when status = 'queued' then 'running' else status end
        where id = ${id} and durable is not null and status in ('queued', 'running', 'waiting')
        returning event_count - json_array_length(${text}::text::json) as base, xmin, record, durable, status
      ), logged as (
        insert into ${sql.table(`${this.#schema}.run_events`)} (run_id, seq, event)
        select ${id}, base + ordinality::int, value
        from counted, json_array_elements(${text}::text::json) with ordinality
      )
      select record::text as record, durable::text as durable, status, xmin::text as version,
        pg_notify(${this.#channel}, ${notice(sql`base`)}) as notified
      from counted`.execute(executor);
    return result.rows[0];
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
    await this.#boss();
    const table = sql.table(`${this.#schema}_jobs.job`);
    const state = sql<QueueJobState>`case when state in ('created', 'retry') and start_after > now() then 'delayed'
      when state in ('created', 'retry') then 'waiting' else state::text end`;
    const counts = await sql<{ state: QueueJobState; count: string }>`
      select ${state} as state, count(*)::text as count from ${table}
      where name = ${QUEUE} and state in ('created', 'retry', 'active', 'failed') group by 1`.execute(
      this.#db,
    );
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
        select id, ${state} as state, data::text as data, retry_count as retries, created_on as created,
          start_after, started_on as started,
          row_number() over (partition by ${state} order by created_on desc) as place
        from ${table} where name = ${QUEUE} and state in ('created', 'retry', 'active', 'failed')
      ) newest where place <= ${limit} order by created desc`.execute(this.#db);
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
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    const { boss } = await this.#boss();
    // Workers wake on the notifications of commits that make jobs ready.
    this.#listening();
    const attempt = (job: Job) => ({ id: job.id, retryCount: job.retryCount });
    const worker = new StepWorker(concurrency, {
      handler,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.starting ? { starting: options.starting } : {}),
      fetch: (count) => boss.fetch<StepJob>(QUEUE, { batchSize: count }),
      touch: (jobs) => boss.touch(QUEUE, jobs.map(attempt)),
      complete: (job) => boss.complete(QUEUE, attempt(job)),
      fail: (job, error) => boss.fail(QUEUE, attempt(job), failure(error)),
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
    await this.#boss();
    if (unstorableText(id)) return;
    const text = JSON.stringify(events);
    const notice = this.#notice(id, undefined, text, [], false);
    await sql`
      with counted as (
        update ${sql.table(`${this.#schema}.runs`)} set event_count = event_count + json_array_length(${text}::text::json)
        where id = ${id} and durable is not null
        returning event_count - json_array_length(${text}::text::json) as base
      ), logged as (
        insert into ${sql.table(`${this.#schema}.run_events`)} (run_id, seq, event)
        select ${id}, base + ordinality::int, value
        from counted, json_array_elements(${text}::text::json) with ordinality
      )
      select pg_notify(${this.#channel}, ${notice(sql`base`)}) from counted`.execute(this.#db);
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
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    await (await unlisten?.catch(() => undefined))?.().catch(() => undefined);
    const started = this.#started;
    if (!started) return;
    const { boss } = await started.catch(() => ({ boss: undefined }));
    await boss?.stop({ graceful: true, close: true, timeout: 30_000 });
  }

  /**
   * Appends the events, updates the run, notifies, and enqueues the jobs of a change. With `version`
   * (the run was not read under the lock), only if the run is still at that version (its row's
   * `xmin`: every update makes a new one); false when it was not.
   */
  async #write(
    tx: Transaction<Tables>,
    id: string,
    change: RunChange,
    boss: Boss,
    module: BossModule,
    version?: number,
    handOff = false,
  ): Promise<boolean> {
    const summary = runSummary(id, change.record);
    const columns = runColumns(summary);
    const events = JSON.stringify(change.events);
    const notice = this.#notice(id, columns.status, events, change.jobs, handOff);
    const result = await sql`
      with updated as (
        update ${sql.table(`${this.#schema}.runs`)} set
          workflow = ${columns.workflow}, status = ${columns.status},
          started_at = ${time(columns.started_at)}, finished_at = ${time(columns.finished_at)},
          record = ${json(change.record)}, durable = ${json(change.state)}, summary = ${summaryJson(summary)},
          progress = ${json(change.progress ?? null)},
          event_count = event_count + json_array_length(${events}::text::json)
        where id = ${id} ${version === undefined ? sql`` : sql`and xmin = ${String(version)}::text::xid`}
        returning event_count - json_array_length(${events}::text::json) as base
      ), logged as (
        insert into ${sql.table(`${this.#schema}.run_events`)} (run_id, seq, event)
        select ${id}, base + ordinality::int, value
        from updated, json_array_elements(${events}::text::json) with ordinality
      )
      select pg_notify(${this.#channel}, ${notice(sql`base`)}) from updated`.execute(tx);
    if (result.rows.length === 0) return false;
    await this.#enqueue(tx, change.jobs, boss, module);
    return true;
  }

  /** Enqueues jobs inside the transaction. */
  async #enqueue(
    tx: Transaction<Tables>,
    jobs: EnqueuedJob[],
    boss: Boss,
    module: BossModule,
  ): Promise<void> {
    if (jobs.length === 0) return;
    for (const { delayMs } of jobs) if (delayMs) this.#wakeAfter(delayMs);
    await boss.insert(
      QUEUE,
      jobs.map(({ job, delayMs }) => ({
        data: job,
        ...(delayMs ? { startAfter: new Date(Date.now() + delayMs) } : {}),
      })),
      { db: module.fromKysely(tx) },
    );
  }

  /** Completes a delivered job inside the transaction. */
  async #complete(
    tx: Transaction<Tables>,
    delivery: Delivery,
    boss: Boss,
    module: BossModule,
  ): Promise<void> {
    const { job } = delivery.ref as Held;
    await boss.complete(QUEUE, { id: job.id, retryCount: job.retryCount }, null, {
      db: module.fromKysely(tx),
    });
  }

  /**
   * Takes the next ready job inside the transaction, for the worker whose step is committing. A job
   * of the same run (the next step of a chain) starts here too: its events logged and the run loaded,
   * in this transaction. (Another run is left to the worker: locking it here could deadlock with the
   * commit of that run.)
   */
  async #fetchIn(tx: Transaction<Tables>, held: Held, boss: Boss, module: BossModule): Promise<Taken[]> {
    const jobs = await boss.fetch<StepJob>(QUEUE, { batchSize: 1, db: module.fromKysely(tx) });
    const taken: Taken[] = [];
    for (const job of jobs) {
      const events = job.data.run === held.job.data.run ? held.worker.starting(job.data) : undefined;
      if (events === undefined) taken.push({ job });
      else taken.push({ job, loaded: runOf(await this.#logAndLoad(job.data.run, events, tx)) ?? null });
    }
    return taken;
  }

  /** After a delivery's commit landed: its job is completed, and `next` goes to its worker. */
  #settled(held: Held | undefined, next: Taken[]): void {
    if (!held) return;
    held.completed = true;
    if (next.length > 0) {
      held.handedOff = true;
      held.worker.adopt(next);
    }
  }

  /**
   * The payload of a run's notification, as SQL given the run's event count before this change:
   * its id, its status (or null), how many jobs the change made ready for any worker, and its new
   * events when they fit in a notification (Postgres takes at most 8000 bytes).
   */
  #notice(
    id: string,
    status: string | null | undefined | RawBuilder<unknown>,
    events: string,
    jobs: readonly EnqueuedJob[],
    handOff: boolean,
  ): (base: RawBuilder<unknown>) => RawBuilder<string> {
    const ready = Math.max(0, jobs.filter((job) => !job.delayMs).length - (handOff ? 1 : 0));
    const carried = events !== '[]' && utf8Bytes(events) + utf8Bytes(id) <= NOTICE_BYTES;
    const state =
      status === undefined || status === null
        ? sql`null::text`
        : typeof status === 'string'
          ? sql`${status}::text`
          : status;
    return (base) =>
      sql<string>`json_build_object('r', ${id}::text, 's', ${state}, 'j', ${ready}::int${
        carried ? sql`, 'b', ${base}, 'e', ${events}::text::json` : sql``
      })::text`;
  }

  /** Completes a delivered job of a run that cannot exist; nothing else is written. */
  async #completeAlone(delivery: Delivery, boss: Boss, module: BossModule): Promise<undefined> {
    await this.#db.transaction().execute((tx) => this.#complete(tx, delivery, boss, module));
    return undefined;
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

  /** pg-boss, started once: its schema created or migrated, the step queue created. */
  #boss(): Promise<{ boss: Boss; module: BossModule }> {
    if (this.#closed) throw new StepwireError('closed', 'the queue was closed');
    return (this.#started ??= this.#start());
  }

  async #start(): Promise<{ boss: Boss; module: BossModule }> {
    const module = (await importOptional(
      'pg-boss',
      'the durable queue',
      () => import('pg-boss') as Promise<unknown>,
    )) as BossModule;
    const client = this.#connection.client;
    const common = {
      schema: `${this.#schema}_jobs`,
      // The workers are the queue's own (fetch, touch, complete): stepwire's notifications wake them.
      useListenNotify: false,
      monitorIntervalSeconds: this.#timing.monitorSeconds,
      superviseIntervalSeconds: this.#timing.monitorSeconds,
      registerInstance: false,
      openTelemetry: { enabled: false },
    };
    const boss =
      client.kind === 'pglite'
        ? new module.PgBoss({ ...common, backend: 'pglite', db: module.fromPglite(client.pglite as never) })
        : client.url !== undefined
          ? new module.PgBoss({ ...common, connectionString: client.url, max: 4 })
          : new module.PgBoss({ ...common, db: poolDatabase(client.pool) });
    // pg-boss reports trouble (a dropped connection, a slow query) as events; unheard, an `error`
    // event would end the process. The queue recovers by itself: the next poll reconnects.
    boss.on('error', () => undefined);
    boss.on('warning', () => undefined);
    await boss.start();
    await boss.createQueue(QUEUE, {
      notify: false,
      heartbeatSeconds: this.#timing.heartbeatSeconds,
      retryLimit: MAX_REDELIVERIES + 1,
      retryDelay: 0,
      expireInSeconds: 24 * 60 * 60,
      deleteAfterSeconds: 60 * 60,
    });
    // A queue made by an earlier version notified pg-boss's listeners of each job: nobody listens now.
    if ((await boss.getQueue(QUEUE))?.notify) await boss.updateQueue(QUEUE, { notify: false });
    return { boss, module };
  }

  /** Listens for commits of any process: LISTEN on the server, PGlite's own listener in process. */
  async #listen(): Promise<() => Promise<void>> {
    const deliver = (payload: string) => {
      const { runId, status, ready, logged } = readNotice(payload);
      if (ready > 0) for (const worker of this.#workers) worker.wake();
      for (const listener of this.#listeners) {
        try {
          listener(runId, status, logged);
        } catch {
          // A listener's error is its own.
        }
      }
    };
    const client = this.#connection.client;
    if (client.kind === 'pglite') {
      const pglite = client.pglite as unknown as {
        listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
      };
      return pglite.listen(this.#channel, deliver);
    }
    return listenOnPool(client.pool, this.#channel, deliver);
  }
}

/** Most bytes of a notification's events and run id together (Postgres refuses payloads of 8000). */
const NOTICE_BYTES = 7000;
/** How long `close()` lets the steps in flight finish before telling them to stop. */
const STOP_GRACE_MS = 30_000;

const encoder = new TextEncoder();

/** The UTF-8 length of a text (counted only when it might be long). */
function utf8Bytes(text: string): number {
  return text.length * 3 <= NOTICE_BYTES ? text.length : encoder.encode(text).byteLength;
}

/**
 * A notification's payload read: JSON from this version, or `<run id> <status>` from an earlier
 * one (still running beside it while a deployment rolls out).
 */
function readNotice(payload: string): {
  runId: string;
  status: string | undefined;
  ready: number;
  logged?: LoggedEvents;
} {
  if (payload.startsWith('{')) {
    try {
      const notice = JSON.parse(payload) as {
        r: string;
        s: string | null;
        j: number;
        b?: number;
        e?: unknown[];
      };
      return {
        runId: notice.r,
        status: notice.s ?? undefined,
        ready: notice.j,
        ...(Array.isArray(notice.e) && typeof notice.b === 'number'
          ? { logged: { after: notice.b, events: notice.e } }
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

/** What a failed job keeps of its error (pg-boss stores it as the job's output). */
function failure(error: unknown): object {
  return { message: error instanceof Error ? error.message : String(error) };
}

/** A job a worker of this process holds: pg-boss's job, its worker, its claim. */
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
    this.#handed = this.#handed.filter((taken) => renewed.has(taken.job.id));
  }
}

/** A pool a host passed, as pg-boss's database: statements only (workers then poll). */
function poolDatabase(pool: Connection['client'] & { kind: 'pool' } extends { pool: infer P } ? P : never) {
  const query = (pool as unknown as { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> })
    .query;
  return {
    executeSql: (text: string, values?: unknown[]) =>
      query.call(pool, text, values) as Promise<{ rows: never[] }>,
  };
}

type PgClient = {
  query(text: string): Promise<unknown>;
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
): Promise<() => Promise<void>> {
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
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const client = current;
    current = undefined;
    if (!client) return;
    await client.query(`UNLISTEN "${channel}"`).catch(() => undefined);
    client.release();
  };
}

/** JSON text as a `json` parameter (sent as text, so no driver serializer touches it). */
function json(value: unknown) {
  return sql<string>`${JSON.stringify(value) ?? 'null'}::text::json`;
}

/** An ISO time (or null) as a `timestamptz` parameter. */
function time(iso: string | null) {
  return sql<string | null>`${iso}::text::timestamptz`;
}
