import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConflictError, Engine } from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';

/** An engine whose custom action `t/m/odd` returns or throws what `act` does, and workflow `w` of that one step. */
async function engineWith(act: () => unknown): Promise<Engine> {
  const engine = new Engine();
  engine.actions.register({
    provider: 't',
    module: 'm',
    action: 'odd',
    input: z.any(),
    run: async () => act(),
  });
  await engine.workflows.create({
    name: 'w',
    steps: [
      {
        name: 'first',
        type: 'l2',
        l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { a: 1 } },
      },
      { name: 'odd', type: 'l2', l2_data: { provider: 't', module: 'm', action: 'odd', input_data: {} } },
    ],
    wires: [{ source_name: 'first', target_name: 'odd' }],
  });
  return engine;
}

describe('values JSON cannot hold', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;

  it.each([
    ['a BigInt', { n: 1n }, '(n is a BigInt, which JSON cannot hold)'],
    ['a cycle', cyclic, '(self holds itself, which JSON cannot hold)'],
  ])('a step that returns %s fails, named, and the run is stored failed', async (_, value, why) => {
    const engine = await engineWith(() => value);
    const record = await engine.run('w');
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'invalid_output', step: 'odd' });
    expect(record.error?.message).toContain('step "odd" failed: its output cannot be stored as JSON');
    expect(record.error?.message).toContain(why);
    expect(record.steps.map((step) => [step.name, step.status, step.output])).toEqual([
      ['first', 'succeeded', { a: 1 }],
      ['odd', 'failed', null],
    ]);
    expect((await engine.getRun(record.id)).status).toBe('failed');
    const answer = await createHandler(engine)(new Request('http://x/workflows/w/runs', { method: 'POST' }));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ status: 'failed', error: { code: 'invalid_output' } });
  });

  it('fails the step once, unretried, and on_error: continue goes on with the error as its output', async () => {
    let calls = 0;
    const engine = new Engine();
    engine.actions.register({
      provider: 't',
      module: 'm',
      action: 'odd',
      input: z.any(),
      run: () => {
        calls++;
        return { deep: [{ n: 1n }] };
      },
    });
    await engine.workflows.create({
      name: 'w',
      steps: [
        {
          name: 'odd',
          type: 'l2',
          on_error: 'continue',
          retry: { attempts: 3, backoff_ms: 1 },
          l2_data: { provider: 't', module: 'm', action: 'odd', input_data: {} },
        },
        {
          name: 'after',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { code: '{{odd.error.code}}' },
          },
        },
      ],
      wires: [{ source_name: 'odd', target_name: 'after' }],
    });
    const record = await engine.run('w');
    expect(calls).toBe(1);
    expect(record.status).toBe('succeeded');
    expect(record.steps[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: {
        code: 'invalid_output',
        message:
          'step "odd" failed: its output cannot be stored as JSON (deep[0].n is a BigInt, which JSON cannot hold)',
      },
      output: { error: { code: 'invalid_output' } },
    });
    expect(record.steps[1]).toMatchObject({ status: 'succeeded', output: { code: 'invalid_output' } });
  });

  it.each([
    ['a null-prototype object', () => Object.create(null) as unknown],
    [
      'an object whose message cannot be made text',
      () => ({ code: 'x', message: Object.create(null) as unknown }),
    ],
    [
      'a value whose properties throw',
      () =>
        new Proxy(
          {},
          {
            has: () => {
              throw new Error('trap');
            },
            get: () => {
              throw new Error('trap');
            },
          },
        ),
    ],
  ])('a step that throws %s fails the run instead of leaving it running', async (_, thrown) => {
    const engine = await engineWith(() => {
      throw thrown();
    });
    const record = await engine.run('w');
    expect(record.status).toBe('failed');
    expect(record.error?.step).toBe('odd');
    expect(typeof record.error?.message).toBe('string');
    expect((await engine.getRun(record.id)).status).toBe('failed');
  });
});

describe('a run input JSON cannot hold', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;

  it.each([
    ['a BigInt', { n: { deep: [1, 2n] } }, 'n.deep[1]', 'BigInt'],
    ['a cycle', { x: cyclic }, 'x.self', 'holds itself'],
    ['a BigInt under a key that needs quoting', { 'odd.key': 3n }, '["odd.key"]', 'BigInt'],
  ])('is refused before anything runs or is stored, naming where (%s)', async (_, input, path, why) => {
    const engine = await engineWith(() => ({ ran: true }));
    for (const start of [() => engine.run('w', input), () => engine.start('w', input)]) {
      const error = await start().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toMatchObject({
        name: 'ValidationError',
        issues: [{ code: 'invalid_input', path, message: expect.stringContaining(why) }],
      });
    }
    expect((await engine.listRuns()).runs).toEqual([]);
  });

  it('takes what JSON.stringify makes of dates, NaN and functions, as the run record shows', async () => {
    const engine = await engineWith(() => ({ ran: true }));
    const record = await engine.run('w', { at: new Date(0), n: Number.NaN, f: () => 1 });
    expect(record.status).toBe('succeeded');
    expect((await engine.getRun(record.id)).input).toEqual({ at: '1970-01-01T00:00:00.000Z', n: null });
  });
});

describe('engine.actions.register', () => {
  it('refuses a key a built-in action has, as it refuses one of your own, and stub still stands in', async () => {
    const engine = new Engine();
    const hijack = {
      provider: 'catalog',
      module: 'action',
      action: 'get_entity',
      input: z.any(),
      run: () => ({ hijacked: true }),
    };
    expect(() => engine.actions.register(hijack)).toThrow(ConflictError);
    expect(() =>
      engine.actions.register({ ...hijack, provider: 'platform', module: 'dummy', action: 'dummy_task' }),
    ).toThrow(ConflictError);
    engine.actions.register({ ...hijack, provider: 'mine' });
    expect(() => engine.actions.register({ ...hijack, provider: 'mine' })).toThrow(ConflictError);
    expect(() => engine.actions.register(null as never)).toThrow(TypeError);
    const stub = engine.actions.stub('catalog/action/get_entity', { output: { stubbed: true } });
    expect(stub.calls).toEqual([]);
  });
});

describe('values that JSON would make too large', () => {
  it('fails a dummy_task whose wires double its output at each step, at once, without walking it all', async () => {
    const engine = new Engine();
    const dummy = (name: string) => ({
      name,
      type: 'l2' as const,
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { k: 1 } },
    });
    // Each step gets the previous step's output twice: 2^40 copies as JSON, a few objects in memory.
    const steps = Array.from({ length: 40 }, (_, i) => dummy(`s${i}`));
    const wires = steps
      .slice(1)
      .flatMap((step, i) =>
        ['a', 'b'].map((path) => ({ source_name: `s${i}`, target_name: step.name, target_data_path: path })),
      );
    await engine.workflows.create({ name: 'doubling', steps, wires });
    const record = await engine.run('doubling');
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({
      code: 'invalid_output',
      message: expect.stringContaining('it would take more than 16 MiB of JSON'),
    });
    expect((await engine.getRun(record.id)).status).toBe('failed');
  });

  it('fails a step whose text, its references filled in, would pass 16 Mi characters', async () => {
    const engine = new Engine();
    // Each step's text holds the previous step's output twice, as JSON: about 3.4 times as long.
    const steps = Array.from({ length: 16 }, (_, i) => ({
      name: `s${i}`,
      type: 'l2' as const,
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { x: i === 0 ? 'ab"c' : `{{s${i - 1}}}{{s${i - 1}}}` },
      },
    }));
    await engine.workflows.create({ name: 'texts', steps, wires: [] });
    const record = await engine.run('texts');
    expect(record.status).toBe('failed');
    // The step whose text would pass the limit fails (the run's error may be the record's size, as
    // the texts before it, escaped again at each step, already fill much of the record).
    expect(record.steps.map((step) => step.error).filter(Boolean)).toContainEqual(
      expect.objectContaining({
        code: 'limit_exceeded',
        message: expect.stringContaining('would come to more than 16 Mi characters'),
      }),
    );
  });

  it('fails the run with record_too_large when its outputs together would pass 64 MiB, keeping none', async () => {
    const engine = new Engine();
    const part = 'x'.repeat(1024 * 1024);
    engine.actions.register({
      provider: 't',
      module: 'm',
      action: 'big',
      input: z.any(),
      // 15 MiB of JSON each, one string in memory.
      run: () => ({ parts: new Array<string>(15).fill(part) }),
    });
    const big = (name: string) => ({
      name,
      type: 'l2' as const,
      l2_data: { provider: 't', module: 'm', action: 'big', input_data: {} },
    });
    const steps = ['a', 'b', 'c', 'd', 'e', 'f'].map(big);
    const wires = steps.slice(1).map((step, i) => ({ source_name: steps[i]!.name, target_name: step.name }));
    await engine.workflows.create({ name: 'large', steps, wires });
    const record = await engine.run('large');
    expect(record.status).toBe('failed');
    expect(record.error?.code).toBe('record_too_large');
    const stored = await engine.getRun(record.id);
    expect(stored.status).toBe('failed');
    expect(stored.steps.every((step) => step.output === null)).toBe(true);
  }, 60_000);
});
