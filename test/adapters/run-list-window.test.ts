// Runs listed in a time window (`started_after` included, `started_before` not): on the memory
// storage, on PostgreSQL and through a storage without `listRuns`, every page holds only runs of the
// window, and following `next` gives exactly those runs, newest first, with each filter.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { createHandler } from '../../src/http/index.js';
import {
  Engine,
  MemoryStorage,
  ValidationError,
  type RunSummary,
  type StorageAdapter,
} from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await schemas.drop();
});

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const MINUTE = 60_000;

/** 400 run records, one a minute from T0, every tenth minute holding two runs (ties on the time). */
function records() {
  const list: { id: string; workflow: string; status: string; started_at: string }[] = [];
  for (let i = 0; i < 400; i++) {
    const at = new Date(T0 + (i - (i % 10 === 1 ? 1 : 0)) * MINUTE).toISOString();
    list.push({
      id: `run-${String((i * 7919) % 1000).padStart(4, '0')}`,
      workflow: i % 3 === 0 ? 'a' : 'b',
      status: i % 4 === 0 ? 'failed' : 'succeeded',
      started_at: at,
    });
  }
  return list;
}

async function fill(storage: StorageAdapter) {
  const list = records();
  for (const run of list)
    await storage.put('runs', run.id, { ...run, finished_at: run.started_at, input: {}, steps: [] });
  // A value that is no run, and a run without a time: neither is listed.
  await storage.put('runs', 'not-a-run', 'text');
  await storage.put('runs', 'no-time', { id: 'no-time', workflow: 'a', status: 'failed' });
  return list;
}

/** Every run of a query, page by page; each page checked to hold at most `limit` runs. */
async function allPages(
  list: (query: Record<string, unknown>) => Promise<{ runs: RunSummary[]; next?: string }>,
  query: Record<string, unknown>,
  limit: number,
) {
  const ids: string[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    const page = await list({ ...query, limit, ...(after ? { after } : {}) });
    expect(page.runs.length).toBeLessThanOrEqual(limit);
    if (page.next) expect(page.runs).toHaveLength(limit);
    ids.push(...page.runs.map((run) => run.id));
    after = page.next;
    pages += 1;
  } while (after);
  return { ids, pages };
}

/** The ids a window selects, newest first by time then id, computed from the records. */
function expected(
  list: ReturnType<typeof records>,
  from: number,
  to: number,
  filter: { workflow?: string; status?: string } = {},
) {
  return list
    .filter((run) => {
      const at = Date.parse(run.started_at);
      return (
        at >= from &&
        at < to &&
        (filter.workflow === undefined || run.workflow === filter.workflow) &&
        (filter.status === undefined || run.status === filter.status)
      );
    })
    .sort((x, y) =>
      x.started_at === y.started_at ? (x.id < y.id ? 1 : -1) : x.started_at < y.started_at ? 1 : -1,
    )
    .map((run) => run.id);
}

/** A storage without `listRuns`: the engine pages `list('runs')` itself. */
function plainStorage(): StorageAdapter {
  const memory = new MemoryStorage();
  return {
    get: (c, k) => memory.get(c, k),
    put: (c, k, v, o) => memory.put(c, k, v, o),
    delete: (c, k) => memory.delete(c, k),
    list: (c) => memory.list(c),
  };
}

async function postgresStorage(): Promise<StorageAdapter> {
  const pool = new pg.Pool({ connectionString: url });
  pools.push(pool);
  const db = await openPostgres({ pool }, { schema: schemas.next() });
  return db.storage;
}

const storages: [string, () => Promise<StorageAdapter>][] = [
  ['the memory storage', async () => new MemoryStorage()],
  ['a storage without listRuns', async () => plainStorage()],
  ...(url ? [['PostgreSQL', postgresStorage] as [string, () => Promise<StorageAdapter>]] : []),
];

describe.each(storages)('runs in a time window on %s', (_name, open) => {
  it('lists exactly the runs of the window, in keyset pages, with each filter', async () => {
    const storage = await open();
    const list = await fill(storage);
    const engine = new Engine({ storage });
    // Minute 101 holds two runs (ties); minute 300 is the end, not in the window.
    const from = T0 + 101 * MINUTE;
    const to = T0 + 300 * MINUTE;
    const window = {
      started_after: new Date(from).toISOString(),
      started_before: new Date(to).toISOString(),
    };
    for (const filter of [{}, { workflow: 'a' }, { status: 'failed' }, { workflow: 'b', status: 'failed' }]) {
      const want = expected(list, from, to, filter);
      expect(want.length).toBeGreaterThan(10);
      const { ids, pages } = await allPages((q) => engine.listRuns(q), { ...filter, ...window }, 7);
      expect(ids).toEqual(want);
      expect(pages).toBe(Math.max(1, Math.ceil(want.length / 7)));
    }
    // The storage itself answers the same (when it lists runs).
    if (storage.listRuns) {
      const { ids } = await allPages(
        async (q) => (await storage.listRuns!(q as never)) as { runs: RunSummary[]; next?: string },
        window,
        50,
      );
      expect(ids).toEqual(expected(list, from, to));
    }
    // Bounds in other forms: a date, an offset.
    const day = await allPages((q) => engine.listRuns(q), { started_before: '2026-03-01' }, 50);
    expect(day.ids).toEqual([]);
    const offset = await engine.listRuns({
      started_after: '2026-03-01T03:20:00+01:00',
      started_before: '2026-03-01T02:25:00.000Z',
      limit: 1000,
    });
    expect(offset.runs.map((run) => run.id)).toEqual(expected(list, T0 + 140 * MINUTE, T0 + 145 * MINUTE));
    // Only one bound; an empty window.
    expect(
      (await allPages((q) => engine.listRuns(q), { started_after: window.started_before }, 40)).ids,
    ).toEqual(expected(list, to, Infinity));
    expect(
      (await engine.listRuns({ started_after: window.started_before, started_before: window.started_after }))
        .runs,
    ).toEqual([]);
  });

  it('refuses a bound that is no time, naming it', async () => {
    const engine = new Engine({ storage: await open() });
    const error = await engine
      .listRuns({ started_after: 'yesterday', started_before: '+010000-01-01T00:00:00Z' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([
      'started_after',
      'started_before',
    ]);
  });
});

describe('GET /runs in a time window', () => {
  it('answers the runs of the window a page at a time, and 400 for a bound that is no time', async () => {
    const storage = new MemoryStorage();
    const list = await fill(storage);
    const handler = createHandler(new Engine({ storage }));
    const from = T0 + 10 * MINUTE;
    const to = T0 + 40 * MINUTE;
    const ids: string[] = [];
    let after = '';
    do {
      const query = new URLSearchParams({
        started_after: new Date(from).toISOString(),
        started_before: new Date(to).toISOString(),
        limit: '8',
        ...(after ? { after } : {}),
      });
      const answer = await handler(new Request(`http://127.0.0.1/runs?${query}`));
      expect(answer.status).toBe(200);
      const page = (await answer.json()) as { runs: RunSummary[]; next?: string };
      ids.push(...page.runs.map((run) => run.id));
      after = page.next ?? '';
    } while (after);
    expect(ids).toEqual(expected(list, from, to));
    const bad = await handler(new Request('http://127.0.0.1/runs?started_before=soon'));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('started_before');
  });
});
