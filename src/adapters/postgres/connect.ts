/**
 * Turns an `openPostgres` target into a Kysely instance: a node-postgres pool for a URL, PGlite for
 * a directory or for nothing, or the client the host passed. `pg` and `@electric-sql/pglite` are
 * optional peers, imported on first use.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import type { PGlite as PGliteClient, PostgresPool } from 'kysely';
import { StorageError } from '../../errors/storage-error.js';
import { importOptional, namedExport } from '../import-optional.js';
import { LOCK_FILE, lockDirectory } from './directory-lock.js';
import type { Tables } from './tables.js';

/**
 * A node-postgres `Pool` (`new pg.Pool(...)`), as `openPostgres({ pool })` takes it. Declared here, not
 * as Kysely's type: kysely is ESM-only, and the CommonJS declarations may not import from it.
 */
export interface PostgresPoolLike {
  connect(): Promise<unknown>;
  query(...args: never[]): unknown;
  end(): Promise<void>;
}

/** A PGlite database (`new PGlite(...)` of `@electric-sql/pglite`), as `openPostgres({ pglite })` takes it. */
export interface PGliteLike {
  query(...args: never[]): Promise<unknown>;
  transaction(...args: never[]): Promise<unknown>;
  close(): Promise<void>;
}

/** Where a database is: a URL, a directory, nothing (in memory), or a client the host made. */
export type PostgresTarget = string | { pool: PostgresPoolLike } | { pglite: PGliteLike };

/** An open database. @internal */
export interface Connection {
  db: Kysely<Tables>;
  /** Names the database in messages, e.g. `the PGlite directory "/srv/db"` (a URL never shows its password). */
  where: string;
  /** Closes what `openPostgres` made (and the host's client when told to); checkpoints PGlite first. */
  close(): Promise<void>;
  /** The driver's client below `db`, for the queue: a pool (with its URL when openPostgres made it) or PGlite. */
  client: { kind: 'pool'; pool: PostgresPool; url?: string } | { kind: 'pglite'; pglite: PGliteClient };
  /** True for an embedded directory: it is locked, so no other process uses the database. */
  exclusive?: boolean;
}

type PoolClass = new (config: {
  connectionString: string;
  connectionTimeoutMillis: number;
}) => PostgresPool & {
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(
    event: 'connect',
    listener: (client: { on(event: 'error', listener: () => void): unknown }) => void,
  ): unknown;
};
type PGliteClass = { create(dataDir?: string): Promise<PGliteClient> };

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** Opens the target; `closeClient` says whether a client the host passed is closed with it. @internal */
export async function connect(target: PostgresTarget | undefined, closeClient: boolean): Promise<Connection> {
  if (target === undefined) return embedded(undefined);
  if (typeof target === 'string') {
    if (POSTGRES_URL.test(target))
      return server(await newPool(target), `the Postgres database ${redact(target)}`, true, target);
    if (URL_SCHEME.test(target) || target.trim() === '')
      throw new TypeError(
        `openPostgres: target "${redact(target)}" is neither a postgres:// or postgresql:// URL nor a directory path`,
      );
    return embedded(target);
  }
  if (typeof target === 'object' && target !== null && 'pool' in target && target.pool) {
    if (!hasMethods(target.pool, ['connect', 'query']))
      throw new TypeError('openPostgres: { pool } must be a node-postgres Pool (with connect and query)');
    return server(
      target.pool as unknown as PostgresPool,
      'the Postgres pool passed as { pool }',
      closeClient,
    );
  }
  if (typeof target === 'object' && target !== null && 'pglite' in target && target.pglite) {
    if (!hasMethods(target.pglite, ['query', 'transaction']))
      throw new TypeError('openPostgres: { pglite } must be a PGlite instance (with query and transaction)');
    return pglite(
      target.pglite as unknown as PGliteClient,
      'the PGlite database passed as { pglite }',
      closeClient,
    );
  }
  throw new TypeError(
    'openPostgres: target must be a postgres:// URL, a directory path, { pool }, { pglite } or nothing',
  );
}

async function newPool(url: string): Promise<InstanceType<PoolClass>> {
  const module = await importOptional(
    'pg',
    'openPostgres',
    () => import('pg') as Promise<unknown>,
    'pass a pool you made as { pool }',
  );
  const pool = new (namedExport<PoolClass>(module, 'Pool'))({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs(url),
  });
  // An idle connection the server drops makes the pool emit `error`; the pool discards it and the
  // next query opens a new one. Without a listener, Node would end the process on that event.
  pool.on('error', () => undefined);
  // A connection checked out when the server goes away (a restart) emits `error` on its client: the
  // query in flight is rejected anyway, and the pool drops the client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** How long opening a connection may take when the URL does not say (`connect_timeout`). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * The URL's `connect_timeout` in ms (seconds, as libpq reads it; node-postgres itself ignores it),
 * else 10 s: a server that accepts the connection and never answers fails the open, not hangs it.
 */
function connectTimeoutMs(url: string): number {
  let seconds = Number.NaN;
  try {
    seconds = Number(new URL(url).searchParams.get('connect_timeout') ?? Number.NaN);
  } catch {
    // An unparsable URL fails in the driver with its own message.
  }
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : CONNECT_TIMEOUT_MS;
}

async function server(pool: PostgresPool, where: string, owned: boolean, url?: string): Promise<Connection> {
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    if (owned) await db.destroy().catch(() => undefined);
    throw new StorageError('unavailable', `could not reach ${where}: ${(error as Error).message}`, where, {
      cause: error,
    });
  }
  return {
    db,
    where,
    close: () => (owned ? db.destroy() : Promise.resolve()),
    client: { kind: 'pool', pool, ...(url === undefined ? {} : { url }) },
  };
}

async function embedded(dir: string | undefined): Promise<Connection> {
  const module = await importOptional(
    '@electric-sql/pglite',
    'openPostgres',
    () => import('@electric-sql/pglite') as Promise<unknown>,
    'pass a postgres:// URL',
  );
  const PGlite = namedExport<PGliteClass>(module, 'PGlite');
  if (dir === undefined) return pglite(await PGlite.create(), 'the in-memory PGlite database', true);
  const path = resolve(dir);
  makeDirectory(path);
  refuseForeign(path);
  const lock = lockDirectory(path);
  try {
    // Checked again under the lock: a creation another process had cut short is cleared.
    clearCutShortCreation(path);
    const where = `the PGlite directory "${path}"`;
    const client = await PGlite.create(path).catch((error: unknown) => {
      throw new StorageError('unavailable', `could not open ${where}: ${reasonOf(error)}`, where, {
        cause: error,
      });
    });
    const connection = await pglite(client, where, true);
    return {
      ...connection,
      close: () => connection.close().finally(() => lock.release()),
      exclusive: true,
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function pglite(client: PGliteClient, where: string, owned: boolean): Promise<Connection> {
  const db = new Kysely<Tables>({ dialect: new PGliteDialect({ pglite: client }) });
  const close = async () => {
    if (!owned || client.closed) return;
    try {
      // Writes the data pages, so the next open does not replay the write-ahead log.
      await sql`CHECKPOINT`.execute(db);
    } finally {
      await db.destroy();
    }
  };
  return { db, where, close, client: { kind: 'pglite', pglite: client } };
}

/** Creates the database directory, or says why it cannot be one. */
function makeDirectory(path: string): void {
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'it is a file, or lies under one'
        : `it cannot be created (${reasonOf(error)})`;
    throw new TypeError(`openPostgres: the directory path "${path}" cannot be a database directory: ${why}`, {
      cause: error,
    });
  }
}

/**
 * What PGlite writes into a directory it creates a database in, `PG_VERSION` last: a directory
 * holding only these and no `PG_VERSION` is a creation cut short (its process killed), holding no
 * data yet.
 */
const PGLITE_ENTRIES: ReadonlySet<string> = new Set([
  'base',
  'global',
  'pg_commit_ts',
  'pg_dynshmem',
  'pg_hba.conf',
  'pg_ident.conf',
  'pg_logical',
  'pg_multixact',
  'pg_notify',
  'pg_replslot',
  'pg_serial',
  'pg_snapshots',
  'pg_stat',
  'pg_stat_tmp',
  'pg_subtrans',
  'pg_tblspc',
  'pg_twophase',
  'pg_wal',
  'pg_xact',
  'postgresql.auto.conf',
  'postgresql.conf',
]);

/** The entries of a directory but its lock files. */
function entriesOf(path: string): string[] {
  return readdirSync(path).filter((name) => !name.startsWith(LOCK_FILE));
}

/** True when `entries` (no `PG_VERSION` among them) are what a creation cut short leaves. */
function cutShort(entries: readonly string[]): boolean {
  return entries.length > 0 && entries.every((name) => PGLITE_ENTRIES.has(name));
}

/** Removes what a creation cut short left, so the database is created afresh (under the lock). */
function clearCutShortCreation(path: string): void {
  if (existsSync(resolve(path, 'PG_VERSION'))) return;
  const entries = entriesOf(path);
  if (!cutShort(entries)) return;
  for (const name of entries) rmSync(resolve(path, name), { recursive: true, force: true });
}

/**
 * Refuses a directory that holds other files and no database (`PG_VERSION`), so a mistyped path
 * never fills a project folder with database files. A creation cut short is not refused.
 */
function refuseForeign(path: string): void {
  if (existsSync(resolve(path, 'PG_VERSION'))) return;
  const others = entriesOf(path);
  if (others.length > 0 && !cutShort(others))
    throw new TypeError(
      `openPostgres: the directory "${path}" holds other files (${others.slice(0, 3).join(', ')}) and no database:` +
        ' give a new or empty directory, or one a previous openPostgres made',
    );
}

/** The URL with its password hidden, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '****';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:****@');
  }
}

/** What an error says; PGlite's file system errors carry only an errno code. */
function reasonOf(error: unknown): string {
  const { message, code, errno } = (error ?? {}) as { message?: unknown; code?: unknown; errno?: unknown };
  if (typeof message === 'string' && message !== '' && message !== 'undefined') return message;
  if (typeof code === 'string') return code;
  return errno === undefined ? String(error) : `file system error ${String(errno)}`;
}

/** True when `value` is an object with a function under each name. */
function hasMethods(value: unknown, names: readonly string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  );
}
