import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine, type ActionContext, type ActionDefinition, type Workflow } from '../../src/index.js';

/** Calls per idempotency key, and who ran them. */
const calls = new Map<string, string[]>();
const failuresLeft = new Map<string, number>();
const gates = new Map<string, Promise<void>>();
/** Which worker holds each run's `hold` step. */
const holders = new Map<string, string>();

function action(name: string, run: (input: Record<string, unknown>, context: ActionContext) => unknown) {
  return {
    provider: 'acme',
    module: 'test',
    action: name,
    input: z.record(z.string(), z.unknown()),
    run,
  } as unknown as ActionDefinition;
}

function actions(worker: string): ActionDefinition[] {
  return [
    action('mark', (input, context) => {
      calls.set(context.idempotencyKey, [...(calls.get(context.idempotencyKey) ?? []), worker]);
      return { ...input, worker };
    }),
    action('flaky', (input, context) => {
      const left = failuresLeft.get(context.idempotencyKey) ?? Number(input['failures'] ?? 0);
      failuresLeft.set(context.idempotencyKey, left - 1);
      calls.set(context.idempotencyKey, [...(calls.get(context.idempotencyKey) ?? []), worker]);
      if (left > 0) throw new Error(`flaky failure, ${left} left`);
      return { attempt: context.run.attempt };
    }),
    action('wait', async (input, context) => {
      await (gates.get(String(input['gate'])) ?? Promise.resolve());
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, Number(input['ms'] ?? 0));
        context.signal.addEventListener('abort', () => (clearTimeout(timer), reject(context.signal.reason)));
      });
      return { worker };
    }),
    action(
      'hold',
      (_input, context) =>
        new Promise((_, reject) => {
          holders.set(context.run.id, worker);
          context.signal.addEventListener('abort', () => reject(context.signal.reason));
        }),
    ),
    action('unstorable', (input, context) => {
      calls.set(context.idempotencyKey, [...(calls.get(context.idempotencyKey) ?? []), worker]);
      if (input['kind'] === 'bigint') return { deep: [{ n: 10n }] };
      if (input['kind'] !== 'cycle') return { kind: input['kind'] };
      const cycle: Record<string, unknown> = { a: 1 };
      cycle['self'] = cycle;
      return cycle;
    }),
  ];
}

function step(name: string, act: string, input: Record<string, unknown> = {}, extra: object = {}) {
  return {
    name,
    type: 'l2',
    l2_data: { provider: 'acme', module: 'test', action: act, input_data: input },
    ...extra,
  } as Workflow['steps'][number];
}

let db: PostgresDatabase;
let a: Engine;
let b: Engine;
const workers: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  db = await openPostgres(undefined, { queue: { pollSeconds: 0.5 } });
  a = new Engine({ storage: db.storage, queue: db.queue, actions: actions('a') });
  b = new Engine({ storage: db.storage, queue: db.queue, actions: actions('b') });
  workers.push(a.work({ concurrency: 1, triggers: false }), b.work({ concurrency: 1, triggers: false }));
});
afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await db.close();
});

describe('durable runs keep the semantics of section 5', () => {
  it('runs parallel branches on both workers and their join once', async () => {
    await a.workflows.create({
      name: 'fan',
      steps: [
        step('left', 'wait', { ms: 300 }),
        step('right', 'wait', { ms: 300 }),
        step('join', 'mark', { l: '{{left.worker}}', r: '{{right.worker}}' }),
      ],
      wires: [],
    });
    const record = await a.run('fan', {});
    expect(record.status).toBe('succeeded');
    const join = record.steps.find((s) => s.name === 'join')!.output as { l: string; r: string };
    // One worker each executes one branch at a time, so the branches ran on both.
    expect([join.l, join.r].sort()).toEqual(['a', 'b']);
    expect(calls.get(`${record.id}:join`)).toHaveLength(1);
  });

  it('retries a failing step through the queue with its backoff, the same idempotency key each time', async () => {
    await a.workflows.create({
      name: 'retrying',
      steps: [step('call', 'flaky', { failures: 2 }, { retry: { attempts: 3, backoff_ms: 50 } })],
      wires: [],
    });
    const handle = await b.start('retrying', {});
    const types: string[] = [];
    for await (const event of handle.events) types.push(event.type);
    const record = await handle.result;
    expect(record.status).toBe('succeeded');
    expect(record.steps[0]).toMatchObject({ status: 'succeeded', attempts: 3, output: { attempt: 3 } });
    expect(calls.get(`${record.id}:call`)).toHaveLength(3);
    expect(types.filter((t) => t === 'step.retrying')).toHaveLength(2);
    expect(types.filter((t) => t === 'step.started')).toHaveLength(3);
  });

  it('fails the run naming the step once its retries are exhausted', async () => {
    await a.workflows.create({
      name: 'exhausted',
      steps: [
        step('call', 'flaky', { failures: 5 }, { retry: { attempts: 2, backoff_ms: 10 } }),
        step('after', 'mark', { attempt: '{{call.attempt}}' }),
      ],
      wires: [],
    });
    const record = await a.run('exhausted', {});
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({
      step: 'call',
      message: expect.stringContaining('step "call" failed'),
    });
    expect(record.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([['call', 'failed', 2]]);
  });

  it('keeps on_error: continue, conditions and the workflow output', async () => {
    await a.workflows.create({
      name: 'continuing',
      steps: [
        step('call', 'flaky', { failures: 9 }, { on_error: 'continue' }),
        step('never', 'mark', {}, { conditions: [{ data_path: 'call.attempt', value: 1 }] }),
        step('report', 'mark', { code: '{{call.error.code}}' }),
      ],
      wires: [],
      workflow_output: { name: 'output', output_data: { code: '{{report.code}}' } },
    } as Workflow);
    const record = await a.run('continuing', {});
    expect(record.status).toBe('succeeded');
    expect(record.steps.map((s) => [s.name, s.status])).toEqual([
      ['call', 'failed'],
      ['never', 'skipped'],
      ['report', 'succeeded'],
    ]);
    expect(record.output).toEqual({ code: 'step_failed' });
  });

  it('enforces step timeouts and the run time limit', async () => {
    await a.workflows.create({
      name: 'slow',
      steps: [step('sleep', 'wait', { ms: 5000 }, { timeout_ms: 100 })],
      wires: [],
    });
    const timedOut = await a.run('slow', {});
    expect(timedOut.status).toBe('failed');
    expect(timedOut.error?.message).toContain('timeout of 100 ms');
    await a.workflows.create({ name: 'long', steps: [step('sleep', 'wait', { ms: 3000 })], wires: [] });
    const handle = await a.start('long', {}, { timeoutMs: 300 });
    const events: string[] = [];
    for await (const event of handle.events)
      events.push('step' in event ? `${event.type}:${event.step}` : event.type);
    const limited = await handle.result;
    expect(limited.status).toBe('failed');
    expect(limited.error).toMatchObject({ code: 'limit_exceeded', step: 'sleep' });
    // The step cut short is listed and closed by an event, as a run in process does.
    expect(limited.steps).toEqual([
      expect.objectContaining({
        name: 'sleep',
        status: 'failed',
        error: expect.objectContaining({ code: 'stopped' }),
      }),
    ]);
    expect(events).toEqual(['run.started', 'step.started:sleep', 'step.failed:sleep', 'run.finished']);
  });

  it('cancels a run from the other engine: the running step is told to stop, nothing after it starts', async () => {
    await a.workflows.create({
      name: 'cancellable',
      steps: [step('sleep', 'wait', { ms: 10_000 }), step('after', 'mark', { by: '{{sleep.worker}}' })],
      wires: [],
    });
    const handle = await a.start('cancellable', {});
    for await (const event of handle.events) if (event.type === 'step.started') break;
    expect(await b.cancel(handle.id)).toBe(true);
    const record = await handle.result;
    expect(record.status).toBe('cancelled');
    expect(record.error).toMatchObject({ code: 'cancelled', step: 'sleep' });
    expect(record.steps).toEqual([
      expect.objectContaining({
        name: 'sleep',
        status: 'failed',
        error: expect.objectContaining({ code: 'stopped' }),
      }),
    ]);
    expect(await b.cancel(handle.id)).toBe(false);
    await expect(b.cancel('no-such-run')).rejects.toMatchObject({ name: 'NotFoundError' });
  });

  it('runs the definition the run started with, even when it is replaced meanwhile', async () => {
    let open!: () => void;
    gates.set('snapshot', new Promise<void>((resolve) => (open = resolve)));
    await a.workflows.create({
      name: 'versioned',
      steps: [step('first', 'wait', { gate: 'snapshot' }), step('second', 'mark', { version: 1 })],
      wires: [],
    });
    const handle = await a.start('versioned', {});
    await a.workflows.replace({
      name: 'versioned',
      steps: [step('first', 'wait', {}), step('second', 'mark', { version: 2 })],
      wires: [],
    });
    open();
    const record = await handle.result;
    expect(record.steps[1]!.output).toMatchObject({ version: 1 });
    expect((await a.run('versioned', {})).steps[1]!.output).toMatchObject({ version: 2 });
  });
});

describe('child runs', () => {
  it('cancels a child run by its id in the process executing it; elsewhere 409 names its parent', async () => {
    await a.workflows.create({ name: 'held', steps: [step('hold', 'hold')], wires: [] });
    await a.workflows.create({
      name: 'holder',
      steps: [
        {
          name: 'child',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'workflows',
            action: 'run_workflow',
            input_data: { workflow_name: 'held', input: {} },
          },
        },
      ],
      wires: [],
    });
    const parent = await a.start('holder', {});
    let child: string | undefined;
    while (!child) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      child = [...holders.keys()].find((id) => id !== parent.id);
    }
    const [executing, other] = holders.get(child) === 'a' ? [a, b] : [b, a];
    await expect(other.cancel(child)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining(`cancel its parent run "${parent.id}"`),
    });
    expect(await executing.cancel(child)).toBe(true);
    const record = await parent.result;
    expect(record).toMatchObject({ status: 'failed', error: { code: 'cancelled', step: 'child' } });
    expect(await a.getRun(child)).toMatchObject({ status: 'cancelled', parent_run_id: parent.id });
  });
});

describe('outputs JSON cannot hold', () => {
  it('fails the step once with invalid_output, without retries, and the run names it', async () => {
    await a.workflows.create({
      name: 'unstorable_fail',
      steps: [
        step('big', 'unstorable', { kind: 'bigint' }, { retry: { attempts: 3, backoff_ms: 10 } }),
        step('after', 'mark', { n: '{{big.deep}}' }),
      ],
      wires: [],
    });
    const record = await a.run('unstorable_fail', {});
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({
      code: 'invalid_output',
      step: 'big',
      message:
        'step "big" failed: its output cannot be stored as JSON (deep[0].n is a BigInt, which JSON cannot hold)',
    });
    expect(record.steps.map((s) => [s.name, s.status, s.attempts, s.output])).toEqual([
      ['big', 'failed', 1, null],
    ]);
    expect(calls.get(`${record.id}:big`)).toHaveLength(1);
  });

  it('keeps on_error: continue: the step fails, its output is the error and the run goes on', async () => {
    await a.workflows.create({
      name: 'unstorable_continue',
      steps: [
        step('cycle', 'unstorable', { kind: 'cycle' }, { on_error: 'continue' }),
        step('report', 'mark', { code: '{{cycle.error.code}}' }),
      ],
      wires: [],
    });
    const record = await a.run('unstorable_continue', {});
    expect(record.status).toBe('succeeded');
    expect(record.steps[0]).toMatchObject({
      name: 'cycle',
      status: 'failed',
      error: {
        code: 'invalid_output',
        message:
          'step "cycle" failed: its output cannot be stored as JSON (self holds itself, which JSON cannot hold)',
      },
      output: { error: { code: 'invalid_output' } },
    });
    expect(record.steps[1]).toMatchObject({ status: 'succeeded', output: { code: 'invalid_output' } });
    expect(calls.get(`${record.id}:cycle`)).toHaveLength(1);
  });

  it('fails a for_each item whose output JSON cannot hold, as on_error says', async () => {
    const each = (onError: 'fail' | 'continue') =>
      ({
        name: `unstorable_items_${onError}`,
        steps: [
          {
            ...step('each', 'unstorable', { kind: '{{item.kind}}' }, { on_error: onError }),
            for_each: '{{input.rows}}',
          },
        ],
        wires: [],
      }) as Workflow;
    const rows = [{ kind: 'fine' }, { kind: 'bigint' }, { kind: 'fine' }];
    await a.workflows.create(each('continue'));
    const continued = await a.run('unstorable_items_continue', { rows });
    expect(continued.status).toBe('succeeded');
    expect(continued.steps[0]!.output).toMatchObject({
      items: [{ kind: 'fine' }, { error: { code: 'invalid_output' } }, { kind: 'fine' }],
      succeeded: 2,
      failed: 1,
    });
    expect(calls.get(`${continued.id}:each:1`)).toHaveLength(1);
    await a.workflows.create(each('fail'));
    const failed = await a.run('unstorable_items_fail', { rows });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({
      code: 'invalid_output',
      step: 'each',
      message: expect.stringContaining('item 1: its output cannot be stored as JSON'),
    });
  });
});

describe('POST /runs/{id}/cancel', () => {
  it('cancels a durable run through the HTTP API', async () => {
    const { createHandler } = await import('../../src/http/index.js');
    const handler = createHandler(a);
    await a.workflows.create({
      name: 'http_cancel',
      steps: [step('sleep', 'wait', { ms: 10_000 })],
      wires: [],
    });
    const handle = await a.start('http_cancel', {});
    const post = () => handler(new Request(`http://local/runs/${handle.id}/cancel`, { method: 'POST' }));
    const first = await post();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ cancelled: true });
    expect((await handle.result).status).toBe('cancelled');
    expect(await (await post()).json()).toEqual({ cancelled: false });
    const missing = await handler(new Request('http://local/runs/nope/cancel', { method: 'POST' }));
    expect(missing.status).toBe(404);
  });
});
