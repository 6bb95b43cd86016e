import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, MemoryStorage, ValidationError, type RunEvent, type WorkflowBody } from '../../src/index.js';

/** Lets the `hold` steps waiting finish. */
function holding(storage = new MemoryStorage(), options: { runTimeoutMs?: number } = {}) {
  const waiting: (() => void)[] = [];
  const engine = new Engine({
    storage,
    ...(options.runTimeoutMs ? { limits: { runTimeoutMs: options.runTimeoutMs } } : {}),
  });
  engine.actions.register({
    provider: 'test',
    module: 'handles',
    action: 'hold',
    input: z.looseObject({}),
    run: () => new Promise<{ held: true }>((resolve) => waiting.push(() => resolve({ held: true }))),
  });
  const release = () => waiting.splice(0).forEach((go) => go());
  return { engine, release, waiting };
}

const HELD = {
  name: 'held',
  steps: [
    {
      name: 'a',
      type: 'l2',
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: {} },
    },
    {
      name: 'b',
      type: 'l2',
      l2_data: { provider: 'test', module: 'handles', action: 'hold', input_data: {} },
    },
  ],
  wires: [],
} satisfies WorkflowBody;

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

const kinds = (events: RunEvent[]) =>
  events.map((event) => event.type + ('step' in event ? `:${event.step}` : ''));

describe('handle.events', () => {
  it('gives every event to each of two loops at once, and again to a loop after the run', async () => {
    const { engine, release, waiting } = holding();
    await engine.workflows.create(HELD);
    const handle = await engine.start('held', {});
    const collect = async () => {
      const seen: RunEvent[] = [];
      for await (const event of handle.events) seen.push(event);
      return seen;
    };
    const [first, second] = [collect(), collect()];
    await until(() => waiting.length === 1);
    release();
    const all = [
      'run.started',
      'step.started:a',
      'step.succeeded:a',
      'step.started:b',
      'step.succeeded:b',
      'run.finished',
    ];
    expect(kinds(await first)).toEqual(all);
    expect(kinds(await second)).toEqual(all);
    expect(kinds(await collect())).toEqual(all);
  });

  it('keeps every event when onEvent throws, and refuses an onEvent or traceparent of the wrong kind', async () => {
    const { engine } = holding();
    await engine.workflows.create({ ...HELD, steps: HELD.steps.slice(0, 1) });
    const heard: string[] = [];
    const handle = await engine.start(
      'held',
      {},
      {
        onEvent: (event) => {
          heard.push(event.type);
          if (event.type === 'step.started') throw new Error('listener bug');
        },
      },
    );
    const seen: RunEvent[] = [];
    for await (const event of handle.events) seen.push(event);
    expect(kinds(seen)).toEqual(['run.started', 'step.started:a', 'step.succeeded:a', 'run.finished']);
    expect(heard).toEqual(['run.started', 'step.started', 'step.succeeded', 'run.finished']);
    expect((await handle.result).status).toBe('succeeded');
    const loose = engine as unknown as { start(...args: unknown[]): Promise<unknown> };
    await expect(loose.start('held', {}, { onEvent: 5 })).rejects.toThrow(
      new TypeError('onEvent must be a function, got a number'),
    );
    await expect(loose.start('held', {}, { traceparent: 5 })).rejects.toThrow(
      /^traceparent must be a string/,
    );
    expect((await engine.listRuns()).runs).toHaveLength(1);
  });
});

describe('names and ids that are no strings', () => {
  it('are TypeErrors naming the argument, for start, run, cancel and getRun', async () => {
    const loose = new Engine() as unknown as Record<
      'start' | 'run' | 'cancel' | 'getRun',
      (...args: unknown[]) => Promise<unknown>
    >;
    await expect(loose.start(null, {})).rejects.toThrow(
      new TypeError('engine.start: the workflow name must be a string, got null'),
    );
    await expect(loose.run(5, {})).rejects.toThrow(
      new TypeError('engine.run: the workflow name must be a string, got number 5'),
    );
    await expect(loose.cancel({})).rejects.toThrow(
      new TypeError('engine.cancel: the run id must be a string, got an object'),
    );
    await expect(loose.getRun(undefined)).rejects.toThrow(
      new TypeError('engine.getRun: the run id must be a string, got nothing'),
    );
  });
});

describe('run keys', () => {
  it('refuses a key holding half of a surrogate pair or a C1 control character; counts characters, not UTF-16 units', async () => {
    const { engine } = holding();
    await engine.workflows.create({ ...HELD, steps: HELD.steps.slice(0, 1) });
    for (const [key, says] of <[string, string][]>[
      ['a\uD800b', 'the run key must be well-formed text (it holds half of a surrogate pair)'],
      ['a\uDC00', 'the run key must be well-formed text (it holds half of a surrogate pair)'],
      ['a\u0085b', 'the run key must not hold control characters'],
      ['😀'.repeat(256), 'the run key must have 1 to 255 characters'],
    ]) {
      const refused = await engine.run('held', {}, { key }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ValidationError);
      expect((refused as ValidationError).issues).toEqual([
        { code: 'invalid_key', path: 'key', message: says },
      ]);
    }
    expect((await engine.run('held', {}, { key: '😀'.repeat(255) })).status).toBe('succeeded');
    expect((await engine.listRuns()).runs).toHaveLength(1);
  });

  it('a start on another engine gets the run when it ends, even past its own runTimeoutMs', async () => {
    const storage = new MemoryStorage();
    const a = holding(storage);
    const b = holding(storage, { runTimeoutMs: 100 });
    // Both open before the run starts (an engine opening marks the runs it finds running interrupted).
    await b.engine.ready();
    await a.engine.workflows.create(HELD);
    const first = await a.engine.start('held', {}, { key: 'slow', timeoutMs: 60_000 });
    await until(() => a.waiting.length === 1);
    const again = await b.engine.start('held', {}, { key: 'slow' });
    expect(again).toMatchObject({ id: first.id, replayed: true });
    let settled = false;
    void again.result.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(settled).toBe(false);
    a.release();
    expect(await again.result).toEqual(await first.result);
    expect((await again.result).status).toBe('succeeded');
  });

  it('a run of a stopped engine, still running past its time limit, is marked interrupted by the start that replays it', async () => {
    const storage = new MemoryStorage();
    const a = holding(storage);
    const b = holding(storage);
    await b.engine.ready();
    await a.engine.workflows.create(HELD);
    const first = await a.engine.start('held', {}, { key: 'lost', timeoutMs: 60_000 });
    await until(() => a.waiting.length === 1);
    // As if its engine had stopped with the run at step b, and the key been claimed 71 s ago.
    const [stored] = await storage.list<{ run_id: string; at: string }>('run_keys');
    await storage.put('run_keys', stored!.key, {
      ...stored!.value,
      at: new Date(Date.now() - 71_000).toISOString(),
    });
    const again = await b.engine.run('held', {}, { key: 'lost' });
    expect(again).toMatchObject({ id: first.id, status: 'interrupted', error: { code: 'interrupted' } });
    expect(await b.engine.getRun(first.id)).toEqual(again);
    a.release();
  });
});
