import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog, type AuditEntry, type AuditRecord } from '../../src/access/audit.js';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import type { Collection, PutOptions, StorageAdapter } from '../../src/adapters/types.js';
import { createClient, createHandler } from '../../src/http/index.js';
import { Engine, MemoryStorage, ValidationError } from '../../src/index.js';
import { call, expectDocumented } from '../http/helpers.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
let pglite: PGlite | undefined;
const closing: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await pglite?.close();
  await schemas.drop();
});

/** A storage of the host's own: the key-value methods only, each a turn of the event loop late. */
class KeyValueStorage implements StorageAdapter {
  readonly inner = new MemoryStorage();
  /** Puts refused because the key was taken. */
  taken = 0;
  async get<T>(collection: Collection, key: string) {
    await Promise.resolve();
    return this.inner.get<T>(collection, key);
  }
  async put(collection: Collection, key: string, value: unknown, options?: PutOptions) {
    await Promise.resolve();
    const done = this.inner.put(collection, key, value, options);
    if (!done) this.taken++;
    return done;
  }
  async delete(collection: Collection, key: string) {
    await Promise.resolve();
    return this.inner.delete(collection, key);
  }
  async list<T>(collection: Collection) {
    await Promise.resolve();
    return this.inner.list<T>(collection);
  }
}

/** Where a log is kept: `open` gives a fresh storage, and a second handle on it when it has one. */
interface Target {
  name: string;
  /** Whether `open` gives a way to run SQL beside the storage. */
  sql?: boolean;
  open(): Promise<{
    storage: StorageAdapter;
    other?: StorageAdapter;
    sql?: (text: string) => Promise<unknown>;
  }>;
}

const targets: Target[] = [
  { name: 'MemoryStorage', open: async () => ({ storage: new MemoryStorage() }) },
  {
    name: 'a storage without appendAudit (collection audit)',
    open: async () => ({ storage: new KeyValueStorage() }),
  },
  {
    name: 'Postgres on PGlite',
    sql: true,
    open: async () => {
      const client = (pglite ??= await PGlite.create());
      const schema = schemas.next();
      const db = await openPostgres({ pglite: client }, { schema });
      closing.push(() => db.close());
      return { storage: db.storage, sql: (text) => client.query(text.replaceAll('$schema', schema)) };
    },
  },
];
if (url)
  targets.push({
    name: 'Postgres on the PostgreSQL server',
    sql: true,
    open: async () => {
      const schema = schemas.next();
      const pool = new pg.Pool({ connectionString: url });
      const [one, two] = [await openPostgres({ pool }, { schema }), await openPostgres(url, { schema })];
      closing.push(
        () => pool.end(),
        () => one.close(),
        () => two.close(),
      );
      return {
        storage: one.storage,
        other: two.storage,
        sql: (text) => pool.query(text.replaceAll('$schema', `"${schema}"`)),
      };
    },
  });

const ready = async () => {};
const user = { id: 'u1', kind: 'user' } as const;
const entry = (n: number, over: Partial<AuditRecord> = {}): AuditRecord => ({
  principal: user,
  action: 'run.start',
  resource: `workflow:w${n}`,
  outcome: 'success',
  detail: { n },
  ...over,
});

describe.each(targets)('the audit log on $name', (target) => {
  it('appends entries and lists them oldest first, with ids that sort in append order', async () => {
    const { storage } = await target.open();
    const log = new AuditLog(storage, ready);
    expect(await log.list()).toEqual({ entries: [] });
    const before = Date.now();
    const appended: AuditEntry[] = [];
    for (let n = 1; n <= 12; n++) appended.push(await log.record(entry(n)));
    expect(appended[0]).toEqual({ id: expect.any(String), at: expect.any(String), ...entry(1) });
    expect(Date.parse(appended[0]!.at)).toBeGreaterThanOrEqual(before - 1);
    expect(new Date(appended[0]!.at).toISOString()).toBe(appended[0]!.at);
    const ids = appended.map((e) => e.id);
    expect(new Set(ids).size).toBe(12);
    // As text, not as numbers: the 10th sorts after the 9th.
    expect([...ids].sort()).toEqual(ids);
    const page = await log.list();
    expect(page).toEqual({ entries: appended });
    // Copies out: changing what was read changes nothing stored.
    page.entries[0]!.detail!.n = 99;
    appended[1]!.principal.id = 'someone else';
    expect((await log.list({ limit: 2 })).entries.map((e) => [e.detail, e.principal.id])).toEqual([
      [{ n: 1 }, 'u1'],
      [{ n: 2 }, 'u1'],
    ]);
  });

  it('pages with after and limit: each page starts after the last, the last page has no next', async () => {
    const { storage } = await target.open();
    const log = new AuditLog(storage, ready);
    for (let n = 1; n <= 7; n++) await log.record(entry(n));
    const seen: number[][] = [];
    let after: string | undefined;
    do {
      const page = await log.list({ limit: 3, ...(after === undefined ? {} : { after }) });
      seen.push(page.entries.map((e) => e.detail!.n as number));
      if (page.next !== undefined) expect(page.next).toBe(page.entries.at(-1)!.id);
      after = page.next;
    } while (after !== undefined);
    expect(seen).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    // A page that ends exactly at the last entry has no next.
    const exact = await log.list({ limit: 7 });
    expect(exact.entries).toHaveLength(7);
    expect(exact.next).toBeUndefined();
    // An entry's id works as a cursor too; after the last, nothing.
    expect((await log.list({ after: exact.entries[4]!.id })).entries.map((e) => e.detail!.n)).toEqual([6, 7]);
    expect(await log.list({ after: exact.entries[6]!.id })).toEqual({ entries: [] });
    // Appended after a page was read: the next page from its cursor has it.
    await log.record(entry(8));
    expect((await log.list({ after: exact.entries[6]!.id })).entries.map((e) => e.detail!.n)).toEqual([8]);
  });

  it('filters by action, principal and resource, all together, and pages within a filter', async () => {
    const { storage } = await target.open();
    const log = new AuditLog(storage, ready);
    const bot = { id: 'trigger:nightly', kind: 'service' } as const;
    await log.record(entry(1));
    await log.record(entry(2, { action: 'run.cancel', resource: 'run:r1' }));
    await log.record(entry(3, { principal: bot }));
    await log.record(entry(4, { action: 'rows.write', resource: 'entity:customers', outcome: 'denied' }));
    await log.record(entry(5, { principal: bot, action: 'run.cancel', resource: 'run:r1' }));
    await log.record(entry(6, { principal: bot, resource: 'workflow:w3' }));
    const ns = async (query: Parameters<AuditLog['list']>[0]) =>
      (await log.list(query)).entries.map((e) => e.detail!.n);
    expect(await ns({ action: 'run.start' })).toEqual([1, 3, 6]);
    expect(await ns({ principal: 'trigger:nightly' })).toEqual([3, 5, 6]);
    expect(await ns({ resource: 'run:r1' })).toEqual([2, 5]);
    expect(await ns({ resource: 'workflow:w3', principal: 'trigger:nightly', action: 'run.start' })).toEqual([
      3, 6,
    ]);
    expect(await ns({ action: 'run.cancel', principal: 'u1' })).toEqual([2]);
    expect(await ns({ action: 'access.put' })).toEqual([]);
    expect(await ns({ resource: 'nul\u0000' })).toEqual([]);
    const first = await log.list({ principal: 'trigger:nightly', limit: 2 });
    expect(first.entries.map((e) => e.detail!.n)).toEqual([3, 5]);
    expect(await ns({ principal: 'trigger:nightly', limit: 2, after: first.next! })).toEqual([6]);
  });

  it('loses nothing when two logs append at once', async () => {
    const { storage, other } = await target.open();
    const one = new AuditLog(storage, ready);
    const two = new AuditLog(other ?? storage, ready);
    const made = await Promise.all(
      Array.from({ length: 40 }, (_, n) => (n % 2 ? one : two).record(entry(n, { action: `a${n % 2}` }))),
    );
    expect(new Set(made.map((e) => e.id)).size).toBe(40);
    const listed: AuditEntry[] = [];
    let after: string | undefined;
    do {
      const page = await one.list({ limit: 7, ...(after === undefined ? {} : { after }) });
      listed.push(...page.entries);
      after = page.next;
    } while (after !== undefined);
    expect(listed.map((e) => e.detail!.n).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 40 }, (_, n) => n),
    );
    expect(listed.map((e) => e.id)).toEqual(made.map((e) => e.id).sort());
    if (storage instanceof KeyValueStorage) expect(storage.taken).toBeGreaterThan(0);
  });

  it('keeps only the principal’s id and kind, and cuts a large detail down saying so', async () => {
    const { storage } = await target.open();
    const log = new AuditLog(storage, ready);
    const principal = {
      id: 'u1',
      kind: 'user',
      roles: ['admin'],
      email: 'a@b.c',
    } as AuditRecord['principal'];
    const keys = Array.from({ length: 500 }, (_, i) => ({ id: i, note: 'x'.repeat(30) }));
    const big = await log.record(
      entry(1, { principal, detail: { keys, mode: 'upsert', text: '😀'.repeat(400) } }),
    );
    expect(big.principal).toEqual({ id: 'u1', kind: 'user' });
    expect(JSON.stringify(big.detail).length).toBeLessThanOrEqual(4000);
    expect(big.detail).toMatchObject({ mode: 'upsert', truncated: true });
    const listedKeys = big.detail!.keys as unknown[];
    expect(listedKeys.at(-1)).toMatch(/^… \d+ more$/);
    expect(listedKeys[0]).toEqual({ id: 0, note: expect.any(String) });
    // A cut string never ends in half of a surrogate pair.
    expect(big.detail!.text).not.toMatch(/[\uD800-\uDBFF]…$/);
    const small = await log.record(entry(2, { detail: { order: 'kept', b: 1, a: [1, 2], gone: undefined } }));
    expect(small.detail).toEqual({ order: 'kept', b: 1, a: [1, 2] });
    expect((await log.list()).entries.map((e) => e.detail)).toEqual([big.detail, small.detail]);
    expect(Object.keys((await log.list()).entries[1]!.detail!)).toEqual(['order', 'b', 'a']);
  });

  it('refuses a query of the wrong shape, naming the field, before reading anything', async () => {
    const { storage } = await target.open();
    const log = new AuditLog(storage, ready);
    await log.record(entry(1));
    const paths = async (query: unknown) => {
      const error = await log.list(query as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).issues.map((i) => i.path);
    };
    for (const limit of [0, 1001, 1.5, '10', Number.NaN]) expect(await paths({ limit })).toEqual(['limit']);
    for (const after of ['', 'x', '12', 12, '0000000000000001x'])
      expect(await paths({ after })).toEqual(['after']);
    expect(await paths({ action: 1, principal: {}, resource: null, limit: -1 })).toEqual([
      'limit',
      'action',
      'principal',
      'resource',
    ]);
    expect(await paths('all')).toEqual(['']);
    expect((await log.list({ limit: 1000 })).entries).toHaveLength(1);
  });

  it.runIf(target.sql === true)('keeps the table append-only even for SQL', async () => {
    const { storage, sql } = await target.open();
    const log = new AuditLog(storage, ready);
    const first = await log.record(entry(1));
    await expect(sql!(`update $schema.audit_log set action = 'forged'`)).rejects.toThrow(/append-only/);
    await expect(sql!(`delete from $schema.audit_log`)).rejects.toThrow(/append-only/);
    await expect(sql!(`truncate $schema.audit_log`)).rejects.toThrow(/append-only/);
    expect((await log.list()).entries).toEqual([first]);
  });
});

describe('recording an entry', () => {
  it('refuses an entry of the wrong shape, naming each field, and appends nothing', async () => {
    const storage = new MemoryStorage();
    const log = new AuditLog(storage, ready);
    const error = await log
      .record({
        principal: { id: '', kind: 'robot' },
        action: 7,
        resource: '',
        outcome: 'ok',
        detail: [],
      } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((i) => i.path)).toEqual([
      'principal.id',
      'principal.kind',
      'action',
      'resource',
      'outcome',
      'detail',
    ]);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const notJson = await log.record(entry(1, { detail: cyclic })).catch((e: unknown) => e);
    expect((notJson as ValidationError).issues.map((i) => i.path)).toEqual(['detail']);
    expect(await log.list()).toEqual({ entries: [] });
  });

  it('waits for the engine to be ready before it touches the storage', async () => {
    const storage = new MemoryStorage();
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const log = new AuditLog(storage, () => opened);
    const recorded = log.record(entry(1));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(storage.listAudit({ limit: 10 }).entries).toEqual([]);
    open();
    expect((await recorded).detail).toEqual({ n: 1 });
  });
});

describe('GET /audit', () => {
  async function served() {
    const engine = new Engine();
    // As the engine makes it: `new AuditLog(engine.options.storage, () => engine.ready())`.
    const audit = engine.audit;
    for (let n = 1; n <= 5; n++)
      await audit.record(
        entry(n, n % 2 ? {} : { principal: { id: 'k1', kind: 'key' }, action: 'definition.put' }),
      );
    return { engine, handler: createHandler(engine) };
  }

  it('answers a page of entries, oldest first, with next for the page after', async () => {
    const { handler } = await served();
    const first = await call(handler, 'GET', '/audit?limit=2');
    expect(first.status).toBe(200);
    expectDocumented('audit.list', 200, first.response, first.body);
    expect(first.body.entries.map((e: AuditEntry) => e.detail!.n)).toEqual([1, 2]);
    expect(first.body.next).toBe(first.body.entries[1].id);
    const rest = await call(handler, 'GET', `/audit?after=${first.body.next}`);
    expect(rest.body.entries.map((e: AuditEntry) => e.detail!.n)).toEqual([3, 4, 5]);
    expect(rest.body).not.toHaveProperty('next');
    expectDocumented('audit.list', 200, rest.response, rest.body);
    const filtered = await call(
      handler,
      'GET',
      '/audit?principal=k1&action=definition.put&resource=workflow%3Aw4',
    );
    expect(filtered.body).toEqual({
      entries: [
        {
          id: expect.any(String),
          at: expect.any(String),
          ...entry(4, { principal: { id: 'k1', kind: 'key' }, action: 'definition.put' }),
        },
      ],
    });
  });

  it('answers 400 naming the parameter that is wrong', async () => {
    const { handler } = await served();
    for (const [query, path] of [
      ['limit=0', 'limit'],
      ['limit=1e2', 'limit'],
      ['after=nope', 'after'],
      ['colour=red', ''],
    ] as const) {
      const res = await call(handler, 'GET', `/audit?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      if (path) expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
      expectDocumented('audit.list', 400, res.response, res.body);
    }
  });

  it('is what the client’s audit.list calls', async () => {
    const { handler } = await served();
    const client = createClient({
      baseUrl: 'http://stepwire.test',
      retry: 0,
      fetch: (input, init) => handler(new Request(input, init)),
    });
    const page = await client.audit.list({ limit: 1, principal: 'k1' });
    expect(page.entries.map((e) => e.detail!.n)).toEqual([2]);
    const next = await client.audit.list({ principal: 'k1', after: page.next! });
    expect(next).toEqual({ entries: [expect.objectContaining({ detail: { n: 4 } })] });
    expect((await client.audit.list()).entries).toHaveLength(5);
  });
});
