import { describe, expect, it } from 'vitest';
import { Engine, ValidationError, type Workflow } from '../../src/index.js';

/** A workflow whose one step runs `workflowName` with `input` as a child run. */
function caller(name: string, workflowName: string, input: unknown = {}, fields = {}): Workflow {
  return {
    name,
    steps: [
      {
        name: 'child',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'workflows',
          action: 'run_workflow',
          input_data: { workflow_name: workflowName, input },
        },
        ...fields,
      },
    ],
    wires: [],
    workflow_output: { name: 'output', output_data: '{{child}}' },
  };
}

/** A workflow that doubles `input.n` with a dummy step. */
const doubler: Workflow = {
  name: 'doubler',
  steps: [
    {
      name: 'double',
      type: 'l2',
      l2_data: { provider: 'acme', module: 'math', action: 'double', input_data: { n: '{{input.n}}' } },
    },
  ],
  wires: [],
  workflow_input: {
    name: 'input',
    input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  },
  workflow_output: { name: 'output', output_data: { doubled: '{{double}}' } },
};

/** An engine with workflow `slow`, whose one step waits until it is told to stop; `childStarted` once it waits. */
async function slowChildEngine(): Promise<{ engine: Engine; childStarted: Promise<void> }> {
  const engine = new Engine();
  let started!: () => void;
  const childStarted = new Promise<void>((resolve) => (started = resolve));
  engine.actions.stub('acme/slow/wait', (_input, context) => {
    started();
    return new Promise((_, reject) =>
      context.signal.addEventListener('abort', () => reject(new Error('stopped'))),
    );
  });
  await engine.workflows.create({
    name: 'slow',
    steps: [{ name: 'wait', type: 'l2', l2_data: { provider: 'acme', module: 'slow', action: 'wait' } }],
    wires: [],
  });
  return { engine, childStarted };
}

async function engineWithDoubler() {
  const engine = new Engine();
  engine.actions.stub('acme/math/double', (input) => (input as { n: number }).n * 2);
  await engine.workflows.create(doubler);
  return engine;
}

/** Issues of a rejected create as `code path: message`. */
async function refused(promise: Promise<unknown>): Promise<string[]> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues.map((i) => `${i.code} ${i.path}: ${i.message}`);
}

describe('platform/workflows/run_workflow', () => {
  it("runs a child run whose output is the step's output; the child's record names its parent", async () => {
    const engine = await engineWithDoubler();
    await engine.workflows.create(caller('parent', 'doubler', { n: '{{input.n}}' }));
    const run = await engine.run('parent', { n: 21 });
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ doubled: 42 });
    expect(run.parent_run_id).toBeUndefined();
    const { runs } = await engine.listRuns({ workflow: 'doubler' });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'succeeded', parent_run_id: run.id });
    expect((await engine.getRun(runs[0]!.id)).input).toEqual({ n: 21 });
  });

  it("fails the step with the child's error code and names the child run; on_error continue goes on", async () => {
    const engine = await engineWithDoubler();
    await engine.workflows.create(caller('bad_input', 'doubler', { n: 'two' }));
    const run = await engine.run('bad_input');
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'validation_failed', step: 'child' });
    expect(run.error!.message).toContain('Invalid input: n:');

    engine.actions.stub('acme/math/double', () => {
      throw new Error('overflow');
    });
    await engine.workflows.create(caller('tolerant', 'doubler', { n: 1 }, { on_error: 'continue' }));
    const tolerant = await engine.run('tolerant');
    expect(tolerant.status).toBe('succeeded');
    const child = (await engine.listRuns({ workflow: 'doubler', status: 'failed' })).runs[0]!;
    expect(tolerant.output).toEqual({
      error: {
        code: 'step_failed',
        message: `child run ${child.id} of workflow "doubler" failed: step "double" failed: overflow`,
      },
    });
  });

  it('refuses a child deeper than 8, naming the chain of workflows', async () => {
    const engine = await engineWithDoubler();
    await engine.workflows.create(caller('w9', 'doubler', { n: 1 }));
    for (let i = 8; i >= 0; i--) await engine.workflows.create(caller(`w${i}`, `w${i + 1}`));
    // w1 -> ... -> w9 -> doubler is 9 runs deep below w1's parent: w1 at depth 0 puts doubler at 9.
    const deep = await engine.run('w1');
    expect(deep.status).toBe('failed');
    expect(deep.error!.code).toBe('limit_exceeded');
    // Told once, not wrapped in a sentence per ancestor.
    expect(deep.error!.message).toMatch(
      /^step "child" failed: child run \S+ of workflow "w2" failed: workflow "doubler" would run at depth 9, deeper than 8: w1 -> w2 -> w3 -> w4 -> w5 -> w6 -> w7 -> w8 -> w9 -> doubler$/,
    );
    const fits = await engine.run('w2');
    expect(fits.status).toBe('succeeded');
    expect(fits.output).toEqual({ doubled: 2 });
  });

  it('stops a workflow that runs itself through a reference at depth 8', async () => {
    const engine = new Engine();
    await engine.workflows.create(caller('again', '{{input.next}}', { next: '{{input.next}}' }));
    const run = await engine.run('again', { next: 'again' });
    expect(run.status).toBe('failed');
    expect(run.error!.message).toContain(
      `would run at depth 9, deeper than 8: ${Array(10).fill('again').join(' -> ')}`,
    );
    expect((await engine.listRuns({ workflow: 'again', limit: 20 })).runs).toHaveLength(9);
  });

  it('refuses a workflow that can reach itself when it is created or replaced, naming the cycle', async () => {
    const engine = new Engine();
    expect(await refused(engine.workflows.create(caller('self', 'self')))).toEqual([
      'cycle steps[0].l2_data.input_data.workflow_name: workflow "self" runs itself: self -> self',
    ]);
    await engine.workflows.create(caller('b', 'c'));
    await engine.workflows.create(caller('c', 'a'));
    expect(await refused(engine.workflows.create(caller('a', 'b')))).toEqual([
      'cycle steps[0].l2_data.input_data.workflow_name: workflow "a" can reach itself: a -> b -> c -> a',
    ]);
    await engine.workflows.create(caller('a', 'doubler'));
    expect(await refused(engine.workflows.replace(caller('a', 'b')))).toHaveLength(1);
    expect((await engine.workflows.get('a')).steps[0]).toMatchObject({
      l2_data: { input_data: { workflow_name: 'doubler' } },
    });
  });

  it('does not follow a workflow_name a wire may set at run time: the wired name is the one that runs', async () => {
    const engine = new Engine();
    engine.actions.stub('acme/math/double', (input) => (input as { n: number }).n * 2);
    await engine.workflows.create(doubler);
    await engine.workflows.create(caller('a', 'b', { n: 2 }));
    // b names "a" (which runs b), but the wire from its step "pick" sets the name when it runs.
    const pick = {
      name: 'pick',
      type: 'l2' as const,
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { workflow_name: 'doubler' },
      },
    };
    const b = caller('b', 'a', { n: 2 });
    b.steps.unshift(pick);
    b.wires = [
      {
        source_name: 'pick',
        source_data_path: 'workflow_name',
        target_name: 'child',
        target_data_path: 'workflow_name',
      },
    ];
    await engine.workflows.create(b);
    const record = await engine.run('a', {});
    expect(record).toMatchObject({ status: 'succeeded', output: { doubled: 4 } });
    // A wire into another field leaves the literal name known: the cycle is refused.
    b.wires = [{ source_name: 'pick', target_name: 'child', target_data_path: 'input' }];
    expect(await refused(engine.workflows.replace(b))).toEqual([
      'cycle steps[1].l2_data.input_data.workflow_name: workflow "b" can reach itself: b -> a -> b',
    ]);
  });

  it('refuses a run_workflow input with a field it does not know (a misspelt input)', async () => {
    const engine = new Engine();
    const misspelt = caller('typo', 'doubler');
    (misspelt.steps[0] as { l2_data: { input_data: unknown } }).l2_data.input_data = {
      workflow_name: 'doubler',
      inptu: { n: 2 },
    };
    await engine.workflows.create(misspelt);
    const record = await engine.run('typo', {});
    expect(record.error).toMatchObject({ code: 'validation_failed', step: 'child' });
    expect(record.error!.message).toContain('unknown property "inptu"');
    expect((await engine.listRuns({ workflow: 'doubler' })).runs).toEqual([]);
  });

  it('refuses one of two workflows made at once that would reach each other (one engine)', async () => {
    const engine = new Engine();
    for (const make of [
      () => [engine.workflows.create(caller('a', 'b')), engine.workflows.create(caller('b', 'a'))],
      () => [engine.workflows.replace(caller('a', 'b')), engine.workflows.replace(caller('b', 'a'))],
    ]) {
      const outcomes = await Promise.allSettled(make());
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
      const stored = await engine.workflows.list();
      expect(stored.map((workflow) => workflow.name)).toHaveLength(1);
      for (const workflow of stored) await engine.workflows.delete(workflow.name);
    }
  });

  it('cancels the child runs when the parent is cancelled', async () => {
    const { engine, childStarted } = await slowChildEngine();
    await engine.workflows.create(caller('parent', 'slow'));
    const controller = new AbortController();
    const result = engine.run('parent', {}, { signal: controller.signal });
    await childStarted;
    controller.abort();
    const run = await result;
    expect(run.status).toBe('cancelled');
    const child = (await engine.listRuns({ workflow: 'slow' })).runs[0]!;
    expect(child).toMatchObject({ status: 'cancelled', parent_run_id: run.id });
  });

  it("cancels a child run by its own id: the step fails with the child's cancel", async () => {
    const { engine, childStarted } = await slowChildEngine();
    await engine.workflows.create(caller('parent', 'slow', {}, { on_error: 'continue' }));
    const result = engine.run('parent', {});
    await childStarted;
    const child = (await engine.listRuns({ workflow: 'slow' })).runs[0]!;
    expect(child.status).toBe('running');
    expect(await engine.cancel(child.id)).toBe(true);
    const run = await result;
    expect(await engine.getRun(child.id)).toMatchObject({ status: 'cancelled', parent_run_id: run.id });
    expect(run.status).toBe('succeeded');
    expect(run.steps[0]).toMatchObject({
      name: 'child',
      status: 'failed',
      output: { error: { code: 'cancelled' } },
    });
    expect(await engine.cancel(child.id)).toBe(false);
  });
});
