import { postgresQueue, type PostgresQueue, type QueueTiming } from './queue.js';
import { connect, type PostgresTarget } from './connect.js';
import { migrate } from './migrations.js';
import { PostgresStorage } from './storage.js';
import { PostgresFileStore, resolveFilesOptions, type PostgresFilesOptions } from './files.js';

/** Options of {@link openPostgres}. */
export interface PostgresOptions {
  /**
   * The Postgres schema that holds stepwire's tables, created when missing: lowercase letters, digits
   * and `_`, starting with a letter or `_`, at most 45 characters, not starting with `pg_` (the
   * queue's jobs live in it too, in `step_jobs`). Several projects may share one database, each in
   * its own schema.
   * @default 'stepwire'
   */
  schema?: string;
  /**
   * Whether `close()` also closes a client you passed as `{ pool }` (`pool.end()`) or `{ pglite }`
   * (checkpoint, then `close()`). A URL, a directory or nothing is always closed.
   * @default false
   */
  closeClient?: boolean;
  /** Timing of the durable queue (leases, polling); see {@link QueueTiming}. */
  queue?: QueueTiming;
  /**
   * Whether the durable queue sends the statements of every step to a server as named prepared
   * statements, which each connection parses and plans once. Turn it off behind a connection pooler
   * that does not keep them from one transaction to the next (PgBouncer in transaction mode before
   * 1.21, or without `max_prepared_statements`): each statement is then sent as text. PGlite ignores it.
   * @default true
   */
  preparedStatements?: boolean;
  /** The file store `files`: the urls it hands out and its size limit; see {@link PostgresFilesOptions}. */
  files?: PostgresFilesOptions;
}

/** A database opened with {@link openPostgres}. */
export interface PostgresDatabase {
  /** Definitions, scripts and run records in the database: pass it as `new Engine({ storage })`. */
  storage: PostgresStorage;
  /**
   * The durable run queue on the same database (its table `step_jobs`): pass it as `new Engine({ storage, queue })`
   * and call `engine.work()` in every process that should execute steps.
   */
  queue: PostgresQueue;
  /**
   * Files in the database, shared by every process that opens it: pass it as a file store,
   * `new Engine({ files: { shared: db.files } })`, and serve it at its `baseUrl` (`stepwire serve` and
   * `stepwire worker` use it for the `memory` provider of a project's `upload_file` steps).
   * Streamed, size-limited (10 MiB by default), exactly once by idempotency key.
   */
  files: PostgresFileStore;
  /**
   * Closes the database: ends the pool openPostgres made, or checkpoints and closes PGlite and
   * releases the directory's lock. Calls to the storage afterwards throw a `StorageError` (`closed`).
   * Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/** Unquoted Postgres identifiers stepwire accepts as a schema name (no quoting, no case folding). */
const SCHEMA_NAME = /^(?!pg_|information_schema$)[a-z_][a-z0-9_]{0,44}$/;

/**
 * Opens (and creates or migrates) a stepwire database: a Postgres server, an embedded PGlite
 * directory, or an in-memory PGlite for tests.
 *
 * - a `postgres://` or `postgresql://` URL: a node-postgres pool (package `pg`); what was written
 *   survives any crash, as the server commits it;
 * - a directory path: PGlite (package `@electric-sql/pglite`) keeping its files there, created when
 *   missing (a directory holding other files is refused) and locked while open: a second open gets a
 *   `StorageError` with code `locked` naming the holder's pid; a lock left by a killed process is
 *   taken over. What was written survives a killed process, not a power loss: PGlite on Node does
 *   not fsync;
 * - nothing: an in-memory PGlite, gone when closed;
 * - `{ pool }` or `{ pglite }`: a client you made, left open by `close()` unless `closeClient`.
 *
 * The schema's tables are created or migrated under an advisory lock, so any number of processes
 * may open one database at once.
 * @throws {@link StorageError} `locked`, `unavailable` (server not reachable) or `schema_too_new`;
 *   `TypeError` for a target or option of the wrong shape; `StepwireError` `missing_dependency` when
 *   the driver package is not installed.
 * @example
 * ```ts
 * import { Engine } from 'stepwire';
 * import { openPostgres } from 'stepwire/postgres';
 * const db = await openPostgres(process.env.DATABASE_URL ?? './.stepwire/db');
 * const engine = new Engine({ storage: db.storage });
 * // ...
 * await db.close();
 * ```
 */
export async function openPostgres(
  target?: PostgresTarget,
  options: PostgresOptions = {},
): Promise<PostgresDatabase> {
  const { schema, closeClient, queue: timing, preparedStatements } = normalize(options);
  const filesOptions = resolveFilesOptions(options.files);
  const connection = await connect(target, closeClient);
  try {
    await migrate(connection.db, schema, connection.where);
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
  let closing: Promise<void> | undefined;
  const scoped = connection.db.withSchema(schema);
  const storage = new PostgresStorage(
    scoped,
    connection.where,
    () => closing !== undefined,
    connection.exclusive === true,
  );
  const queue = postgresQueue(connection, schema, scoped, timing, preparedStatements);
  const files = new PostgresFileStore(scoped, connection.where, () => closing !== undefined, filesOptions);
  const close = async () => {
    try {
      await queue.close();
    } finally {
      await connection.close();
    }
  };
  return { storage, queue, files, close: () => (closing ??= close()) };
}

function normalize(
  options: PostgresOptions,
): Required<Omit<PostgresOptions, 'queue' | 'files'>> & PostgresOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('openPostgres: options must be an object');
  const { schema = 'stepwire', closeClient = false, preparedStatements = true } = options;
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema))
    throw new TypeError(
      `openPostgres: options.schema ${JSON.stringify(schema)} is not a schema name stepwire accepts:` +
        ' lowercase letters, digits and _, starting with a letter or _, at most 45 characters, not starting with pg_' +
        ' and not information_schema (both are the system catalog)',
    );
  if (typeof closeClient !== 'boolean')
    throw new TypeError('openPostgres: options.closeClient must be a boolean');
  if (typeof preparedStatements !== 'boolean')
    throw new TypeError('openPostgres: options.preparedStatements must be a boolean');
  if (options.queue !== undefined && (typeof options.queue !== 'object' || options.queue === null))
    throw new TypeError('openPostgres: options.queue must be an object');
  if (options.queue) checkTiming(options.queue);
  return { schema, closeClient, preparedStatements, ...(options.queue ? { queue: options.queue } : {}) };
}

/**
 * The least value of each queue timing the queue accepts: a smaller one would only fail
 * later, inside `engine.work()`, where it reaches `onError` alone and no step runs.
 */
const LEAST_TIMING: Record<keyof QueueTiming, number> = {
  heartbeatSeconds: 10,
  monitorSeconds: 1,
  pollSeconds: 0.5,
};

function checkTiming(timing: QueueTiming): void {
  for (const [key, least] of Object.entries(LEAST_TIMING)) {
    const value: unknown = timing[key as keyof QueueTiming];
    if (value === undefined) continue;
    const whole = key === 'heartbeatSeconds'; // leases are whole seconds
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value < least ||
      (whole && !Number.isInteger(value))
    )
      throw new TypeError(
        `openPostgres: options.queue.${key} must be a ${whole ? 'whole ' : ''}number of seconds, at least ${least};` +
          ` got ${String(value)}`,
      );
  }
}
