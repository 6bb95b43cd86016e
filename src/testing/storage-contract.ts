import { describe, expect } from 'vitest';
import { contractCase } from './contract-case.js';
import type { RunPage, StorageAdapter } from '../adapters/types.js';
import type { RunRecord } from '../engine/record.js';
import { Engine } from '../engine/engine.js';
import { ValidationError } from '../errors/index.js';

/** Options of {@link describeStorageContract}. */
export interface StorageContractOptions {
  /** Name shown in the test report. */
  name: string;
  /** Makes a fresh, empty adapter; called once per test. */
  create(): StorageAdapter | Promise<StorageAdapter>;
  /** Cleans up after each test. */
  dispose?(adapter: StorageAdapter): void | Promise<void>;
  /** Optional abilities of the adapter; their cases run only when set. */
  capabilities?: { listRuns?: boolean };
  /** Tests to skip, each with the reason. */
  skip?: { reason: string; tests: string[] }[];
}

/**
 * The contract every storage adapter must pass: run it with one call from a vitest file.
 * @example
 * ```ts
 * import { describeStorageContract } from 'stepwire/testing';
 * describeStorageContract({ name: 'memory', create: () => new MemoryStorage() });
 * ```
 */
export function describeStorageContract(options: StorageContractOptions): void {
  const test = contractCase<StorageAdapter>(
    () => options.create(),
    options.dispose?.bind(options),
    options.skip,
  );

  describe(`storage contract: ${options.name}`, () => {
    test('puts, gets, lists by key order and deletes', async (storage) => {
      expect(await storage.get('workflows', 'b')).toBeUndefined();
      expect(await storage.put('workflows', 'b', { n: 2 })).toBe(true);
      expect(await storage.put('workflows', 'a', { n: 1 })).toBe(true);
      expect(await storage.get('workflows', 'b')).toEqual({ n: 2 });
      expect(await storage.list('workflows')).toEqual([
        { key: 'a', value: { n: 1 } },
        { key: 'b', value: { n: 2 } },
      ]);
      expect(await storage.delete('workflows', 'a')).toBe(true);
      expect(await storage.delete('workflows', 'a')).toBe(false);
      expect(await storage.list('workflows')).toEqual([{ key: 'b', value: { n: 2 } }]);
    });

    test('keeps collections apart', async (storage) => {
      await storage.put('entities', 'x', 1);
      expect(await storage.get('workflows', 'x')).toBeUndefined();
      expect(await storage.list('scripts')).toEqual([]);
    });

    test('ifAbsent refuses to overwrite', async (storage) => {
      expect(await storage.put('entities', 'x', { v: 1 }, { ifAbsent: true })).toBe(true);
      expect(await storage.put('entities', 'x', { v: 2 }, { ifAbsent: true })).toBe(false);
      expect(await storage.get('entities', 'x')).toEqual({ v: 1 });
    });

    test('hands out copies: changing a value read or written changes nothing stored', async (storage) => {
      const value = { list: [1, 2] };
      await storage.put('runs', 'r', value);
      value.list.push(3);
      const read = await storage.get<{ list: number[] }>('runs', 'r');
      read!.list.push(4);
      expect(await storage.get('runs', 'r')).toEqual({ list: [1, 2] });
    });

    test('round-trips JSON values of every kind, and keys with any characters', async (storage) => {
      const value = { s: 'é ∑ 😀 \u0000', n: -1.5, b: false, z: null, a: [{}], nested: { deep: ['x'] } };
      const key = "a key/with ?odd: chars, 'quotes', $1 and --";
      await storage.put('applications', key, value);
      expect(await storage.get('applications', key)).toEqual(value);
      expect(await storage.list('applications')).toEqual([{ key, value }]);
    });

    test('getText, where there is one, is the JSON text get parses', async (storage) => {
      if (!storage.getText) return;
      const record = { id: 'r1', workflow: 'w', status: 'succeeded', started_at: '2026-01-01T00:00:00.000Z' };
      await storage.put('runs', 'r1', { ...record, steps: [{ name: 's', output: { rows: [1, 'é'] } }] });
      await storage.put('workflows', 'w', { name: 'w', steps: [] });
      for (const [collection, key] of [
        ['runs', 'r1'],
        ['workflows', 'w'],
      ] as const) {
        const text = await storage.getText(collection, key);
        expect(text).toBeTypeOf('string');
        expect(JSON.parse(text!)).toEqual(await storage.get(collection, key));
      }
      expect(await storage.getText('runs', 'missing')).toBeUndefined();
      expect(await storage.getText('workflows', 'missing')).toBeUndefined();
    });

    test('getText gives a run record whose text holds U+0000 or half of a surrogate pair', async (storage) => {
      if (!storage.getText) return;
      const record = { id: 'r', workflow: 'w', status: 'succeeded', started_at: '2026-01-01T00:00:00.000Z' };
      for (const odd of ['a\u0000b', 'a\ud800b']) {
        await storage.put('runs', 'r', { ...record, output: { s: odd, [odd]: 1 } });
        expect(JSON.parse((await storage.getText('runs', 'r'))!)).toEqual(await storage.get('runs', 'r'));
      }
    });

    test('lists keys by code point, as Postgres collate "C" does', async (storage) => {
      for (const key of ['\uffff', '😀', 'é', 'z']) await storage.put('scripts', key, key);
      expect((await storage.list('scripts')).map((entry) => entry.key)).toEqual(['z', 'é', '\uffff', '😀']);
    });

    test('stores undefined as null', async (storage) => {
      await storage.put('scripts', 'u', undefined);
      expect(await storage.get('scripts', 'u')).toBeNull();
      expect(await storage.list('scripts')).toEqual([{ key: 'u', value: null }]);
    });

    test('a key holding U+0000 that was never stored is absent', async (storage) => {
      await storage.put('workflows', 'a', { n: 1 });
      await storage.put('runs', 'a', { id: 'a' });
      for (const collection of ['workflows', 'runs'] as const) {
        expect(await storage.get(collection, 'a\u0000b')).toBeUndefined();
        if (storage.getText) expect(await storage.getText(collection, 'a\u0000b')).toBeUndefined();
        expect(await storage.delete(collection, 'a\u0000b')).toBe(false);
        expect(await storage.get(collection, 'a')).toBeDefined();
      }
    });

    test('keeps the order of object keys', async (storage) => {
      await storage.put('workflows', 'w', { zeta: 1, alpha: { b: 2, a: 1 }, mid: 3 });
      const read = await storage.get<{ alpha: object }>('workflows', 'w');
      expect(Object.keys(read!)).toEqual(['zeta', 'alpha', 'mid']);
      expect(Object.keys(read!.alpha)).toEqual(['b', 'a']);
    });

    test('through the engine: definitions survive a new engine on the same storage', async (storage) => {
      const first = new Engine({ storage });
      await first.workflows.create({
        name: 'w',
        steps: [
          {
            name: 's',
            type: 'l2',
            l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { a: 1 } },
          },
        ],
        wires: [],
      });
      const second = new Engine({ storage });
      const run = await second.run('w');
      expect(run.output).toEqual({ s: { a: 1 } });
      expect((await second.getRun(run.id)).status).toBe('succeeded');
    });

    if (options.capabilities?.listRuns) describeListRuns(test);
  });
}

type ContractTest = (title: string, body: (adapter: StorageAdapter) => Promise<void>) => void;

/** A stored run record with only the fields listing reads. */
function run(id: string, started_at: string | undefined, workflow = 'w', status = 'succeeded') {
  return { id, workflow, status, ...(started_at === undefined ? {} : { started_at }) };
}

/** What a listing shows of a stored run made by {@link run}. */
function summaryOf(stored: ReturnType<typeof run>) {
  return { ...stored, finished_at: null, error: null };
}

/** Every page of a listing, following `next`. */
async function allPages(
  storage: StorageAdapter,
  limit: number,
  filter: { workflow?: string; status?: string } = {},
) {
  const pages: RunPage[] = [];
  let after: string | undefined;
  do {
    const page = await storage.listRuns!({ ...filter, limit, ...(after ? { after } : {}) });
    pages.push(page);
    after = page.next;
  } while (after !== undefined && pages.length < 50);
  return pages;
}

function describeListRuns(test: ContractTest): void {
  const at = (second: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, second)).toISOString();

  test('listRuns: newest first by started_at then id, in pages that ignore later runs', async (storage) => {
    for (const record of [
      run('a', at(1)),
      run('b', at(1)),
      run('c', at(3)),
      run('d', at(2)),
      run('e', at(0)),
    ])
      await storage.put('runs', record.id, record);
    await storage.put('runs', 'no-start', run('no-start', undefined));
    await storage.put('runs', 'not-a-time', run('not-a-time', 'soon'));
    const pages = await allPages(storage, 2);
    expect(pages.map((page) => page.runs.map((r) => r.id))).toEqual([['c', 'd'], ['b', 'a'], ['e']]);
    expect(pages.at(-1)!.next).toBeUndefined();
    expect(pages[0]!.runs[0]).toEqual(summaryOf(run('c', at(3))));

    const first = await storage.listRuns!({ limit: 2 });
    await storage.put('runs', 'newer', run('newer', at(9)));
    const second = await storage.listRuns!({ limit: 2, after: first.next! });
    expect(second.runs.map((r) => r.id)).toEqual(['b', 'a']);
  });

  test('listRuns: filters by workflow and status, as last written', async (storage) => {
    await storage.put('runs', 'r1', run('r1', at(1), 'invoice', 'running'));
    await storage.put('runs', 'r2', run('r2', at(2), 'invoice', 'failed'));
    await storage.put('runs', 'r3', run('r3', at(3), 'report', 'running'));
    const ids = async (filter: { workflow?: string; status?: string }) =>
      (await allPages(storage, 1, filter)).flatMap((page) => page.runs.map((r) => r.id));
    expect(await ids({ workflow: 'invoice' })).toEqual(['r2', 'r1']);
    expect(await ids({ status: 'running' })).toEqual(['r3', 'r1']);
    expect(await ids({ workflow: 'invoice', status: 'running' })).toEqual(['r1']);
    await storage.put('runs', 'r1', run('r1', at(1), 'invoice', 'succeeded'));
    await storage.delete('runs', 'r3');
    expect(await ids({ status: 'running' })).toEqual([]);
    expect(await ids({ status: 'succeeded' })).toEqual(['r1']);
  });

  test('listRuns: a filter or cursor holding U+0000 lists as any other', async (storage) => {
    for (const record of [run('a', at(1)), run('b', at(1)), run('c', at(1), 'w\u0001'), run('d', at(0))])
      await storage.put('runs', record.id, record);
    expect(await storage.listRuns!({ limit: 10, workflow: 'w\u0000' })).toEqual({ runs: [] });
    expect(await storage.listRuns!({ limit: 10, status: 'succeeded\u0000' })).toEqual({ runs: [] });
    // After `a\0x` in the listing's order come the runs whose (started_at, id) is below it: `a` and `d`.
    const page = await storage.listRuns!({ limit: 10, after: `${at(1)}~a\u0000x` });
    expect(page.runs.map((r) => r.id)).toEqual(['a', 'd']);
  });

  test('listRuns: refuses a limit out of range or a cursor it did not make, naming the field', async (storage) => {
    for (const limit of [0, 1.5, 1001])
      await expect((async () => storage.listRuns!({ limit }))()).rejects.toThrow(ValidationError);
    const error = await (async () => storage.listRuns!({ limit: 0, after: 'page 2' }))().catch(
      (e: unknown) => e,
    );
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual(['limit', 'after']);
  });

  test('listRuns: summaries of the runs, without their input, output or steps', async (storage) => {
    const large = 'x'.repeat(1024 * 1024);
    const step = { name: 's', status: 'failed', attempts: 1, started_at: at(1), finished_at: at(2) };
    const failed = {
      id: 'failed',
      workflow: 'w',
      status: 'failed',
      input: { large },
      output: null,
      error: { code: 'step_failed', message: 'step "s" failed: no', step: 's', issues: [] },
      started_at: at(1),
      finished_at: at(2),
      steps: [{ ...step, output: { large }, error: { code: 'step_failed', message: 'no' } }],
      parent_run_id: 'parent',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    };
    const succeeded = { ...failed, id: 'succeeded', status: 'succeeded', error: null, output: { large } };
    delete (succeeded as { parent_run_id?: string }).parent_run_id;
    await storage.put('runs', 'failed', failed);
    await storage.put('runs', 'succeeded', { ...succeeded, started_at: at(0) });
    const times = { started_at: at(1), finished_at: at(2) };
    expect(await storage.listRuns!({ limit: 10 })).toEqual({
      runs: [
        {
          id: 'failed',
          workflow: 'w',
          status: 'failed',
          ...times,
          error: { code: 'step_failed', message: 'step "s" failed: no' },
          parent_run_id: 'parent',
        },
        { id: 'succeeded', workflow: 'w', status: 'succeeded', ...times, started_at: at(0), error: null },
      ],
    });
    // A summary read is a copy.
    const page = await storage.listRuns!({ limit: 1 });
    page.runs[0]!.error!.code = 'changed';
    expect((await storage.listRuns!({ limit: 1 })).runs[0]!.error!.code).toBe('step_failed');
  });

  test('listRuns through the engine: the summaries of its runs, newest first', async (storage) => {
    const engine = new Engine({ storage });
    await engine.workflows.create({
      name: 'listed',
      steps: [
        {
          name: 's',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { n: '{{input.n}}' },
          },
        },
      ],
      wires: [],
    });
    const first = await engine.run('listed', { n: 1 });
    const second = await engine.run('listed', { n: 2 });
    const page = await storage.listRuns!({ workflow: 'listed', limit: 10 });
    const key = (record: { started_at: string; id: string }) => `${record.started_at} ${record.id}`;
    const newestFirst = key(first) > key(second) ? [first, second] : [second, first];
    const summary = ({ id, workflow, status, started_at, finished_at, error }: RunRecord) => ({
      id,
      workflow,
      status,
      started_at,
      finished_at,
      error,
    });
    expect(page).toEqual({ runs: newestFirst.map(summary) });
  });
}
