/**
 * Durable storage on Postgres: `openPostgres` opens a Postgres server (through `pg`), an embedded
 * PGlite directory or an in-memory PGlite (through `@electric-sql/pglite`), creates or migrates
 * stepwire's tables in a schema, and hands back a storage adapter for `new Engine({ storage })`.
 * Node-only; `pg` and `@electric-sql/pglite` are optional peer dependencies, loaded when used.
 * @example
 * ```ts
 * import { Engine } from 'stepwire';
 * import { openPostgres } from 'stepwire/postgres';
 * const db = await openPostgres('postgres://user@localhost:5432/app', { schema: 'stepwire' });
 * const engine = new Engine({ storage: db.storage });
 * ```
 * @module
 */
export { openPostgres, type PostgresOptions, type PostgresDatabase } from './open.js';
export type { PGliteLike, PostgresPoolLike, PostgresTarget } from './connect.js';
export { PostgresStorage } from './storage.js';
export { PostgresFileStore, type PostgresFilesOptions, type OpenedFile } from './files.js';
export type { PostgresQueue, QueueTiming, QueueWorker, WorkOptions } from './queue.js';
export { StorageError, isStorageError } from '../../errors/index.js';
