import { expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, type RunOptions } from '../../src/index.js';

it('engine.cancel stops a run of this engine, says false once it ended, and names a run that does not exist', async () => {
  const engine = new Engine();
  engine.actions.register({
    provider: 'acme',
    module: 'test',
    action: 'sleep',
    input: z.object({}),
    run: (_input, context) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 10_000);
        context.signal.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('stopped'))));
      }),
  });
  await engine.workflows.create({
    name: 'slow',
    steps: [
      {
        name: 'sleep',
        type: 'l2',
        l2_data: { provider: 'acme', module: 'test', action: 'sleep', input_data: {} },
      },
    ],
    wires: [],
  });
  const handle = await engine.start('slow', {});
  for await (const event of handle.events) if (event.type === 'step.started') break;
  expect(await engine.cancel(handle.id)).toBe(true);
  const record = await handle.result;
  expect(record.status).toBe('cancelled');
  expect(record.error).toMatchObject({ code: 'cancelled' });
  expect(await engine.cancel(handle.id)).toBe(false);
  await expect(engine.cancel('no-such-run')).rejects.toMatchObject({ name: 'NotFoundError' });
});

/** An engine with `acme/test/deaf`: resolves `{ done: true }` after `ms`, ignoring its signal. */
async function deafEngine(ms: number): Promise<{ engine: Engine; ended: () => boolean }> {
  const engine = new Engine();
  let ended = false;
  engine.actions.register({
    provider: 'acme',
    module: 'test',
    action: 'deaf',
    input: z.object({}),
    run: () =>
      new Promise((resolve) =>
        setTimeout(() => {
          ended = true;
          resolve({ done: true });
        }, ms),
      ),
  });
  await engine.workflows.create({
    name: 'deaf',
    steps: [
      {
        name: 'deaf',
        type: 'l2',
        l2_data: { provider: 'acme', module: 'test', action: 'deaf', input_data: {} },
      },
    ],
    wires: [],
  });
  return { engine, ended: () => ended };
}

it('a step that ignores its signal does not hold the run past its time limit or a cancel', async () => {
  const { engine, ended } = await deafEngine(1_500);
  const started = Date.now();
  const timedOut = await engine.run('deaf', {}, { timeoutMs: 100 });
  expect(Date.now() - started).toBeLessThan(1_000);
  expect(ended()).toBe(false);
  expect(timedOut.status).toBe('failed');
  expect(timedOut.error).toMatchObject({ code: 'limit_exceeded', step: 'deaf' });
  expect(timedOut.steps).toEqual([expect.objectContaining({ name: 'deaf', status: 'failed' })]);
  expect(timedOut.steps[0]!.error).toMatchObject({ code: 'limit_exceeded' });

  const handle = await engine.start('deaf', {});
  for await (const event of handle.events) if (event.type === 'step.started') break;
  expect(await engine.cancel(handle.id)).toBe(true);
  const cancelled = await handle.result;
  expect(ended()).toBe(false);
  expect(cancelled).toMatchObject({ status: 'cancelled', steps: [{ name: 'deaf', status: 'failed' }] });
  // The late result changes nothing stored.
  await new Promise((resolve) => setTimeout(resolve, 1_600));
  expect(ended()).toBe(true);
  expect(await engine.getRun(timedOut.id)).toMatchObject({ status: 'failed', steps: [{ status: 'failed' }] });
  expect(await engine.getRun(handle.id)).toMatchObject({
    status: 'cancelled',
    steps: [{ status: 'failed' }],
  });
});

it('refuses run options that are not valid, naming them, before anything runs', async () => {
  const { engine } = await deafEngine(1);
  for (const [options, name] of [
    [{ timeoutMs: Number.NaN }, 'timeoutMs'],
    [{ timeoutMs: 0 }, 'timeoutMs'],
    [{ timeoutMs: Infinity }, 'timeoutMs'],
    [{ concurrency: 0 }, 'concurrency'],
    [{ concurrency: 2.5 }, 'concurrency'],
    [{ concurrency: Number.NaN }, 'concurrency'],
    // The controller instead of its signal, and no signal at all: a run could not be cancelled.
    [{ signal: new AbortController() }, 'signal'],
    [{ signal: {} }, 'signal'],
    [{ key: 'k', signal: 'stop' }, 'signal'],
  ] as const) {
    await expect(engine.run('deaf', {}, options as RunOptions)).rejects.toThrow(
      new RegExp(`^${name} must be`),
    );
    await expect(engine.start('deaf', {}, options as RunOptions)).rejects.toThrow(TypeError);
  }
  await expect(engine.run('deaf', {}, { signal: new AbortController() } as never)).rejects.toThrow(
    "signal must be an AbortSignal (an AbortController's .signal), got an AbortController",
  );
  await expect(engine.run('deaf', {}, null as never)).rejects.toThrow(
    'run options must be an object, got null',
  );
  expect((await engine.listRuns()).runs).toEqual([]);
  // The key was not claimed: a start with it runs.
  await expect(engine.start('deaf', {}, { key: 'k' })).resolves.toMatchObject({ id: expect.any(String) });
});

it('a time limit longer than a timer can wait (24.8 days) does not end the run at once', async () => {
  const engine = new Engine({ limits: { runTimeoutMs: 30 * 24 * 3600 * 1000 } });
  const { engine: other } = await deafEngine(50);
  const run = await other.run('deaf', {}, { timeoutMs: 2 ** 31 + 5 });
  expect(run).toMatchObject({ status: 'succeeded', output: { deaf: { done: true } } });
  await engine.workflows.create({
    name: 'noop',
    steps: [
      {
        name: 'a',
        type: 'l2',
        l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { x: 1 } },
      },
    ],
    wires: [],
  });
  expect(await engine.run('noop', {})).toMatchObject({ status: 'succeeded' });
});
