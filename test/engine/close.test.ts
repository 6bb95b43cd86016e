import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { createHandler } from '../../src/http/index.js';
import { Engine, MemoryStorage, isStepwireError, type RunRecord } from '../../src/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A gate a step waits at: `opened` resolves once a step is waiting, `open()` lets it go on. */
function gate() {
  let open!: () => void;
  let waiting!: () => void;
  const opened = new Promise<void>((resolve) => (waiting = resolve));
  const released = new Promise<void>((resolve) => (open = resolve));
  return { opened, open, wait: () => (waiting(), released) };
}

/** An engine whose workflow `slow` has one step that waits at `at` (or until it is cancelled). */
async function slowEngine(
  at: ReturnType<typeof gate>,
  options: ConstructorParameters<typeof Engine>[0] = {},
) {
  const engine = new Engine(options);
  engine.actions.register({
    provider: 'test',
    module: 'close',
    action: 'wait',
    input: z.looseObject({}),
    run: async (_input, context) => {
      const stopped = new Promise<never>((_, reject) =>
        context.signal?.addEventListener('abort', () => reject(new Error('told to stop')), { once: true }),
      );
      await Promise.race([at.wait(), stopped]);
      return { waited: true };
    },
  });
  await engine.workflows.create({
    name: 'slow',
    steps: [
      {
        name: 'wait',
        type: 'l2',
        l2_data: { provider: 'test', module: 'close', action: 'wait', input_data: {} },
      },
    ],
    wires: [],
  });
  return engine;
}

/** What a promise has come to so far: its value, its error, or `pending`. */
async function state<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([
    promise,
    new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 100)),
  ]);
}

describe('engine.close()', () => {
  it('refuses run, start, tick and work afterwards with code closed, naming the call; a second close resolves', async () => {
    const storage = new MemoryStorage();
    const engine = new Engine({ storage });
    await engine.workflows.create({
      name: 'echo',
      steps: [
        {
          name: 'echo',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { x: '{{input.x}}' },
          },
        },
      ],
      wires: [],
    });
    const before = await engine.run('echo', { x: 1 });
    await engine.close();
    await expect(engine.close()).resolves.toBeUndefined();
    for (const [call, attempt] of [
      ['run', () => engine.run('echo', { x: 2 })],
      ['start', () => engine.start('echo', { x: 2 })],
      ['tick', () => engine.tick()],
    ] as const) {
      const error: unknown = await attempt().catch((e: unknown) => e);
      expect(isStepwireError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'closed' });
      expect((error as Error).message).toContain(`engine.${call}()`);
    }
    expect(() => engine.work()).toThrow(
      expect.objectContaining({ code: 'closed', message: expect.stringContaining('engine.work()') }),
    );
    // Nothing ran, and reads still work: the storage is the caller's and stays open.
    expect((await engine.listRuns()).runs.map((r) => r.id)).toEqual([before.id]);
    expect((await engine.getRun(before.id)).status).toBe('succeeded');
    expect(await storage.get('workflows', 'echo')).toBeDefined();
    // Over HTTP a run after close is a 503 naming the code.
    const response = await createHandler(engine)(
      new Request('http://x/workflows/echo/runs', {
        method: 'POST',
        body: '{"x":3}',
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'closed' });
  });

  it('waits for the runs executing in this process to end, and starts none after', async () => {
    const at = gate();
    const engine = await slowEngine(at);
    const run = engine.run('slow');
    await at.opened;
    const closing = engine.close();
    expect(await state(closing)).toBe('pending');
    await expect(engine.start('slow')).rejects.toMatchObject({ code: 'closed' });
    at.open();
    await closing;
    const record = await state(run);
    expect(record).toMatchObject({ status: 'succeeded', output: { wait: { waited: true } } });
    expect((await engine.listRuns()).runs).toHaveLength(1);
  });

  it('stops waiting for a run another engine started under the same run key: that wait rejects with closed', async () => {
    const at = gate();
    const storage = new MemoryStorage();
    const first = await slowEngine(at, { storage });
    // A second engine on the same storage, opened before the first's run starts (so it does not
    // take that run for one a dead engine left): the key names the first's run.
    const second = new Engine({ storage });
    await second.ready();
    const running = first.start('slow', {}, { key: 'k1' });
    await at.opened;
    second.actions.register({
      provider: 'test',
      module: 'close',
      action: 'wait',
      input: z.looseObject({}),
      run: () => ({ waited: false }),
    });
    const replayed = await second.start('slow', {}, { key: 'k1' });
    expect(replayed.id).toBe((await running).id);
    const result = replayed.result.catch((error: unknown) => error);
    await second.close();
    expect(await result).toMatchObject({ code: 'closed', message: expect.stringContaining(replayed.id) });
    at.open();
    expect(await (await running).result).toMatchObject({ status: 'succeeded' });
    await first.close();
  });

  it('with { cancel: true } cancels them instead: each ends cancelled', async () => {
    const at = gate();
    const engine = await slowEngine(at);
    const handle = await engine.start('slow');
    await at.opened;
    const waiting = engine.close();
    expect(await state(waiting)).toBe('pending');
    // A later close({ cancel: true }) cancels what the first close waits for.
    await engine.close({ cancel: true });
    await waiting;
    const record = (await state(handle.result)) as RunRecord;
    expect(record.status).toBe('cancelled');
    expect((await engine.getRun(handle.id)).status).toBe('cancelled');
  });

  it('with a queue: the step in flight finishes and commits, and the database stays open', async () => {
    const db = await openPostgres(undefined, { queue: { pollSeconds: 0.5 } });
    cleanups.push(() => db.close());
    const at = gate();
    const engine = await slowEngine(at, { storage: db.storage, queue: db.queue });
    const worker = engine.work({ concurrency: 1, triggers: false });
    const handle = await engine.start('slow');
    await at.opened;
    const closing = engine.close();
    expect(await state(closing)).toBe('pending');
    at.open();
    await closing;
    await worker.stop();
    // The step's result was committed: another engine on the same database reads the run as succeeded.
    const other = new Engine({ storage: db.storage, queue: db.queue });
    expect(await other.getRun(handle.id)).toMatchObject({
      status: 'succeeded',
      output: { wait: { waited: true } },
    });
    await other.close();
  });

  /** Runs close-child.ts; resolves with its lines, its exit code and how long it took to exit after `closed`. */
  function child(mode: string, waitMs: number) {
    return new Promise<{ lines: string[]; code: number | null; afterClose: number; ran: boolean }>((done) => {
      const process_ = spawn(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'test/engine/close-child.ts'), mode],
        {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      let err = '';
      let closedAt = 0;
      process_.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (!closedAt && /^(closed|not closing)$/m.test(out)) {
          closedAt = Date.now();
          setTimeout(() => process_.kill('SIGKILL'), waitMs);
        }
      });
      process_.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
      process_.once('close', (code, signal) => {
        if (err) console.error(err);
        done({
          lines: out.trim().split('\n'),
          code: signal ? null : code,
          afterClose: Date.now() - closedAt,
          ran: closedAt > 0,
        });
      });
    });
  }

  it.each(['memory', 'durable'])(
    'lets the process exit on its own once closed (%s): no timer, interval or worker left',
    async (mode) => {
      const result = await child(mode, 5000);
      expect(result.lines).toEqual(['run succeeded', 'fired 1', 'closed']);
      expect(result.code).toBe(0);
      expect(result.afterClose).toBeLessThan(3000);
    },
    60_000,
  );

  it('with a queue, a run still queued at close (no worker) lets the process exit; its result rejects with closed', async () => {
    const result = await child('durable-pending', 5000);
    expect(result.lines).toEqual(['result rejected closed', 'closed']);
    expect(result.code).toBe(0);
    expect(result.afterClose).toBeLessThan(3000);
  }, 60_000);

  it('(control) the same process without close() keeps running', async () => {
    const result = await child('no-close', 1500);
    expect(result.lines).toEqual(['run succeeded', 'fired 1', 'not closing']);
    // Killed by the test: the work loop's tick timer kept it alive.
    expect(result.code).toBeNull();
  }, 60_000);
});
