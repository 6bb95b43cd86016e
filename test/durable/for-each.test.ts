import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import {
  Engine,
  type ActionContext,
  type ActionDefinition,
  type RunEvent,
  type Workflow,
} from '../../src/index.js';

/** Calls per idempotency key, and the worker that made each. */
const calls = new Map<string, string[]>();
/** Called when an item with `hang` starts: it finishes once `release` is called. */
let hung: (release: () => void) => void = () => undefined;
/** Keys of items whose step was told to stop while they ran. */
const aborted = new Set<string>();

function actions(worker: string): ActionDefinition[] {
  return [
    {
      provider: 'acme',
      module: 'test',
      action: 'item',
      input: z.object({
        n: z.number(),
        fail: z.boolean().optional(),
        flaky: z.boolean().optional(),
        hang: z.boolean().optional(),
      }),
      run: async (
        input: { n: number; fail?: boolean; flaky?: boolean; hang?: boolean },
        context: ActionContext,
      ) => {
        const key = context.idempotencyKey;
        const made = [...(calls.get(key) ?? []), worker];
        calls.set(key, made);
        context.log(`doing ${input.n}`);
        if (input.hang)
          await new Promise<void>((release, reject) => {
            hung(release);
            context.signal.addEventListener('abort', () => {
              aborted.add(key);
              reject(new Error('aborted'));
            });
          });
        if (input.fail) throw new Error(`item ${input.n} is bad`);
        if (input.flaky && made.length === 1) throw new Error('flaky once');
        return { n: input.n * 10, worker };
      },
    } as unknown as ActionDefinition,
  ];
}

function loop(name: string, extra: Partial<Workflow['steps'][number]> = {}): Workflow {
  return {
    name,
    steps: [
      {
        name: 'each',
        type: 'l2',
        for_each: '{{input.rows}}',
        concurrency: 4,
        l2_data: {
          provider: 'acme',
          module: 'test',
          action: 'item',
          input_data: {
            n: '{{item.n}}',
            fail: '{{item.fail}}',
            flaky: '{{item.flaky}}',
            hang: '{{item.hang}}',
          },
        },
        ...extra,
      } as Workflow['steps'][number],
      {
        name: 'after',
        type: 'l2',
        l2_data: {
          provider: 'acme',
          module: 'test',
          action: 'item',
          input_data: { n: '{{each.succeeded}}' },
        },
      },
    ],
    wires: [],
  };
}

function rows(count: number, extra: (n: number) => object = () => ({})) {
  return Array.from({ length: count }, (_, n) => ({
    n,
    fail: false,
    flaky: false,
    hang: false,
    ...extra(n),
  }));
}

let db: PostgresDatabase;
let a: Engine;
let b: Engine;
const workers = new Map<Engine, { stop(): Promise<void> }>();

beforeAll(async () => {
  db = await openPostgres(undefined, { queue: { pollSeconds: 0.5 } });
  a = new Engine({ storage: db.storage, queue: db.queue, actions: actions('a') });
  b = new Engine({ storage: db.storage, queue: db.queue, actions: actions('b') });
  workers.set(a, a.work({ concurrency: 2, triggers: false }));
  workers.set(b, b.work({ concurrency: 2, triggers: false }));
  await a.workflows.create(loop('each-continue', { on_error: 'continue' }));
  await a.workflows.create(loop('each-fail', { concurrency: 1 }));
  await a.workflows.create(loop('each-retry', { retry: { attempts: 2, backoff_ms: 10 } }));
  await a.workflows.create(loop('each-if', { conditions: [{ data_path: 'item.flaky', value: false }] }));
});
afterAll(async () => {
  for (const worker of workers.values()) await worker.stop();
  await db.close();
});

describe('for_each on the durable queue: one job per item', () => {
  it('runs every item once with its own key, output in input order, on both workers', async () => {
    const handle = await a.start('each-continue', { rows: rows(24) });
    const events: RunEvent[] = [];
    for await (const event of handle.events) events.push(event);
    const record = await handle.result;
    expect(record.status).toBe('succeeded');
    const each = record.steps[0]!;
    const output = each.output as { items: { n: number; worker: string }[]; succeeded: number };
    expect(output.items.map((item) => item.n)).toEqual(rows(24).map((row) => row.n * 10));
    expect(output).toMatchObject({ succeeded: 24, failed: 0, skipped: 0 });
    expect(new Set(output.items.map((item) => item.worker))).toEqual(new Set(['a', 'b']));
    expect(each).toMatchObject({ status: 'succeeded', attempts: 24 });
    expect(each.items).toEqual({ total: 24, succeeded: 24, failed: 0, skipped: 0, failures: [] });
    for (let i = 0; i < 24; i++) expect(calls.get(`${record.id}:each:${i}`)).toHaveLength(1);
    expect(record.steps[1]!.output).toMatchObject({ n: 240 });
    expect(each.logs).toHaveLength(24);
    expect(each.logs).toContain('item 7: doing 7');
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'item.finished')).toHaveLength(24);
    expect(types.filter((t) => t === 'step.started')).toHaveLength(2);
    expect(await a.getRun(record.id)).toEqual(record);
  });

  it('counts failures under on_error "continue" and lists them', async () => {
    const bad = new Set([3, 11, 29]);
    const record = await b.run('each-continue', { rows: rows(40, (n) => ({ fail: bad.has(n) })) });
    expect(record.status).toBe('succeeded');
    const output = record.steps[0]!.output as { items: unknown[]; succeeded: number; failed: number };
    expect(output).toMatchObject({ succeeded: 37, failed: 3, skipped: 0 });
    expect(output.items[11]).toEqual({ error: { code: 'step_failed', message: 'item 11 is bad' } });
    expect(record.steps[0]!.items!.failures.map((f) => f.index)).toEqual([3, 11, 29]);
    expect(record.steps[0]!.items!.failures[0]!.error.message).toBe('item 3 is bad');
  });

  it('stops at the first failed item under on_error "fail": the step fails, later items never start', async () => {
    const record = await a.run('each-fail', { rows: rows(10, (n) => ({ fail: n === 2 })) });
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'step_failed', step: 'each' });
    expect(record.error!.message).toContain('item 2: item 2 is bad');
    expect(record.steps[0]!.items).toMatchObject({ total: 10, succeeded: 2, failed: 1, skipped: 7 });
    expect(calls.has(`${record.id}:each:3`)).toBe(false);
    expect(record.steps.map((s) => s.name)).toEqual(['each']);
  });

  it('retries an item as a job of its own, with the same key', async () => {
    const record = await a.run('each-retry', { rows: rows(6, (n) => ({ flaky: n % 2 === 0 })) });
    expect(record.status).toBe('succeeded');
    expect(record.steps[0]!.attempts).toBe(9);
    expect(calls.get(`${record.id}:each:4`)).toHaveLength(2);
    expect(calls.get(`${record.id}:each:5`)).toHaveLength(1);
  });

  it('shows live counts in the record while items run', async () => {
    const stuck = new Promise<() => void>((resolve) => (hung = resolve));
    const handle = await a.start('each-continue', { rows: rows(30, (n) => ({ hang: n === 12 })) });
    const release = await stuck;
    // Item 12 waits; the others go on, and the record counts them as they finish.
    let seen = await b.getRun(handle.id);
    for (let i = 0; i < 400 && (seen!.steps[0]!.items?.succeeded ?? 0) < 29; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      seen = await b.getRun(handle.id);
    }
    expect(seen!.status).toBe('running');
    expect(seen!.steps[0]).toMatchObject({ status: 'running', attempts: 29, output: null });
    expect(seen!.steps[0]!.items).toEqual({ total: 30, succeeded: 29, failed: 0, skipped: 0, failures: [] });
    // The text the HTTP API answers with shows the same live counts (progress merged, not the stored record).
    expect(JSON.parse(await b.getRunText(handle.id))).toEqual(await b.getRun(handle.id));
    // A run list shows the run running (its summary, without steps).
    expect((await b.listRuns({ status: 'running' })).runs.map((r) => r.id)).toContain(handle.id);
    release();
    const record = await handle.result;
    expect(record.steps[0]!.output).toMatchObject({ succeeded: 30, failed: 0 });
    expect(record.steps[0]!.items).toEqual({ total: 30, succeeded: 30, failed: 0, skipped: 0, failures: [] });
  });

  it('a cancel stops the items: the one in flight is aborted, no further item starts, the counts add up', async () => {
    const stuck = new Promise<() => void>((resolve) => (hung = resolve));
    const handle = await b.start('each-fail', { rows: rows(20, (n) => ({ hang: n === 5 })) });
    await stuck;
    expect(await a.cancel(handle.id)).toBe(true);
    const record = await handle.result;
    expect(record.status).toBe('cancelled');
    expect(record.steps[0]).toMatchObject({ status: 'failed', error: { code: 'stopped' } });
    // The counts add up: the item in flight failed, stopped; the 14 never started are skipped.
    expect(record.steps[0]!.items).toMatchObject({
      total: 20,
      succeeded: 5,
      failed: 1,
      skipped: 14,
      failures: [{ index: 5, error: { code: 'stopped' } }],
    });
    // The step's attempts sum its items', the one cut short included.
    expect(record.steps[0]!.attempts).toBe(6);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(calls.has(`${handle.id}:each:6`)).toBe(false);
    expect(aborted.has(`${handle.id}:each:5`)).toBe(true);
    expect(await a.getRun(handle.id)).toEqual(record);
    expect(JSON.parse(await a.getRunText(handle.id))).toEqual(record);
  });

  it('checks conditions that read the item per item: items that fail them are skipped', async () => {
    const record = await a.run('each-if', { rows: rows(10, (n) => ({ flaky: n < 3 })) });
    expect(record.status).toBe('succeeded');
    const output = record.steps[0]!.output as { items: unknown[] };
    expect(output).toMatchObject({ succeeded: 7, failed: 0, skipped: 3 });
    expect(output.items.slice(2, 4)).toEqual([null, { n: 30, worker: expect.any(String) }]);
    expect(calls.has(`${record.id}:each:2`)).toBe(false);
    expect(record.steps[0]!.attempts).toBe(7);
  });

  it('finishes an empty list at once, and fails a list that is not one naming the reference', async () => {
    const empty = await a.run('each-continue', { rows: [] });
    expect(empty.status).toBe('succeeded');
    expect(empty.steps[0]!.output).toEqual({ items: [], succeeded: 0, failed: 0, skipped: 0 });
    const wrong = await a.run('each-fail', { rows: 'not a list' });
    expect(wrong.status).toBe('failed');
    expect(wrong.error!.message).toContain('{{input.rows}} resolved to string');
  });
});
