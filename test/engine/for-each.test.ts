import { describe, expect, it } from 'vitest';
import { Engine, type RunEvent, type Step, type Workflow } from '../../src/index.js';
import { RunRecordSchema, check } from '../../src/schema-entry.js';
import { shopEngine } from './helpers.js';

/** A workflow of one for_each step running `acme/work/item` over `input.list`, plus `extra` steps. */
function loop(each: Partial<Step> & Record<string, unknown>, extra: Workflow['steps'] = []): Workflow {
  return {
    name: 'loop',
    steps: [
      {
        name: 'each',
        type: 'l2',
        for_each: '{{input.list}}',
        l2_data: {
          provider: 'acme',
          module: 'work',
          action: 'item',
          input_data: { n: '{{item.n}}', index: '{{item_index}}' },
        },
        ...each,
      } as Step,
      ...extra,
    ],
    wires: [],
  };
}

const list = (count: number) => Array.from({ length: count }, (_, i) => ({ n: i + 1 }));

/** An engine whose `acme/work/item` doubles `n` and fails for the `n`s in `failing`. */
function engineFailingAt(failing: ReadonlySet<number>) {
  const engine = new Engine();
  const stub = engine.actions.stub('acme/work/item', (input) => {
    const { n } = input as { n: number };
    if (failing.has(n)) throw new Error(`no invoice for ${n}`);
    return { double: n * 2 };
  });
  return { engine, stub };
}

describe('for_each', () => {
  it('runs 1,000 items with 3 failures under on_error continue: 997 succeeded, 3 failed, the three listed', async () => {
    const { engine, stub } = engineFailingAt(new Set([5, 500, 1000]));
    await engine.workflows.create(loop({ on_error: 'continue' }));
    const run = await engine.run('loop', { list: list(1000) });
    expect(run.status).toBe('succeeded');
    expect(stub.calls).toHaveLength(1000);
    const output = (run.output as { each: Record<string, unknown> }).each;
    expect(output).toMatchObject({ succeeded: 997, failed: 3, skipped: 0 });
    const items = output['items'] as unknown[];
    expect(items).toHaveLength(1000);
    expect(items[0]).toEqual({ double: 2 });
    expect(items[998]).toEqual({ double: 1998 });
    expect(items[4]).toEqual({ error: { code: 'step_failed', message: 'no invoice for 5' } });
    const step = run.steps[0]!;
    expect(step.status).toBe('succeeded');
    expect(step.attempts).toBe(1000);
    expect(step.items).toEqual({
      total: 1000,
      succeeded: 997,
      failed: 3,
      skipped: 0,
      failures: [4, 499, 999].map((index) => ({
        index,
        attempts: 1,
        error: { code: 'step_failed', message: `no invoice for ${index + 1}` },
      })),
    });
    const stored = await engine.getRun(run.id);
    expect(stored.steps[0]!.items).toEqual(step.items);
    const parsed = check(RunRecordSchema, stored);
    expect(parsed.ok && parsed.value).toEqual(stored);
  });

  it('fails the run at the first failed item by default; items never started count as skipped', async () => {
    const { engine, stub } = engineFailingAt(new Set([3]));
    await engine.workflows.create(loop({}));
    const run = await engine.run('loop', { list: list(10) });
    expect(run.status).toBe('failed');
    expect(stub.calls).toHaveLength(3);
    expect(run.error).toMatchObject({
      step: 'each',
      message: 'step "each" failed: item 2: no invoice for 3',
    });
    expect(run.steps[0]!.output).toBeNull();
    expect(run.steps[0]!.items).toMatchObject({ total: 10, succeeded: 2, failed: 1, skipped: 7 });
  });

  it('turns a data table into one object per row, by column name', async () => {
    const { engine, chat } = await shopEngine();
    await engine.workflows.create({
      name: 'greet',
      steps: [
        {
          name: 'people',
          type: 'atlas',
          atlas_data: { action: 'get', input_entities: [{ name: 'customers' }] },
        },
        {
          name: 'hello',
          type: 'l2',
          for_each: '{{people.table}}',
          l2_data: {
            provider: 'chat',
            module: 'bot',
            action: 'send_message',
            input_data: { channel: 'c', message: '{{item_index}}: {{item.name}} of {{item.city}}' },
          },
        },
      ],
      wires: [],
      workflow_output: { name: 'output', output_data: { sent: '{{hello.succeeded}}' } },
    });
    const run = await engine.run('greet');
    expect(run.output).toEqual({ sent: 3 });
    expect(chat.messages.map((m) => m.message)).toEqual([
      '0: Ada of London',
      '1: Grace of New York',
      '2: Linus of Helsinki',
    ]);
  });

  it('runs at most `concurrency` items at once and keeps the items in input order', async () => {
    const engine = new Engine();
    let running = 0;
    let most = 0;
    engine.actions.stub('acme/work/item', async (input) => {
      const { n } = input as { n: number };
      running += 1;
      most = Math.max(most, running);
      // Later items finish first.
      await new Promise((resolve) => setTimeout(resolve, 20 - n));
      running -= 1;
      return n;
    });
    await engine.workflows.create(loop({ concurrency: 4 }));
    const run = await engine.run('loop', { list: list(12) });
    expect(most).toBe(4);
    expect((run.output as { each: { items: number[] } }).each.items).toEqual(list(12).map((i) => i.n));

    most = 0;
    await engine.workflows.replace(loop({}));
    await engine.run('loop', { list: list(5) });
    expect(most).toBe(1);
  });

  it('retries each item on its own and counts every attempt', async () => {
    const engine = new Engine();
    const tries = new Map<number, number>();
    engine.actions.stub('acme/work/item', (input) => {
      const { n } = input as { n: number };
      tries.set(n, (tries.get(n) ?? 0) + 1);
      if (n === 2 && tries.get(n)! < 2) throw new Error('flaky');
      if (n === 3) throw new Error('broken');
      return n;
    });
    await engine.workflows.create(loop({ on_error: 'continue', retry: { attempts: 3, backoff_ms: 0 } }));
    const run = await engine.run('loop', { list: list(3) });
    expect([...tries.entries()]).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(run.steps[0]!.attempts).toBe(6);
    expect(run.steps[0]!.items!.failures).toEqual([
      { index: 2, attempts: 3, error: { code: 'step_failed', message: 'broken' } },
    ]);
  });

  it('checks conditions that read the item per item: items that fail them are skipped', async () => {
    const { engine, stub } = engineFailingAt(new Set());
    await engine.workflows.create(
      loop({ conditions: [{ data_path: 'item.open', value: true }] }, [
        {
          name: 'after',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { skipped: '{{each.skipped}}', second: '{{each.items[1]}}' },
          },
        },
      ]),
    );
    const run = await engine.run('loop', {
      list: [
        { n: 1, open: true },
        { n: 2, open: false },
        { n: 3, open: true },
      ],
    });
    expect(stub.calls).toEqual([
      { n: 1, index: 0 },
      { n: 3, index: 2 },
    ]);
    expect(run.steps[0]!.items).toMatchObject({ succeeded: 2, failed: 0, skipped: 1 });
    expect(run.steps[1]!.output).toEqual({ skipped: 1, second: null });
  });

  it('succeeds with zero counts over an empty list, and is skipped when its list comes from a skipped step', async () => {
    const { engine, stub } = engineFailingAt(new Set());
    await engine.workflows.create({
      name: 'maybe',
      steps: [
        {
          name: 'source',
          type: 'l2',
          conditions: [{ data_path: 'input.go', value: true }],
          l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { rows: [] } },
        },
        {
          name: 'each',
          type: 'l2',
          for_each: '{{source.rows}}',
          l2_data: { provider: 'acme', module: 'work', action: 'item', input_data: {} },
        },
      ],
      wires: [],
    });
    const ran = await engine.run('maybe', { go: true });
    expect(ran.steps[1]).toMatchObject({
      status: 'succeeded',
      output: { items: [], succeeded: 0, failed: 0, skipped: 0 },
    });
    const skipped = await engine.run('maybe', { go: false });
    expect(skipped.status).toBe('succeeded');
    expect(skipped.steps.map((s) => s.status)).toEqual(['skipped', 'skipped']);
    expect(stub.calls).toEqual([]);
  });

  it('fails naming for_each when the list is not an array or a data table', async () => {
    const { engine } = engineFailingAt(new Set());
    await engine.workflows.create(loop({}));
    const run = await engine.run('loop', { list: 'abc' });
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'validation_failed', step: 'each' });
    expect(run.error!.message).toBe(
      'step "each" failed: for_each: {{input.list}} resolved to string, not an array or a data table with columns and rows',
    );
  });

  it('reads a data table whose columns are names, as write_entity does, into objects by those names', async () => {
    const { engine, stub } = engineFailingAt(new Set());
    await engine.workflows.create(loop({}));
    const table = { columns: ['n', { name: 'label', type: 'STRING' }], rows: [[1, 'a'], [2]] };
    const run = await engine.run('loop', { list: table });
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(stub.calls).toEqual([
      { n: 1, index: 0 },
      { n: 2, index: 1 },
    ]);
  });

  it.each([
    ['a column without a name', { columns: [{ type: 'NUMBER' }, 'b'], rows: [[1, 2]] }, 'columns[0]'],
    ['a null column', { columns: [null], rows: [[1]] }, 'columns[0]'],
    ['a repeated column', { columns: ['n', 'n'], rows: [[1, 2]] }, 'columns[1]'],
    ['a row that is a number', { columns: ['n'], rows: [[1], 5] }, 'rows[1]'],
    ['a row that is an object', { columns: ['n'], rows: [{ n: 1 }] }, 'rows[0]'],
    ['a null row', { columns: ['n'], rows: [null] }, 'rows[0]'],
    ['a row longer than the columns', { columns: ['n'], rows: [[1, 2]] }, 'rows[0]'],
  ])(
    'fails naming for_each and the position for a data table with %s; no item runs',
    async (_, table, at) => {
      const { engine, stub } = engineFailingAt(new Set());
      await engine.workflows.create(loop({}));
      const run = await engine.run('loop', { list: table });
      expect(run.status).toBe('failed');
      expect(run.error).toMatchObject({ code: 'validation_failed', step: 'each' });
      expect(run.error!.message).toContain(`for_each.${at}: in the data table of {{input.list}}`);
      expect(run.error!.message).not.toContain('Cannot read properties');
      expect(stub.calls).toHaveLength(0);
    },
  );

  it('emits step.started once and item.finished per item', async () => {
    const { engine } = engineFailingAt(new Set([2]));
    await engine.workflows.create(loop({ on_error: 'continue' }));
    const events: RunEvent[] = [];
    await engine.run('loop', { list: list(3) }, { onEvent: (e) => events.push(e) });
    expect(events.map((e) => (e.type === 'item.finished' ? `${e.item} ${e.status}` : e.type))).toEqual([
      'run.started',
      'step.started',
      '0 succeeded',
      '1 failed',
      '2 succeeded',
      'step.succeeded',
      'run.finished',
    ]);
  });

  it('stops starting items when the run is cancelled; the counts still add up', async () => {
    const engine = new Engine();
    const controller = new AbortController();
    engine.actions.stub('acme/work/item', (input) => {
      if ((input as { n: number }).n === 3) controller.abort();
      return null;
    });
    await engine.workflows.create(loop({ on_error: 'continue' }));
    const run = await engine.run('loop', { list: list(10) }, { signal: controller.signal });
    expect(run.status).toBe('cancelled');
    const items = run.steps[0]!.items!;
    expect(items).toMatchObject({ total: 10, succeeded: 3, failed: 0, skipped: 7 });
    expect(run.steps[0]!.error!.message).toContain('3 of 10 items had started');
  });

  it('lets a cancel or the time limit in while items finish at once, one after another', async () => {
    const engine = new Engine();
    const controller = new AbortController();
    // Items that return at once never give timers a turn by themselves; the first sets one.
    engine.actions.stub('acme/work/item', (input) => {
      if ((input as { n: number }).n === 1) setTimeout(() => controller.abort(), 5);
      return null;
    });
    await engine.workflows.create(loop({}));
    const cancelled = await engine.run('loop', { list: list(300_000) }, { signal: controller.signal });
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.steps[0]!.items!.skipped).toBeGreaterThan(0);
    const timedOut = await engine.run('loop', { list: list(300_000) }, { timeoutMs: 30 });
    expect(timedOut.error?.code).toBe('limit_exceeded');
  }, 60_000);

  it('runs each item once at concurrency 8 when timers get a turn near the end of the list', async () => {
    const engine = new Engine();
    // One item holds the event loop past the 20 ms stretch, so every worker gives timers a turn at
    // once, each having seen an item left; only 3 are.
    const stub = engine.actions.stub('acme/work/item', (input) => {
      const { n } = input as { n: number };
      if (n === 17) for (const until = Date.now() + 30; Date.now() < until;);
      return { double: n * 2 };
    });
    await engine.workflows.create(loop({ concurrency: 8 }));
    const run = await engine.run('loop', { list: list(20) });
    expect(run.error).toBeNull();
    expect(run.status).toBe('succeeded');
    expect(stub.calls.map((call) => (call as { index: number }).index).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
    const output = (run.output as { each: { items: unknown[] } }).each;
    expect(output).toMatchObject({ succeeded: 20, failed: 0, skipped: 0 });
    expect(output.items).toEqual(list(20).map(({ n }) => ({ double: n * 2 })));
  });

  it('stops starting items when another step fails the run', async () => {
    const engine = new Engine();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const stub = engine.actions.stub('acme/work/item', async (input) => {
      if ((input as { n: number }).n === 1) await released;
      return null;
    });
    engine.actions.stub('acme/work/fail', () => {
      setTimeout(release, 5);
      throw new Error('down');
    });
    await engine.workflows.create(
      loop({}, [
        { name: 'other', type: 'l2', l2_data: { provider: 'acme', module: 'work', action: 'fail' } },
      ]),
    );
    const run = await engine.run('loop', { list: list(10) });
    expect(run.status).toBe('failed');
    expect(run.error!.step).toBe('other');
    expect(stub.calls).toHaveLength(1);
    expect(run.steps[0]!.items).toMatchObject({ succeeded: 1, skipped: 9 });
    expect(run.steps[0]!.error).toMatchObject({ code: 'stopped' });
  });
});
