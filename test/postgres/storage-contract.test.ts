import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll } from 'vitest';
import type { Collection, StorageAdapter } from '../../src/adapters/types.js';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { describeStorageContract } from '../../src/testing/index.js';
import { reachServer, testSchemas } from './server.js';

const COLLECTIONS: Collection[] = [
  'entities',
  'relationships',
  'workflows',
  'applications',
  'scripts',
  'runs',
];
const url = await reachServer();
const schemas = testSchemas(url);
const open = new Map<StorageAdapter, PostgresDatabase>();

async function opened(db: PostgresDatabase): Promise<StorageAdapter> {
  open.set(db.storage, db);
  return db.storage;
}

async function close(storage: StorageAdapter): Promise<void> {
  await open.get(storage)?.close();
  open.delete(storage);
}

// Creating a PGlite database costs seconds (initdb): the in-memory suite shares one PGlite instance,
// passed as { pglite }, with a fresh schema per test.
let memory: PGlite | undefined;
describeStorageContract({
  name: 'Postgres storage on in-memory PGlite',
  create: async () =>
    opened(await openPostgres({ pglite: (memory ??= await PGlite.create()) }, { schema: schemas.next() })),
  dispose: close,
  capabilities: { listRuns: true },
});

// One directory, opened once (it is locked while open); each test starts from an emptied storage.
const dir = mkdtempSync(join(tmpdir(), 'stepwire-pg-contract-'));
let directory: PostgresDatabase | undefined;
describeStorageContract({
  name: 'Postgres storage on a PGlite directory',
  create: async () => (directory ??= await openPostgres(join(dir, 'db'))).storage,
  dispose: async (storage) => {
    for (const collection of COLLECTIONS)
      for (const { key } of await storage.list(collection)) await storage.delete(collection, key);
  },
  capabilities: { listRuns: true },
});

if (url)
  describeStorageContract({
    name: 'Postgres storage on the PostgreSQL server',
    create: async () => opened(await openPostgres(url, { schema: schemas.next() })),
    dispose: close,
    capabilities: { listRuns: true },
  });

afterAll(async () => {
  await directory?.close();
  await memory?.close();
  rmSync(dir, { recursive: true, force: true });
  await schemas.drop();
});
