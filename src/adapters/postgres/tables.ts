/**
 * The tables of a stepwire database, as Kysely sees them. JSON columns are Postgres `json` (not
 * `jsonb`): they keep a value's text as written, so object keys come back in their order and strings
 * may hold `\u0000`, as with the in-memory storage. They are written from JSON text and read back as
 * text (`::text`), so a host pool's type parsers never change what the storage returns.
 * @module
 */
import type { ColumnType, Generated } from 'kysely';

/** JSON text written with a `::text::json` cast and read back with `::text`. @internal */
type JsonText = string;

/** A `timestamptz` column, written as an ISO string, read back as the driver gives it. @internal */
type Time = ColumnType<Date | string, string, string>;

/** Applied migrations, one row per version. @internal */
export interface MigrationsTable {
  version: number;
  name: string;
  applied_at: Generated<Time>;
}

/** Definitions by collection: entities, relationships, workflows, applications, scripts (and later triggers). @internal */
export interface DefinitionsTable {
  collection: string;
  key: string;
  value: JsonText;
  updated_at: Generated<Time>;
}

/** Run records; the listing columns are copied out of `record` on every write. @internal */
export interface RunsTable {
  id: string;
  workflow: string | null;
  status: string | null;
  started_at: ColumnType<Date | string | null, string | null, string | null>;
  finished_at: ColumnType<Date | string | null, string | null, string | null>;
  record: JsonText;
  /** The engine's scheduling state of a durable run; null for a run executed in one process. */
  durable: ColumnType<JsonText | null, JsonText | null | undefined, JsonText | null>;
  /** Events logged for the run so far (the last `seq` of `run_events`). */
  event_count: Generated<number>;
  /** Live changes to step records of a durable run (a `for_each` step's counts), merged when read. */
  progress: ColumnType<JsonText | null, JsonText | null | undefined, JsonText | null>;
  /**
   * What a run list shows of the run (`runSummary`), written with `record`; null for a run written
   * before migration 4, whose listing reads its record.
   */
  summary: ColumnType<JsonText | null, JsonText | null | undefined, JsonText | null>;
}

/** The event log of durable runs, in order per run. @internal */
export interface RunEventsTable {
  run_id: string;
  seq: number;
  event: JsonText;
}

/** One row per item of a durable `for_each` step (`item` from 0), kept as each item commits. @internal */
export interface StepResultsTable {
  run_id: string;
  step: string;
  /** The item's index; -1 is reserved for a whole step. */
  item: Generated<number>;
  /** Attempts made. */
  attempt: number;
  status: string;
  output: JsonText | null;
  error: JsonText | null;
  finished_at: ColumnType<Date | string | null, string | null, string | null>;
  logs: JsonText | null;
}

/** What triggers keep between firings (a cursor, the last row seen), by trigger name and key. @internal */
export interface TriggerStateTable {
  trigger: string;
  key: string;
  value: JsonText;
  updated_at: Generated<Time>;
}

/** Files shared by the processes on the database, one row each, by path (folder and name). @internal */
export interface FilesTable {
  path: string;
  content_type: string;
  size: number;
  data: Uint8Array;
  /** A random value given at each write, so a reader notices the file was stored again. */
  etag: string;
  updated_at: Generated<Time>;
}

/** The idempotency keys of file puts (their SHA-256), each with the path its first put stored. @internal */
export interface FileKeysTable {
  key: string;
  path: string;
  created_at: Generated<Time>;
}

/**
 * The audit log, one row per entry in append order (`seq`); a trigger refuses every update, delete
 * and truncate, so entries stay as written even for SQL run beside stepwire. @internal
 */
export interface AuditLogTable {
  /** The entry's place in the log; its id is this number zero-padded (`auditId`). Read as text. */
  seq: Generated<string>;
  at: Time;
  principal_id: string;
  action: string;
  resource: string;
  /** The entry without its id, as appended. */
  entry: JsonText;
}

/**
 * The step queue: one row a job that waits (`ready`), runs (`active`, leased to a worker until
 * `lease_until`) or failed for good; a completed job is deleted. @internal
 */
export interface StepJobsTable {
  /** Read as text. */
  id: Generated<string>;
  run_id: string;
  data: JsonText;
  state: Generated<string>;
  start_after: Generated<Time>;
  lease_until: Time | null;
  deliveries: Generated<number>;
  created_at: Generated<Time>;
  started_at: Time | null;
  error: JsonText | null;
}

/** Every table of the schema. @internal */
export interface Tables {
  migrations: MigrationsTable;
  definitions: DefinitionsTable;
  runs: RunsTable;
  run_events: RunEventsTable;
  step_results: StepResultsTable;
  trigger_state: TriggerStateTable;
  files: FilesTable;
  file_keys: FileKeysTable;
  audit_log: AuditLogTable;
  step_jobs: StepJobsTable;
}
