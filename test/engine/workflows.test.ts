import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, NotFoundError, ValidationError, type RunEvent, type Workflow } from '../../src/index.js';
import { shopEngine } from './helpers.js';

const readThenChat: Workflow = {
  name: 'notify_orders',
  steps: [
    {
      name: 'read',
      type: 'l2',
      l2_data: {
        provider: 'catalog',
        module: 'action',
        action: 'get_entity',
        input_data: {
          entity_name: 'orders',
          operation: {
            filters: [
              {
                column: 'customer_id',
                operator: 'EQUALS',
                value_type: 'NUMBER',
                value: '{{input.customer_id}}',
              },
            ],
          },
        },
        metadata: {},
      },
    },
    {
      name: 'chat',
      type: 'l2',
      l2_data: {
        provider: 'chat',
        module: 'bot',
        action: 'send_message',
        input_data: {
          channel: 'sales',
          message: 'Customer {{input.customer_id}} has {{read.body.table.rows.length}} orders',
        },
      },
    },
  ],
  wires: [],
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: { customer_id: { type: 'number' } },
      required: ['customer_id'],
    },
  },
  workflow_output: {
    name: 'output',
    output_data: { count: '{{read.body.table.rows.length}}', rows: '{{read.body.table.rows}}' },
  },
};

/** Four steps with every kind of reference problem: a cycle, an unknown step, an unknown action, unknown input paths. */
const brokenSteps: Workflow['steps'] = [
  {
    name: 'a',
    type: 'l2',
    l2_data: {
      provider: 'platform',
      module: 'dummy',
      action: 'dummy_task',
      input_data: { x: '{{b.value}}' },
    },
  },
  {
    name: 'b',
    type: 'l2',
    l2_data: {
      provider: 'platform',
      module: 'dummy',
      action: 'dummy_task',
      input_data: { y: '{{a.value}} and {{ghost.x}}' },
    },
  },
  { name: 'c', type: 'l2', l2_data: { provider: 'nope', module: 'x', action: 'y' } },
  {
    name: 'd',
    type: 'l2',
    l2_data: {
      provider: 'platform',
      module: 'dummy',
      action: 'dummy_task',
      input_data: { z: '{{input.missing}}', p: '{{a.__proto__}}' },
    },
  },
];

describe('workflow definitions', () => {
  it('creates, lists, replaces and deletes', async () => {
    const { engine } = await shopEngine();
    await engine.workflows.create(readThenChat);
    expect((await engine.workflows.list()).map((w) => w.name)).toEqual(['notify_orders']);
    await expect(engine.workflows.create(readThenChat)).rejects.toThrow(/already exists/);
    expect(
      (
        await engine.workflows.replace({
          ...readThenChat,
          steps: readThenChat.steps.slice(0, 1),
          workflow_output: undefined,
        })
      ).created,
    ).toBe(false);
    expect((await engine.workflows.get('notify_orders')).steps).toHaveLength(1);
    expect(await engine.workflows.delete('notify_orders')).toBe(true);
    await expect(engine.workflows.get('notify_orders')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('rejects unknown references, actions, wire ends and cycles, naming step and field', async () => {
    const engine = new Engine();
    const error = (await engine.workflows
      .create({
        name: 'broken',
        steps: brokenSteps,
        wires: [{ source_name: 'a', target_name: 'zzz' }],
        workflow_input: {
          name: 'input',
          input_schema: { type: 'object', properties: { n: { type: 'number' } } },
        },
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    const found = error.issues.map((i) => `${i.code} ${i.path}`);
    expect(found).toEqual(expect.arrayContaining(['unknown_step wires[0].target_name']));
    // The schema problems come first; fix the wire and see the rest.
    const second = (await engine.workflows
      .create({
        name: 'broken',
        steps: brokenSteps,
        wires: [],
        workflow_input: {
          name: 'input',
          input_schema: { type: 'object', properties: { n: { type: 'number' } } },
        },
      })
      .catch((e: unknown) => e)) as ValidationError;
    const codes = second.issues.map((i) => `${i.code} ${i.path}`);
    expect(codes).toEqual(
      expect.arrayContaining([
        'unknown_reference steps[1].l2_data.input_data',
        'unknown_action steps[2].l2_data',
        'unknown_reference steps[3].l2_data.input_data',
        'invalid_reference steps[3].l2_data.input_data',
        'cycle steps[0]',
        'cycle steps[1]',
      ]),
    );
    expect(second.message).toContain('ghost');
  });

  it('rejects unsupported JSON Schema keywords in the input schema at definition time', async () => {
    const engine = new Engine();
    const error = (await engine.workflows
      .create({
        name: 'w',
        steps: [],
        wires: [],
        workflow_input: { name: 'input', input_schema: { type: 'object', unevaluatedProperties: false } },
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.issues[0]!.path).toContain('workflow_input.input_schema');
    expect(error.issues[0]!.message).toContain('unevaluatedProperties');
  });
});

describe('running workflows', () => {
  it('runs a read then a chat message, with typed whole references and interpolated text', async () => {
    const { engine, chat } = await shopEngine();
    await engine.workflows.create(readThenChat);
    const run = await engine.run('notify_orders', { customer_id: 1 });
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({
      count: 2,
      rows: [
        [10, 1, 'Lamp', 25],
        [11, 1, 'Desk', 150.5],
      ],
    });
    expect(chat.messages).toEqual([{ channel: 'sales', message: 'Customer 1 has 2 orders' }]);
    expect(run.steps.map((s) => [s.name, s.status, s.attempts])).toEqual([
      ['read', 'succeeded', 1],
      ['chat', 'succeeded', 1],
    ]);
    expect(await engine.getRun(run.id)).toEqual(run);
  });

  it('rejects invalid input before any step, listing every error path', async () => {
    const { engine, chat } = await shopEngine();
    await engine.workflows.create(readThenChat);
    const error = (await engine
      .run('notify_orders', { customer_id: 'one' })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.issues.map((i) => i.path)).toEqual(['customer_id']);
    expect(chat.messages).toEqual([]);
  });

  it('fills default_data before validating', async () => {
    const { engine } = await shopEngine();
    await engine.workflows.create({
      ...readThenChat,
      workflow_input: { ...readThenChat.workflow_input!, default_data: { customer_id: 2 } },
    });
    const run = await engine.run('notify_orders');
    expect(run.output).toMatchObject({ count: 1 });
    expect(run.input).toEqual({ customer_id: 2 });
  });

  it('without workflow_output, outputs every step output by name', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'plain',
      steps: [
        {
          name: 'echo',
          type: 'l2',
          l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { a: 1 } },
        },
      ],
      wires: [],
    });
    const run = await engine.run('plain');
    expect(run.output).toEqual({ echo: { a: 1 } });
  });

  it('orders steps by references and wires, not by array order', async () => {
    const engine = new Engine();
    const dummy = (input: Record<string, unknown>) => ({
      provider: 'platform',
      module: 'dummy',
      action: 'dummy_task',
      input_data: input,
    });
    await engine.workflows.create({
      name: 'ordered',
      steps: [
        { name: 'last', type: 'l2', l2_data: dummy({ from: '{{middle.value}}' }) },
        { name: 'middle', type: 'l2', l2_data: dummy({}) },
        { name: 'first', type: 'l2', l2_data: dummy({ value: '{{input.n}}' }) },
      ],
      wires: [
        { source_name: 'first', source_data_path: 'value', target_name: 'middle', target_data_path: 'value' },
      ],
      workflow_input: {
        name: 'input',
        input_schema: { type: 'object', properties: { n: { type: 'integer' } } },
      },
    });
    const events: string[] = [];
    const run = await engine.run(
      'ordered',
      { n: 5 },
      { onEvent: (e) => e.type === 'step.started' && events.push(e.step) },
    );
    expect(events).toEqual(['first', 'middle', 'last']);
    expect(run.output).toEqual({ last: { from: 5 }, middle: { value: 5 }, first: { value: 5 } });
  });

  it('wires copy the whole input into a step by default', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'wired',
      steps: [
        {
          name: 'echo',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { fixed: true },
          },
        },
      ],
      wires: [{ source_name: 'input', target_name: 'echo' }],
      workflow_input: { name: 'input', input_schema: { type: 'object' } },
    });
    expect((await engine.run('wired', { a: 1, b: [2] })).output).toEqual({
      echo: { fixed: true, a: 1, b: [2] },
    });
  });

  it('a wire merged at the root brings nothing from a skipped step, and refuses a value that is not an object', async () => {
    const engine = new Engine();
    const dummy = (name: string, input_data: Record<string, unknown>, extra = {}) => ({
      name,
      type: 'l2' as const,
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
      ...extra,
    });
    await engine.workflows.create({
      name: 'merged',
      steps: [
        dummy('maybe', { extra: 1, n: 5 }, { conditions: [{ data_path: 'input.go', value: true }] }),
        dummy('keep', { mine: 'kept' }),
        dummy('count', { mine: 'kept' }),
      ],
      wires: [
        { source_name: 'maybe', target_name: 'keep' },
        { source_name: 'maybe', source_data_path: 'n', target_name: 'count' },
      ],
      workflow_input: { name: 'input', input_schema: { type: 'object' } },
    });
    const skipped = await engine.run('merged', { go: false });
    expect(skipped.status).toBe('succeeded');
    expect(skipped.output).toMatchObject({ keep: { mine: 'kept' }, count: { mine: 'kept' } });
    const ran = await engine.run('merged', { go: true });
    expect(ran.steps.find((s) => s.name === 'keep')!.output).toEqual({ mine: 'kept', extra: 1, n: 5 });
    expect(ran.status).toBe('failed');
    expect(ran.error).toMatchObject({ code: 'invalid_input', step: 'count' });
    expect(ran.error!.message).toMatch(/wire from "maybe" has no target_data_path.*a number/);
  });

  it('skips a step whose conditions do not hold; references into it give null', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'conditional',
      steps: [
        {
          name: 'big',
          type: 'l2',
          conditions: [{ data_path: 'input.kind', value: 'big' }],
          l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { v: 1 } },
        },
        {
          name: 'after',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { got: '{{big.v}}' },
          },
        },
      ],
      wires: [],
      workflow_input: {
        name: 'input',
        input_schema: { type: 'object', properties: { kind: { type: 'string' } } },
      },
    });
    const small = await engine.run('conditional', { kind: 'small' });
    expect(small.steps.map((s) => s.status)).toEqual(['skipped', 'succeeded']);
    expect(small.output).toEqual({ big: null, after: { got: null } });
    const big = await engine.run('conditional', { kind: 'big' });
    expect(big.output).toEqual({ big: { v: 1 }, after: { got: 1 } });
  });

  it('takes a condition data_path with or without braces, and refuses a bad one inside braces', async () => {
    const engine = new Engine();
    const step = (name: string, data_path: string) => ({
      name,
      type: 'l2' as const,
      conditions: [{ data_path, value: 'big' }],
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: {} },
    });
    const workflow_input = {
      name: 'input',
      input_schema: { type: 'object', properties: { kind: { type: 'string' } } },
    };
    await engine.workflows.create({
      name: 'braces',
      steps: [
        step('bare', 'input.kind'),
        step('braced', '{{input.kind}}'),
        step('spaced', ' {{ input.kind }} '),
      ],
      wires: [],
      workflow_input,
    });
    expect((await engine.run('braces', { kind: 'big' })).steps.map((s) => s.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    expect((await engine.run('braces', { kind: 'small' })).steps.map((s) => s.status)).toEqual([
      'skipped',
      'skipped',
      'skipped',
    ]);
    await expect(
      engine.workflows.create({
        name: 'bad',
        steps: [step('x', '{{input..kind}}')],
        wires: [],
        workflow_input,
      }),
    ).rejects.toThrow(/steps\[0\]\.conditions\[0\]\.data_path/);
  });

  it('fails the run naming the step, and starts no later step', async () => {
    const engine = new Engine();
    engine.actions.register({
      provider: 'test',
      module: 'x',
      action: 'boom',
      input: z.object({}),
      run: () => {
        throw new Error('kaput');
      },
    });
    await engine.workflows.create({
      name: 'failing',
      steps: [
        { name: 'explode', type: 'l2', l2_data: { provider: 'test', module: 'x', action: 'boom' } },
        {
          name: 'never',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { a: '{{explode.x}}' },
          },
        },
      ],
      wires: [],
    });
    const run = await engine.run('failing');
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ step: 'explode' });
    expect(run.error?.message).toContain('explode');
    expect(run.error?.message).toContain('kaput');
    expect(run.steps.map((s) => [s.name, s.status])).toEqual([['explode', 'failed']]);
  });

  it('fails a step whose reference path does not exist, quoting the reference', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'missing',
      steps: [
        {
          name: 'a',
          type: 'l2',
          l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { v: 1 } },
        },
        {
          name: 'b',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { w: '{{a.nope.deeper}}' },
          },
        },
      ],
      wires: [],
    });
    const run = await engine.run('missing');
    expect(run.status).toBe('failed');
    expect(run.error?.message).toContain('{{a.nope.deeper}}');
  });

  it('retries a step that opted in, then succeeds', async () => {
    const engine = new Engine();
    let calls = 0;
    engine.actions.register({
      provider: 'test',
      module: 'x',
      action: 'flaky',
      input: z.object({}),
      run: () => {
        calls += 1;
        if (calls < 3) throw new Error('temporary');
        return { calls };
      },
    });
    await engine.workflows.create({
      name: 'retrying',
      steps: [
        {
          name: 'flaky',
          type: 'l2',
          retry: { attempts: 3, backoff_ms: 1 },
          l2_data: { provider: 'test', module: 'x', action: 'flaky' },
        },
      ],
      wires: [],
    });
    const events: RunEvent[] = [];
    const run = await engine.run('retrying', {}, { onEvent: (e) => events.push(e) });
    expect(run.status).toBe('succeeded');
    expect(run.steps[0]).toMatchObject({ attempts: 3, output: { calls: 3 } });
    expect(events.filter((e) => e.type === 'step.retrying')).toHaveLength(2);
  });

  it('retries 3 attempts when retry does not say how many (DESIGN 9); retry: {} is accepted', async () => {
    const engine = new Engine();
    let calls = 0;
    engine.actions.register({
      provider: 'test',
      module: 'x',
      action: 'broken',
      input: z.object({}),
      run: () => {
        calls += 1;
        throw new Error('still down');
      },
    });
    const step = {
      name: 'broken',
      type: 'l2' as const,
      l2_data: { provider: 'test', module: 'x', action: 'broken' },
    };
    await engine.workflows.create({ name: 'defaults', steps: [{ ...step, retry: {} }], wires: [] });
    expect((await engine.workflows.get('defaults')).steps[0]!.retry).toEqual({});
    await engine.workflows.create({
      name: 'quick',
      steps: [{ ...step, retry: { backoff_ms: 1 } }],
      wires: [],
    });
    const run = await engine.run('quick');
    expect(run.status).toBe('failed');
    expect(run.steps[0]).toMatchObject({ attempts: 3 });
    expect(calls).toBe(3);
  });

  it('times a step out', async () => {
    const engine = new Engine();
    engine.actions.register({
      provider: 'test',
      module: 'x',
      action: 'slow',
      input: z.object({}),
      run: () => new Promise((resolve) => setTimeout(resolve, 5_000)),
    });
    await engine.workflows.create({
      name: 'slow',
      steps: [
        {
          name: 'slow',
          type: 'l2',
          timeout_ms: 50,
          l2_data: { provider: 'test', module: 'x', action: 'slow' },
        },
      ],
      wires: [],
    });
    const run = await engine.run('slow');
    expect(run.status).toBe('failed');
    expect(run.error?.message).toMatch(/timeout of 50 ms/);
  });

  it('cancels: no further step starts after the signal', async () => {
    const engine = new Engine();
    const controller = new AbortController();
    engine.actions.register({
      provider: 'test',
      module: 'x',
      action: 'cancel',
      input: z.object({}),
      run: () => {
        controller.abort();
        return {};
      },
    });
    await engine.workflows.create({
      name: 'cancelled',
      steps: [
        { name: 'one', type: 'l2', l2_data: { provider: 'test', module: 'x', action: 'cancel' } },
        {
          name: 'two',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { after: '{{one}}' },
          },
        },
      ],
      wires: [],
    });
    const run = await engine.run('cancelled', {}, { signal: controller.signal });
    expect(run.status).toBe('cancelled');
    expect(run.steps.map((s) => [s.name, s.status])).toEqual([['one', 'succeeded']]);
  });

  it('streams events while the run goes on', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'two',
      steps: [
        { name: 'a', type: 'l2', l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task' } },
        {
          name: 'b',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { x: '{{a}}' },
          },
        },
      ],
      wires: [],
    });
    const handle = await engine.start('two');
    const types: string[] = [];
    for await (const event of handle.events)
      types.push(event.type + ('step' in event ? `:${event.step}` : ''));
    expect(types).toEqual([
      'run.started',
      'step.started:a',
      'step.succeeded:a',
      'step.started:b',
      'step.succeeded:b',
      'run.finished',
    ]);
    expect((await handle.result).status).toBe('succeeded');
  });

  it('lets a test stub an action and assert on what it received', async () => {
    const { engine, chat } = await shopEngine();
    await engine.workflows.create(readThenChat);
    const stub = engine.actions.stub('chat/bot/send_message', { output: { ok: true, channel: 'sales' } });
    const run = await engine.run('notify_orders', { customer_id: 3 });
    expect(run.status).toBe('succeeded');
    expect(stub.calls).toEqual([{ channel: 'sales', message: 'Customer 3 has 1 orders' }]);
    expect(chat.messages).toEqual([]);
    stub.restore();
    await engine.run('notify_orders', { customer_id: 3 });
    expect(chat.messages).toHaveLength(1);
  });

  it('marks runs left running by a dead engine as interrupted when storage is opened again', async () => {
    const first = new Engine();
    const storage = first.options.storage;
    await storage.put('runs', 'r1', {
      id: 'r1',
      workflow: 'w',
      status: 'running',
      input: {},
      output: null,
      error: null,
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: null,
      steps: [
        {
          name: 'a',
          status: 'succeeded',
          attempts: 1,
          started_at: '2026-01-01T00:00:00.000Z',
          finished_at: '2026-01-01T00:00:01.000Z',
          output: {},
          error: null,
        },
        {
          name: 'b',
          status: 'running',
          attempts: 1,
          started_at: '2026-01-01T00:00:01.000Z',
          finished_at: null,
          output: null,
          error: null,
        },
      ],
    });
    const second = new Engine({ storage });
    const record = await second.getRun('r1');
    expect(record.status).toBe('interrupted');
    expect(record.error).toMatchObject({ code: 'interrupted', step: 'b' });
    expect(record.error?.message).toContain('the last finished step was "a"');
    expect(record.steps.map((s) => s.name)).toEqual(['a']);
    expect(record.error?.message).toContain('"b" had started');
  });
});
