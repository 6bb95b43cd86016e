/**
 * Where the credential stores are tried: memory, PostgreSQL on in-memory PGlite (one instance, a
 * schema per test) and the PostgreSQL server when it is reachable (see test/postgres/server.ts).
 * `dump` gives every stored byte of a target, to search for a secret.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { onTestFinished } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import type { StorageAdapter } from '../../src/adapters/types.js';
import { MemoryStorage } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

/** A place to keep credentials. */
export interface Target {
  name: string;
  /** A fresh storage, and all it holds as text. */
  open(): Promise<{ storage: StorageAdapter; dump: () => Promise<string> }>;
}

const url = await reachServer();
let pglite: PGlite | undefined;

/**
 * Closes what a test opened once it has finished. (Per test, not per file: test files may share this
 * module, and with it the one PGlite instance, which is closed only with its process.)
 */
function closeAfter(...closes: (() => Promise<unknown>)[]): void {
  onTestFinished(async () => {
    for (const close of closes) await close();
  });
}

const ALL_TABLES = (schema: string) =>
  `select table_name from information_schema.tables where table_schema = '${schema}'`;

export const TARGETS: Target[] = [
  {
    name: 'MemoryStorage',
    open: async () => {
      const storage = new MemoryStorage();
      return { storage, dump: async () => dumpMemory(storage) };
    },
  },
  {
    name: 'Postgres on PGlite',
    open: async () => {
      const client = (pglite ??= await PGlite.create());
      const schema = testSchemas(undefined).next();
      const db = await openPostgres({ pglite: client }, { schema });
      closeAfter(
        () => db.close(),
        () => client.exec(`drop schema if exists "${schema}" cascade`),
      );
      const dump = async () => {
        const tables = await client.query<{ table_name: string }>(ALL_TABLES(schema));
        let text = '';
        for (const { table_name } of tables.rows)
          text += JSON.stringify((await client.query(`select * from "${schema}"."${table_name}"`)).rows);
        return text;
      };
      return { storage: db.storage, dump };
    },
  },
];

if (url)
  TARGETS.push({
    name: 'Postgres on the PostgreSQL server',
    open: async () => {
      const schemas = testSchemas(url);
      const schema = schemas.next();
      const pool = new pg.Pool({ connectionString: url });
      const db = await openPostgres({ pool }, { schema });
      closeAfter(
        () => db.close(),
        () => pool.end(),
        () => schemas.drop(),
      );
      const dump = async () => {
        const tables = await pool.query<{ table_name: string }>(ALL_TABLES(schema));
        let text = '';
        for (const { table_name } of tables.rows)
          text += JSON.stringify((await pool.query(`select * from "${schema}"."${table_name}"`)).rows);
        return text;
      };
      return { storage: db.storage, dump };
    },
  });

/** The keys and values of every collection the credential stores (and the audit log) use. */
function dumpMemory(storage: MemoryStorage): string {
  const collections = ['api_keys', 'users', 'user_emails', 'sessions', 'sign_in_attempts', 'audit'] as const;
  return collections.map((c) => JSON.stringify(storage.list(c))).join('\n');
}

/** A ready that is always ready. */
export const ready = async () => {};

/** A clock tests move by hand. */
export function clock(start = Date.parse('2030-01-01T00:00:00Z')) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => (now += ms),
  };
}
