/**
 * Versioned migrations of a stepwire schema, applied when a database is opened. Every open takes a
 * transaction-scoped advisory lock for its schema first, then creates the schema and the
 * `migrations` table when missing and applies the versions not yet recorded, all in that one
 * transaction: any number of processes may open one database at once, and exactly one of them
 * applies each version.
 * @module
 */
import { sql, type Kysely, type SchemaModule } from 'kysely';
import { StorageError } from '../../errors/storage-error.js';
import type { Tables } from './tables.js';

/** One version of the tables. @internal */
export interface Migration {
  /** Applied in increasing order; never reused or renumbered once released. */
  version: number;
  /** What the version does, kept in the `migrations` table. */
  name: string;
  /**
   * Creates or changes tables; `schema` is already scoped to the stepwire schema, whose `name` raw
   * statements run on `db` (the migration's transaction) must name.
   */
  up(schema: SchemaModule, context: { db: Kysely<Tables>; name: string }): Promise<void>;
}

/** First key of the advisory lock ("stpw"); the second is the hash of the schema name. */
const LOCK_CLASS = 0x73747077;

/** Every migration, oldest first. @internal */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'definitions, runs, step results and trigger state',
    async up(schema) {
      await schema
        .createTable('definitions')
        .addColumn('collection', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('key', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('value', 'json', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('definitions_pkey', ['collection', 'key'])
        .execute();
      await schema
        .createTable('runs')
        .addColumn('id', sql`text collate "C"`, (c) => c.primaryKey())
        .addColumn('workflow', 'text')
        .addColumn('status', 'text')
        .addColumn('started_at', 'timestamptz')
        .addColumn('finished_at', 'timestamptz')
        .addColumn('record', 'json', (c) => c.notNull())
        .execute();
      // Newest first, by (started_at, id): all runs, one workflow's, or those with one status.
      await schema.createIndex('runs_started').on('runs').columns(['started_at', 'id']).execute();
      await schema
        .createIndex('runs_workflow_started')
        .on('runs')
        .columns(['workflow', 'started_at', 'id'])
        .execute();
      await schema
        .createIndex('runs_status_started')
        .on('runs')
        .columns(['status', 'started_at', 'id'])
        .execute();
      await schema
        .createTable('step_results')
        .addColumn('run_id', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('step', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('output', 'json')
        .addColumn('error', 'json')
        .addColumn('finished_at', 'timestamptz')
        .addPrimaryKeyConstraint('step_results_pkey', ['run_id', 'step'])
        .addForeignKeyConstraint('step_results_run_fkey', ['run_id'], 'runs', ['id'], (c) =>
          c.onDelete('cascade'),
        )
        .execute();
      await schema
        .createTable('trigger_state')
        .addColumn('trigger', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('key', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('value', 'json', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('trigger_state_pkey', ['trigger', 'key'])
        .execute();
    },
  },
  {
    version: 2,
    name: 'durable runs: scheduling state and event log',
    async up(schema) {
      await schema
        .alterTable('runs')
        .addColumn('durable', 'json')
        .addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await schema
        .createTable('run_events')
        .addColumn('run_id', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('event', 'json', (c) => c.notNull())
        .addPrimaryKeyConstraint('run_events_pkey', ['run_id', 'seq'])
        .addForeignKeyConstraint('run_events_run_fkey', ['run_id'], 'runs', ['id'], (c) =>
          c.onDelete('cascade'),
        )
        .execute();
    },
  },
  {
    version: 3,
    name: 'durable for_each: item results and live progress',
    async up(schema) {
      await schema.alterTable('runs').addColumn('progress', 'json').execute();
      await schema.alterTable('step_results').dropConstraint('step_results_pkey').execute();
      await schema
        .alterTable('step_results')
        .addColumn('item', 'integer', (c) => c.notNull().defaultTo(-1))
        .addColumn('logs', 'json')
        .execute();
      await schema
        .alterTable('step_results')
        .addPrimaryKeyConstraint('step_results_pkey', ['run_id', 'step', 'item'])
        .execute();
    },
  },
  {
    version: 4,
    name: 'run summaries: what a run list shows, kept beside the record',
    async up(schema) {
      // Null for a run written before this version: a listing summarizes its record instead.
      await schema.alterTable('runs').addColumn('summary', 'json').execute();
    },
  },
  {
    version: 5,
    name: 'files shared by every process, and the idempotency keys of their puts',
    async up(schema, { db, name }) {
      await schema
        .createTable('files')
        .addColumn('path', sql`text collate "C"`, (c) => c.primaryKey())
        .addColumn('content_type', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('data', 'bytea', (c) => c.notNull())
        .addColumn('etag', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      // Kept uncompressed out of line, so a part of a file is read without reading all of it.
      await sql`alter table ${sql.id(name, 'files')} alter column data set storage external`.execute(db);
      await schema
        .createTable('file_keys')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('path', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
  {
    version: 6,
    name: 'the audit log, append-only',
    async up(schema, { db, name }) {
      await schema
        .createTable('audit_log')
        .addColumn('seq', 'bigserial', (c) => c.primaryKey())
        .addColumn('at', 'timestamptz', (c) => c.notNull())
        .addColumn('principal_id', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('entry', 'json', (c) => c.notNull())
        .execute();
      // Oldest first from a cursor, by one filter: the others are checked on the rows it finds.
      for (const column of ['action', 'principal_id', 'resource'] as const)
        await schema
          .createIndex(`audit_log_${column}_seq`)
          .on('audit_log')
          .columns([column, 'seq'])
          .execute();
      // Append-only even for SQL run beside stepwire: a row may be inserted, never changed or removed.
      const refuse = sql.id(name, 'audit_log_append_only');
      await sql`create function ${refuse}() returns trigger language plpgsql as $$
        begin
          raise exception 'audit_log is append-only: % is not allowed', tg_op
            using errcode = 'insufficient_privilege';
        end
        $$`.execute(db);
      await sql`create trigger audit_log_no_change before update or delete on ${sql.id(name, 'audit_log')}
        for each row execute function ${refuse}()`.execute(db);
      await sql`create trigger audit_log_no_truncate before truncate on ${sql.id(name, 'audit_log')}
        for each statement execute function ${refuse}()`.execute(db);
    },
  },
  {
    version: 7,
    name: 'runs by workflow and status, newest first',
    async up(schema) {
      // A list by workflow and status (the console's filters, a bulk action's selection) reads only
      // the runs it answers: with the single-column indexes, one of them read every run of the other.
      await schema
        .createIndex('runs_workflow_status_started')
        .on('runs')
        .columns(['workflow', 'status', 'started_at', 'id'])
        .execute();
    },
  },
  {
    version: 8,
    name: 'the step queue in a table of its own',
    async up(schema, { db, name }) {
      // One row a job that waits, runs or failed for good; a completed job is deleted in the commit
      // of its step. `deliveries` counts the times a worker took it (the lease's token too).
      await schema
        .createTable('step_jobs')
        .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
        .addColumn('run_id', sql`text collate "C"`, (c) => c.notNull())
        .addColumn('data', 'jsonb', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().defaultTo('ready'))
        .addColumn('start_after', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('lease_until', 'timestamptz')
        .addColumn('deliveries', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn('started_at', 'timestamptz')
        .addColumn('error', 'jsonb')
        .execute();
      // A fetch reads the ready jobs in order of their time, and the leases that lapsed.
      await sql`create index step_jobs_ready on ${sql.id(name, 'step_jobs')} (start_after, id) where state = 'ready'`.execute(
        db,
      );
      await sql`create index step_jobs_leased on ${sql.id(name, 'step_jobs')} (lease_until) where state = 'active'`.execute(
        db,
      );
      // A database an earlier version ran keeps its open jobs in the table of the pg-boss package, in
      // the schema `<schema>_jobs`: they move here (that schema is left as it is, for its owner to drop).
      // Only a table of the shape pg-boss gave it: anything else there is left alone.
      const columns = await sql<{
        count: string;
      }>`select count(*)::text as count from information_schema.columns
        where table_schema = ${`${name}_jobs`} and table_name = 'job'
          and column_name in ('name', 'data', 'state', 'start_after', 'retry_count', 'created_on')`.execute(
        db,
      );
      if (columns.rows[0]?.count === '6')
        await sql`insert into ${sql.id(name, 'step_jobs')} (run_id, data, start_after, deliveries, created_at)
          select data->>'run', data, start_after, retry_count, created_on from ${sql.id(`${name}_jobs`, 'job')}
          where name = 'steps' and state::text in ('created', 'retry', 'active') and data ? 'run'
          order by created_on`.execute(db);
    },
  },
  {
    version: 9,
    name: 'a step commit as one function call',
    async up(_schema, { db, name }) {
      await sql.raw(writeRunsFunction(name, false)).execute(db);
    },
  },
  {
    version: 10,
    name: "a step commit's notification sent by its own transaction",
    async up(_schema, { db, name }) {
      // An overload with the channel: the two-argument one stays for processes of the version before.
      await sql.raw(writeRunsFunction(name, true)).execute(db);
    },
  },
];

/**
 * The function that writes the runs of a commit (see the queue's `write_runs` call): PL/pgSQL, so that
 * each connection plans its statements once and then reuses the plans, where the one statement sent as
 * text was parsed and planned at every step (most of its cost on the server). One run at a time, by
 * its key: one statement joining all of them to `runs` was planned as a scan of the whole table.
 *
 * `writes` is a JSON array of one object a run: `n` its place in the array, `id`, `i` true for a new
 * run (inserted), `v` the version (`xmin`) it must still be at (none: the caller holds its row's lock), its columns (`w`, `s`, `a`,
 * `f`, `r`, `d`, `m`, `p`), `e` its events, `j` its jobs (`j` the job, `d` its delay in ms, `h` whether
 * it is handed to the worker, leased for `lease_seconds`) and `h` the job its step held (deleted). A
 * row for each run written: its place, the count of events it had before, its new version and the
 * id of the job handed over.
 *
 * With `notify` (migration 10), a third argument names the channel, and a run given `x` gets a
 * notification, sent when the transaction commits: `x` followed by `}` or, when `y` is given, by
 * `,"b":` and the run's event count before, then `y`.
 */
function writeRunsFunction(schema: string, notify: boolean): string {
  const id = (table: string) => `"${schema.replaceAll('"', '""')}"."${table}"`;
  const notifying = `
        if w.x is not null then
          perform pg_notify(channel, case when w.y is null then w.x || '}' else w.x || ',"b":' || base || w.y end);
        end if;`;
  return `create or replace function ${id('write_runs')}(writes text, lease_seconds int${notify ? ', channel text' : ''})
    returns table (n int, base int, version text, handed text) language plpgsql as $body$
    #variable_conflict use_column
    declare
      w record;
    begin
      for w in
        select * from json_to_recordset(writes::json) as i(
          n int, id text, i boolean, v text, w text, s text, a timestamptz, f timestamptz,
          r json, d json, m json, p json, e json, j json, h bigint${notify ? ', x text, y text' : ''})
        order by i.id
      loop
        if w.i then
          insert into ${id('runs')} as r
            (id, workflow, status, started_at, finished_at, record, durable, summary, progress, event_count)
          values (w.id, w.w, w.s, w.a, w.f, w.r, w.d, w.m, w.p, json_array_length(w.e))
          returning 0, r.xmin::text into base, version;
        else
          update ${id('runs')} as r set workflow = w.w, status = w.s, started_at = w.a, finished_at = w.f,
            record = w.r, durable = w.d, summary = w.m, progress = w.p,
            event_count = r.event_count + json_array_length(w.e)
          where r.id = w.id and (w.v is null or r.xmin = w.v::xid)
          returning r.event_count - json_array_length(w.e), r.xmin::text into base, version;
          continue when not found;
        end if;
        insert into ${id('run_events')} (run_id, seq, event)
        select w.id, base + x.ordinality::int, x.value from json_array_elements(w.e) with ordinality as x;
        handed := null;
        if json_array_length(w.j) > 0 then
          with enqueued as (
            insert into ${id('step_jobs')} (run_id, data, state, start_after, deliveries, lease_until, started_at)
            select w.id, q.j::jsonb, case when q.h then 'active' else 'ready' end,
              now() + q.d * interval '1 millisecond', case when q.h then 1 else 0 end,
              case when q.h then now() + lease_seconds * interval '1 second' end, case when q.h then now() end
            from json_to_recordset(w.j) as q(j json, d float8, h boolean)
            returning id, state
          )
          select e.id::text into handed from enqueued e where e.state = 'active' limit 1;
        end if;
        if w.h is not null then
          delete from ${id('step_jobs')} where id = w.h;
        end if;${notify ? notifying : ''}
        n := w.n;
        return next;
      end loop;
    end
    $body$`;
}

/**
 * Brings `schema` to the latest version, under the schema's advisory lock.
 * @throws {@link StorageError} `schema_too_new` when the database was migrated by a newer stepwire.
 * @internal
 */
export async function migrate(
  db: Kysely<Tables>,
  schema: string,
  where: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${LOCK_CLASS}::int4, hashtext(${schema}::text))`.execute(tx);
    await tx.schema.createSchema(schema).ifNotExists().execute();
    const scoped = tx.schema.withSchema(schema);
    await scoped
      .createTable('migrations')
      .ifNotExists()
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    const rows = await tx.withSchema(schema).selectFrom('migrations').select('version').execute();
    const applied = new Set(rows.map((row) => Number(row.version)));
    const latest = migrations.at(-1)?.version ?? 0;
    const newest = Math.max(0, ...applied);
    if (newest > latest)
      throw new StorageError(
        'schema_too_new',
        `schema "${schema}" of ${where} is at version ${newest}, newer than this version of stepwire knows (${latest}): update stepwire`,
        where,
      );
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await migration.up(scoped, { db: tx, name: schema });
      await tx
        .withSchema(schema)
        .insertInto('migrations')
        .values({ version: migration.version, name: migration.name })
        .execute();
    }
  });
}
