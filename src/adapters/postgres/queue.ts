/**
 * The durable run queue of `openPostgres`, on pg-boss in the same database: one pg-boss job per
 * step, in the schema `<schema>_jobs`. A commit locks the run's row, writes the run, its events and
 * the jobs it makes ready, and completes the delivered job, all in one transaction; LISTEN/NOTIFY
 * wakes the workers and the processes waiting on a run, so a chain of steps never waits a poll.
 * @module
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { StepwireError } from '../../errors/index.js';
import { importOptional } from '../import-optional.js';
import type {
  Delivery,
  DurableRun,
  EnqueuedJob,
  ItemResult,
  LoggedEvent,
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
  #listeners = new Set<(runId: string, status?: string) => void>();
  #unlisten: Promise<() => Promise<void>> | undefined;
  #closed = false;
  /** pg-boss workers of this process, woken when a delayed job of this process comes due. */
  #workers = new Set<string>();
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
    return this.#db.transaction().execute(async (tx) => {
      let change: RunChange | undefined;
      if (guess && (await this.#write(tx, id, guess, boss, module, loaded!.version))) change = guess;
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
        if (change) await this.#write(tx, id, change, boss, module);
      }
      if (delivery) await this.#complete(tx, delivery, boss, module);
      return change;
    });
  }

  async commitState(
    id: string,
    delivery: Delivery | undefined,
    decide: (run: RunState) => StateChange | undefined,
  ): Promise<StateChange | undefined> {
    const { boss, module } = await this.#boss();
    if (unstorableText(id)) return delivery ? this.#completeAlone(delivery, boss, module) : undefined;
    return this.#db.transaction().execute(async (tx) => {
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
          select pg_notify(${this.#channel}, ${id})`.execute(tx);
        await this.#enqueue(tx, change.jobs, boss, module);
      }
      if (delivery) await this.#complete(tx, delivery, boss, module);
      return change;
    });
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
    if (!row || row.durable === null) return undefined;
    const record = JSON.parse(row.record) as { status?: unknown };
    // The status column is ahead of the record once a worker took the run's first step.
    if (row.status !== null) record.status = row.status;
    return { record, state: JSON.parse(row.durable), version: Number(row.version) };
  }

  /** Appends `events`, marks a queued run running and notifies; the run as it is then, if not ended. */
  async #logAndLoad(id: string, events: unknown[]) {
    const text = JSON.stringify(events);
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
        pg_notify(${this.#channel}, ${id} || ' ' || status) as notified
      from counted`.execute(this.#db);
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

  watch(listener: (runId: string, status?: string) => void): () => void {
    this.#listeners.add(listener);
    // Once closed nothing is listened to (the database is gone; a follower then polls and fails).
    if (!this.#closed && !this.#unlisten) {
      const unlisten = this.#listen();
      unlisten.catch(() => undefined); // a listener that cannot start is not an unhandled rejection
      this.#unlisten = unlisten;
    }
    return () => void this.#listeners.delete(listener);
  }

  async work(
    handler: (delivery: Delivery) => Promise<void>,
    options: QueueWorkOptions = {},
  ): Promise<QueueWorker> {
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    const { boss } = await this.#boss();
    // One pg-boss worker per slot: a worker that just handled a job fetches again at once (one
    // notification wakes every idle worker once, so a backlog must not wait for the next poll).
    const ids: string[] = [];
    for (let slot = 0; slot < concurrency; slot++) {
      const id = await boss.work<StepJob>(
        QUEUE,
        {
          batchSize: 1,
          pollingIntervalSeconds: this.#timing.pollSeconds,
          // A delayed job (a retry, a run's time limit) sends no notification when it comes due.
          notifyPollingIntervalSeconds: this.#timing.pollSeconds,
        },
        async ([job]) => {
          if (!job) return;
          try {
            await handler({ job: job.data, redelivered: job.retryCount, signal: job.signal, ref: job });
          } catch (error) {
            options.onError?.(error);
            throw error;
          } finally {
            boss.notifyWorker(id);
          }
        },
      );
      ids.push(id);
      this.#workers.add(id);
    }
    return {
      stop: async () => {
        for (const id of ids) this.#workers.delete(id);
        await Promise.all(ids.map((id) => boss.offWork(QUEUE, { id, wait: true })));
      },
    };
  }

  async log(id: string, events: unknown[]): Promise<void> {
    await this.#boss();
    if (unstorableText(id)) return;
    const text = JSON.stringify(events);
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
      select pg_notify(${this.#channel}, ${id})`.execute(this.#db);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#wakeTimers) clearTimeout(timer);
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
  ): Promise<boolean> {
    const summary = runSummary(id, change.record);
    const columns = runColumns(summary);
    const events = JSON.stringify(change.events);
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
      select pg_notify(${this.#channel}, ${`${id} ${columns.status ?? ''}`}) from updated`.execute(tx);
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
    for (const { delayMs } of jobs) if (delayMs) this.#wakeAfter(boss, delayMs);
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
    const job = delivery.ref as Job;
    await boss.complete(QUEUE, { id: job.id, retryCount: job.retryCount }, null, {
      db: module.fromKysely(tx),
    });
  }

  /** Completes a delivered job of a run that cannot exist; nothing else is written. */
  async #completeAlone(delivery: Delivery, boss: Boss, module: BossModule): Promise<undefined> {
    await this.#db.transaction().execute((tx) => this.#complete(tx, delivery, boss, module));
    return undefined;
  }

  /** Wakes this process's workers when a delayed job comes due, rather than at their next poll. */
  #wakeAfter(boss: Boss, delayMs: number): void {
    const timer = setTimeout(() => {
      this.#wakeTimers.delete(timer);
      for (const id of this.#workers) boss.notifyWorker(id);
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
      useListenNotify: true,
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
      notify: true,
      heartbeatSeconds: this.#timing.heartbeatSeconds,
      retryLimit: MAX_REDELIVERIES + 1,
      retryDelay: 0,
      expireInSeconds: 24 * 60 * 60,
      deleteAfterSeconds: 60 * 60,
    });
    return { boss, module };
  }

  /** Listens for commits of any process: LISTEN on the server, PGlite's own listener in process. */
  async #listen(): Promise<() => Promise<void>> {
    const deliver = (payload: string) => {
      const space = payload.indexOf(' ');
      const runId = space < 0 ? payload : payload.slice(0, space);
      const status = space < 0 ? undefined : payload.slice(space + 1) || undefined;
      for (const listener of this.#listeners) {
        try {
          listener(runId, status);
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
