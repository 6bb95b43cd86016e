/**
 * Where a command keeps definitions and run records: the database `--db` names, the project's own
 * embedded database, or memory.
 * @module
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { StorageAdapter } from '../adapters/types.js';
import type { RunQueue } from '../adapters/queue.js';
import { openPostgres, type PostgresFileStore } from '../adapters/postgres/index.js';
import { UsageError } from './io.js';

/** An opened database, or none (memory). @internal */
export interface CommandDatabase {
  /** The storage to give the engine; undefined keeps everything in memory. */
  storage: StorageAdapter | undefined;
  /** The durable run queue on the same database; undefined in memory. */
  queue: RunQueue | undefined;
  /** The files in the same database, shared by every process on it; undefined in memory. */
  files: PostgresFileStore | undefined;
  /** Where the data lives, for the start-up message. */
  where: string;
  /** Checkpoints and closes the database; safe to call once the engine is done. */
  close(): Promise<void>;
}

/**
 * Opens `db` (a `postgres://` URL or a directory), else `<project>/.stepwire/db` when `fallback` is
 * `project`, else nothing; in the Postgres schema `schema` (default `stepwire`).
 * @throws {@link UsageError} when `db` is empty or names something that is not a folder.
 * @internal
 */
export async function openDatabase(
  project: string,
  db: string | undefined,
  fallback: 'project' | 'memory',
  schema?: string,
): Promise<CommandDatabase> {
  if (db !== undefined) await checkDb(db);
  if (db === undefined && fallback === 'memory')
    return {
      storage: undefined,
      queue: undefined,
      files: undefined,
      where: 'memory (nothing is kept)',
      close: async () => {},
    };
  const target =
    db === undefined
      ? join(resolve(project), '.stepwire', 'db')
      : /^postgres(ql)?:\/\//.test(db)
        ? db
        : resolve(db);
  const opened = await openPostgres(target, schema === undefined ? {} : { schema });
  return {
    storage: opened.storage,
    queue: opened.queue,
    files: opened.files,
    where: describeTarget(target),
    close: () => opened.close(),
  };
}

/** The target without a password. */
function describeTarget(target: string): string {
  if (!/^postgres(ql)?:\/\//.test(target)) return target;
  const url = new URL(target);
  if (url.password) url.password = '***';
  return url.toString();
}

/** `--db` names a postgres:// URL, a folder, or nothing yet (a folder to create). */
async function checkDb(db: string): Promise<void> {
  if (db.trim() === '') throw new UsageError('--db must name a postgres:// URL or a folder');
  if (/^postgres(ql)?:\/\//.test(db)) return;
  const info = await stat(db).catch(() => undefined);
  if (info !== undefined && !info.isDirectory())
    throw new UsageError(`--db ${db} is not a folder or postgres:// URL`);
}
