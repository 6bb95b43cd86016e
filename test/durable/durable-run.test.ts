import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { z } from 'zod';
import { PGlite } from '@electric-sql/pglite';
import {
  Engine,
  type ActionContext,
  type ActionDefinition,
  type RunEvent,
  type RunRecord,
  type WorkflowBody,
} from '../../src/index.js';

const opened: { db: PostgresDatabase; stop: () => Promise<void> }[] = [];
afterEach(async () => {
  release();
  for (const { db, stop } of opened.splice(0)) {
    await stop();
    await db.close();
  }
});

function chain(name: string, length: number): WorkflowBody {
  return {
    name,
    steps: Array.from({ length }, (_, i) => ({
      name: `s${i}`,
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'test',
        action: 'echo',
        input_data: { n: i, ...(i > 0 ? { prev: `{{s${i - 1}.n}}` } : {}) },
      },
    })),
    wires: [],
  };
}

const echo = {
  provider: 'platform',
  module: 'test',
  action: 'echo',
  input: z.object({ n: z.number(), prev: z.number().optional() }),
  run: (input: { n: number; prev?: number }, context: ActionContext) => ({
    n: input.n,
    prev: input.prev ?? null,
    key: context.idempotencyKey,
  }),
} satisfies ActionDefinition;

/** Lets the `hold` steps waiting finish. */
let release: () => void = () => undefined;
const hold = {
  provider: 'platform',
  module: 'test',
  action: 'hold',
  input: z.object({}),
  run: () => new Promise<{ held: true }>((resolve) => (release = () => resolve({ held: true }))),
} satisfies ActionDefinition;

const held = {
  name: 'held',
  steps: [
    {
      name: 'hold',
      type: 'l2',
      l2_data: { provider: 'platform', module: 'test', action: 'hold', input_data: {} },
    },
  ],
  wires: [],
} satisfies WorkflowBody;

async function open(target?: { pglite: PGlite }): Promise<{ engine: Engine; db: PostgresDatabase }> {
  const db = await openPostgres(target);
  const engine = new Engine({
    storage: db.storage,
    queue: db.queue,
    actions: [echo as unknown as ActionDefinition, hold as unknown as ActionDefinition],
  });
  const worker = engine.work({ concurrency: 2, triggers: false });
  opened.push({ db, stop: () => worker.stop() });
  return { engine, db };
}

describe('durable runs on PGlite', () => {
  it('runs a chain of steps through the queue, with events in order', async () => {
    const { engine } = await open();
    await engine.workflows.create(chain('c', 3));
    const handle = await engine.start('c', {});
    const events: RunEvent[] = [];
    for await (const event of handle.events) events.push(event);
    const record = await handle.result;
    expect(record.status).toBe('succeeded');
    expect(record.steps.map((s) => [s.name, s.status])).toEqual([
      ['s0', 'succeeded'],
      ['s1', 'succeeded'],
      ['s2', 'succeeded'],
    ]);
    expect(record.steps[2]!.output).toEqual({ n: 2, prev: 1, key: `${record.id}:s2` });
    expect(events.map((e) => e.type + ('step' in e ? ':' + e.step : ''))).toEqual([
      'run.started',
      'step.started:s0',
      'step.succeeded:s0',
      'step.started:s1',
      'step.succeeded:s1',
      'step.started:s2',
      'step.succeeded:s2',
      'run.finished',
    ]);
    expect(await engine.getRun(record.id)).toEqual(record);
  }, 30_000);
});

describe('an engine without a queue on a database with durable runs', () => {
  it('marks no durable run interrupted when it opens: the run goes on and its starter gets the result', async () => {
    const { engine, db } = await open();
    await engine.workflows.create(held);
    const handle = await engine.start('held', {});
    for await (const event of handle.events) if (event.type === 'step.started') break;
    const reader = new Engine({ storage: db.storage });
    await reader.ready();
    expect((await reader.getRun(handle.id)).status).toBe('running');
    // Its record is the queue's: a put through the storage leaves it as it is.
    expect(await db.storage.put('runs', handle.id, { id: handle.id, status: 'interrupted' })).toBe(false);
    release();
    const record = await handle.result;
    expect(record).toMatchObject({ status: 'succeeded', steps: [{ name: 'hold', output: { held: true } }] });
    expect(await reader.getRun(handle.id)).toEqual(record);
  }, 30_000);

  it('resolves a followed run whose stored record became final without its run.finished event', async () => {
    const pglite = new PGlite();
    try {
      const { engine } = await open({ pglite });
      await engine.workflows.create(held);
      const handle = await engine.start('held', {});
      for await (const event of handle.events) if (event.type === 'step.started') break;
      // What an engine without a queue did to such runs before it left them alone.
      const stored = await engine.getRun(handle.id);
      const ended: RunRecord = {
        ...stored,
        status: 'interrupted',
        finished_at: new Date().toISOString(),
        error: { code: 'interrupted', message: 'the engine running this run stopped' },
      };
      await pglite.query(
        `update stepwire.runs set status = 'interrupted', record = $1::text::json where id = $2`,
        [JSON.stringify(ended), handle.id],
      );
      expect(await handle.result).toMatchObject({ status: 'interrupted', error: { code: 'interrupted' } });
      release();
    } finally {
      for (const { db, stop } of opened.splice(0)) {
        await stop();
        await db.close();
      }
      await pglite.close();
    }
  }, 30_000);
});

describe('engine.work() options', () => {
  it('refuses a concurrency, tickMs, triggers or onError it cannot use, with a TypeError naming it', async () => {
    const db = await openPostgres();
    const durable = new Engine({ storage: db.storage, queue: db.queue });
    const inMemory = new Engine();
    try {
      const cases: [object, RegExp][] = [
        ...[Number.NaN, -3, 0, 2.5, '4', 257, Infinity, null].map(
          (concurrency) =>
            [{ concurrency }, /^concurrency must be a whole number from 1 to 256, got /] as [object, RegExp],
        ),
        ...[Number.NaN, 0, -1, '10', 2 ** 31, Infinity].map(
          (tickMs) =>
            [{ tickMs }, /^tickMs must be a number of milliseconds from 1 to 2147483647, got /] as [
              object,
              RegExp,
            ],
        ),
        [{ triggers: 'no' }, /^triggers must be true or false, got "no"/],
        [{ onError: 'log' }, /^onError must be a function/],
      ];
      for (const engine of [durable, inMemory])
        for (const [options, message] of cases) expect(() => engine.work(options as never)).toThrow(message);
      expect(() => durable.work({ concurrency: Number.NaN })).toThrow(TypeError);
      // The bounds themselves are taken.
      for (const options of [
        { concurrency: 1, tickMs: 1 },
        { concurrency: 256, tickMs: 2 ** 31 - 1 },
      ])
        await durable.work({ ...options, triggers: false }).stop();
    } finally {
      await durable.close();
      await inMemory.close();
      await db.close();
    }
  }, 30_000);
});
