import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { importOptional } from '../../src/adapters/import-optional.js';
import { openPostgres, StorageError } from '../../src/adapters/postgres/index.js';
import { MIGRATIONS } from '../../src/adapters/postgres/migrations.js';
import { StepwireError } from '../../src/errors/index.js';
import { Engine } from '../../src/index.js';
import { reachServer, testSchemas, underCi } from './server.js';

const url = await reachServer();
const schemas = testSchemas(url);
const temp = mkdtempSync(join(tmpdir(), 'stepwire-pg-open-'));
afterAll(async () => {
  rmSync(temp, { recursive: true, force: true });
  await schemas.drop();
});

/** The error a promise rejects with. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('openPostgres arguments', () => {
  it('refuses a schema name it would have to quote, or a system one, naming options.schema', async () => {
    for (const schema of [
      'Stepwire',
      'a-b',
      'pg_catalog',
      'information_schema',
      '',
      '1st',
      'x'.repeat(46),
      'a;drop schema public',
    ])
      await expect(openPostgres(undefined, { schema })).rejects.toThrow(/options\.schema/);
    // Only the name itself is the system's.
    const db = await openPostgres(undefined, { schema: 'information_schema_copy' });
    await db.close();
  });

  it('refuses queue timings the queue would not take and options of the wrong type, naming the option, before opening anything', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { pollSeconds: 0.1 },
        /options\.queue\.pollSeconds must be a number of seconds, at least 0\.5; got 0\.1/,
      ],
      [{ pollSeconds: '2' }, /options\.queue\.pollSeconds/],
      [{ monitorSeconds: 0 }, /options\.queue\.monitorSeconds .* at least 1; got 0/],
      [
        { heartbeatSeconds: 5 },
        /options\.queue\.heartbeatSeconds must be a whole number of seconds, at least 10/,
      ],
      [{ heartbeatSeconds: 10.5 }, /options\.queue\.heartbeatSeconds/],
      [{ pollSeconds: Number.NaN }, /options\.queue\.pollSeconds/],
    ];
    for (const [queue, message] of cases)
      await expect(openPostgres(undefined, { queue } as never)).rejects.toThrow(message);
    // The least values are taken: the chaos tests open queues with exactly these.
    await expect(openPostgres(undefined, { preparedStatements: 'yes' } as never)).rejects.toThrow(
      new TypeError('openPostgres: options.preparedStatements must be a boolean'),
    );
  });

  it('refuses a URL of another database and a target of the wrong shape, naming the target', async () => {
    await expect(openPostgres('mysql://root:pw@localhost/db')).rejects.toThrow(
      /target "mysql:\/\/root:\*\*\*\*@localhost\/db" is neither/,
    );
    await expect(openPostgres({} as never)).rejects.toThrow(TypeError);
    await expect(openPostgres({ pool: {} } as never)).rejects.toThrow(
      new TypeError('openPostgres: { pool } must be a node-postgres Pool (with connect and query)'),
    );
    await expect(openPostgres({ pglite: 'x' } as never)).rejects.toThrow(
      new TypeError('openPostgres: { pglite } must be a PGlite instance (with query and transaction)'),
    );
  });

  it('says which package is missing, how to install it, and what to pass instead', async () => {
    const missing = Object.assign(new Error("Cannot find package 'pg' imported from x.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const error = await failure(
      importOptional('pg', 'openPostgres', () => Promise.reject(missing), 'pass a pool you made as { pool }'),
    );
    expect(error).toBeInstanceOf(StepwireError);
    expect((error as StepwireError).code).toBe('missing_dependency');
    expect((error as Error).message).toContain('npm install pg (or pass a pool you made as { pool })');
  });

  it('reports an unreachable server as unavailable, never showing the password', async () => {
    const error = await failure(openPostgres('postgres://app:s3cret@127.0.0.1:1/app'));
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('unavailable');
    expect((error as StorageError).message).toMatch(
      /could not reach the Postgres database postgres:\/\/app:\*\*\*\*@/,
    );
    expect(JSON.stringify([(error as Error).message, (error as StorageError).target])).not.toContain(
      's3cret',
    );
  });

  it('fails, not hangs, on a server that takes the connection and never answers (connect_timeout)', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const started = Date.now();
      const error = await failure(openPostgres(`postgres://app@127.0.0.1:${port}/app?connect_timeout=1`));
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).code).toBe('unavailable');
      expect((error as Error).message).toMatch(/could not reach .*timeout/i);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('the test server helper', () => {
  it('leaves the server tests out with a notice when the server is unreachable, and fails under CI', async () => {
    const nowhere = 'postgres://postgres@127.0.0.1:1/test';
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(await reachServer(nowhere, false)).toBeUndefined();
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('the server tests are left out'));
    } finally {
      warn.mockRestore();
    }
    await expect(reachServer(nowhere, true)).rejects.toThrow(/under CI the server tests must run/);
    vi.stubEnv('CI', 'true');
    expect(underCi()).toBe(true);
    vi.stubEnv('CI', 'false');
    expect(underCi()).toBe(false);
    vi.unstubAllEnvs();
  });
});

describe('in-memory PGlite', () => {
  it('opens with nothing, has a working queue, and refuses calls once closed', async () => {
    const db = await openPostgres();
    await db.storage.put('scripts', 's', { source: 'x' });
    expect(await db.storage.get('scripts', 's')).toEqual({ source: 'x' });
    expect(db.queue.available).toBe(true);
    const worker = await db.queue.work(async () => undefined);
    await worker.stop();
    const closing = db.close();
    expect(db.close()).toBe(closing);
    await closing;
    await expect(db.storage.get('scripts', 's')).rejects.toMatchObject({
      name: 'StorageError',
      code: 'closed',
    });
  });

  it('engine.work() on a closed database reports closed to onError, and leaves nothing running', async () => {
    const db = await openPostgres();
    await db.close();
    const errors: string[] = [];
    const engine = new Engine({ storage: db.storage, queue: db.queue });
    const worker = await engine.work({ onError: (error) => errors.push((error as Error).message) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await worker.stop();
    // The engine opens the storage first (it reads the access policy): the closed database says so.
    expect(errors).toContain('the in-memory PGlite database was closed');
    // (A PGlite listener started after the close rejected unhandled, ending the process.)
  });

  it('leaves a PGlite it was given open, unless told to close it', async () => {
    const pglite = await PGlite.create();
    const first = await openPostgres({ pglite }, { schema: 'one' });
    await first.storage.put('workflows', 'w', { n: 1 });
    await first.close();
    expect(pglite.closed).toBe(false);
    const second = await openPostgres({ pglite }, { schema: 'two', closeClient: true });
    expect(await second.storage.get('workflows', 'w')).toBeUndefined();
    await second.close();
    expect(pglite.closed).toBe(true);
  });
});

describe('a PGlite directory', () => {
  it('keeps data across opens, is locked while open, and takes over a lock its dead holder left', async () => {
    const dir = join(temp, 'nested', 'db');
    const lock = join(dir, 'stepwire.lock');
    const db = await openPostgres(dir);
    await db.storage.put('runs', 'r1', { id: 'r1', status: 'succeeded' });

    const locked = await failure(openPostgres(dir));
    expect(locked).toMatchObject({ name: 'StorageError', code: 'locked', pid: process.pid, target: lock });
    expect((locked as Error).message).toContain(`this process (pid ${process.pid}), opened twice`);
    await db.close();
    expect(existsSync(lock)).toBe(false);

    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(lock, JSON.stringify({ pid: dead, host: hostname(), token: 'left behind' }));
    const reopened = await openPostgres(dir);
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: process.pid });
    expect(await reopened.storage.get('runs', 'r1')).toEqual({ id: 'r1', status: 'succeeded' });
    await reopened.close();

    writeFileSync(lock, JSON.stringify({ pid: 1, host: 'elsewhere', token: 'shared disk' }));
    await expect(openPostgres(dir)).rejects.toThrow(/in use by process 1 on host elsewhere/);
  });

  it('refuses a directory that holds other files and no database', async () => {
    const project = join(temp, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'orders.csv'), 'id\n1\n');
    await expect(openPostgres(project)).rejects.toThrow(/holds other files \(orders\.csv\) and no database/);
    expect(readdirSync(project)).toEqual(['orders.csv']);
  });

  it('marks a run not on the queue that it holds as running interrupted, also for an engine with a queue', async () => {
    const running = {
      id: 'r1',
      workflow: 'w',
      status: 'running',
      input: {},
      output: null,
      error: null,
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: null,
      steps: [],
    };
    // A directory is locked to this process: a run its process left running runs nowhere.
    const dir = await openPostgres(join(temp, 'left-running'));
    expect(dir.storage.exclusive).toBe(true);
    await dir.storage.put('runs', 'r1', running);
    const engine = new Engine({ storage: dir.storage, queue: dir.queue });
    expect(await engine.getRun('r1')).toMatchObject({
      status: 'interrupted',
      error: { code: 'interrupted' },
    });
    await dir.close();
    // In memory (or on a server) another engine may be running it: an engine with a queue leaves it.
    const shared = await openPostgres();
    expect(shared.storage.exclusive).toBe(false);
    await shared.storage.put('runs', 'r1', running);
    expect(await new Engine({ storage: shared.storage, queue: shared.queue }).getRun('r1')).toMatchObject({
      status: 'running',
    });
    await shared.close();
  });

  it('says a path that is a file, or lies under one, cannot be a database directory', async () => {
    const file = join(temp, 'a-file');
    writeFileSync(file, 'x');
    for (const path of [file, join(file, 'db')])
      await expect(openPostgres(path)).rejects.toThrow(
        new TypeError(
          `openPostgres: the directory path "${path}" cannot be a database directory: it is a file, or lies under one`,
        ),
      );
  });

  it('reports a directory PGlite cannot write as unavailable, naming it', async () => {
    const dir = join(temp, 'read-only');
    mkdirSync(dir, { mode: 0o500 });
    const error = await failure(openPostgres(dir));
    expect(error).toMatchObject({ name: 'StorageError', code: 'unavailable' });
    expect((error as Error).message).toMatch(
      new RegExp(`^could not open the PGlite directory "${dir}": \\S`),
    );
    expect((error as Error).message).not.toContain('undefined');
  });

  it('creates the database afresh where a creation was cut short (PGlite files, no PG_VERSION)', async () => {
    const dir = join(temp, 'cut-short');
    const first = await openPostgres(dir);
    await first.close();
    // What a process killed while PGlite wrote a new database leaves: its files but PG_VERSION.
    rmSync(join(dir, 'PG_VERSION'));
    rmSync(join(dir, 'base'), { recursive: true });
    const db = await openPostgres(dir);
    await db.storage.put('workflows', 'w', { name: 'w' });
    expect(await db.storage.get('workflows', 'w')).toEqual({ name: 'w' });
    await db.close();
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
  });
});

describe.runIf(url)('the PostgreSQL server', () => {
  it('migrates once when many open the same new schema at once', async () => {
    const schema = schemas.next();
    const dbs = await Promise.all(Array.from({ length: 8 }, () => openPostgres(url!, { schema })));
    await dbs[0]!.storage.put('workflows', 'w', { n: 1 });
    expect(await dbs[7]!.storage.get('workflows', 'w')).toEqual({ n: 1 });
    await Promise.all(dbs.map((db) => db.close()));
    const client = new pg.Client(url);
    await client.connect();
    try {
      const versions = await client.query(
        `select version from ${client.escapeIdentifier(schema)}.migrations`,
      );
      expect(versions.rows.map((row: { version: number }) => row.version)).toEqual(
        MIGRATIONS.map((m) => m.version),
      );
      const tables = await client.query(
        'select table_name from information_schema.tables where table_schema = $1 order by table_name',
        [schema],
      );
      expect(tables.rows.map((row: { table_name: string }) => row.table_name)).toEqual([
        'audit_log',
        'definitions',
        'file_keys',
        'files',
        'migrations',
        'run_events',
        'runs',
        'step_jobs',
        'step_results',
        'trigger_state',
      ]);
    } finally {
      await client.end();
    }
  });

  it('refuses a schema a newer stepwire migrated, and keeps schemas apart', async () => {
    const schema = schemas.next();
    const db = await openPostgres(url!, { schema });
    await db.storage.put('entities', 'e', { n: 1 });
    const other = await openPostgres(url!, { schema: schemas.next() });
    expect(await other.storage.list('entities')).toEqual([]);
    await other.close();
    await db.close();
    const client = new pg.Client(url);
    await client.connect();
    await client.query(
      `insert into ${client.escapeIdentifier(schema)}.migrations (version, name) values (999, 'future')`,
    );
    await client.end();
    const error = await failure(openPostgres(url!, { schema }));
    expect(error).toMatchObject({ name: 'StorageError', code: 'schema_too_new' });
    expect((error as Error).message).toContain('at version 999');
  });

  it('leaves a pool it was given open, unless told to end it', async () => {
    const pool = new pg.Pool({ connectionString: url });
    const db = await openPostgres({ pool }, { schema: schemas.next() });
    await db.close();
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    const owned = await openPostgres({ pool }, { schema: schemas.next(), closeClient: true });
    await owned.close();
    expect(pool.ended).toBe(true);
  });
});
