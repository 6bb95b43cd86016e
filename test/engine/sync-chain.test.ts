import { expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, type RunEvent, type Workflow } from '../../src/index.js';

/** A chain of `n` dummy steps, each passing the one before's value on. */
function chain(n: number): Workflow {
  const steps: Workflow['steps'] = [];
  for (let i = 0; i < n; i++)
    steps.push({
      name: `s${i}`,
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { value: i === 0 ? '{{input.value}}' : `{{s${i - 1}.value}}`, n: i },
      },
    });
  return {
    name: `chain_${n}`,
    steps,
    wires: [],
    workflow_output: { name: 'out', output_data: { value: `{{s${n - 1}.value}}`, n: `{{s${n - 1}.n}}` } },
  };
}

it('runs a long chain of steps whose actions return at once, each step started and finished in order', async () => {
  const engine = new Engine();
  const n = 20_000;
  await engine.workflows.create(chain(n));
  const events: RunEvent[] = [];
  const record = await engine.run(`chain_${n}`, { value: { id: 7 } }, { onEvent: (e) => events.push(e) });
  expect(record.status).toBe('succeeded');
  expect(record.output).toEqual({ value: { id: 7 }, n: n - 1 });
  expect(record.steps).toHaveLength(n);
  const kinds = events.map((e) => ('step' in e ? `${e.type} ${e.step}` : e.type));
  expect(kinds.slice(0, 5)).toEqual([
    'run.started',
    'step.started s0',
    'step.succeeded s0',
    'step.started s1',
    'step.succeeded s1',
  ]);
  expect(kinds).toHaveLength(2 * n + 2);
  expect(kinds.at(-1)).toBe('run.finished');
  expect((await engine.getRun(record.id)).steps).toHaveLength(n);
});

it('a cancel from an event listener stops the chain before its next step starts', async () => {
  const engine = new Engine();
  await engine.workflows.create(chain(10));
  const controller = new AbortController();
  const started: string[] = [];
  const record = await engine.run(
    'chain_10',
    { value: 1 },
    {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'step.started') started.push(event.step);
        if (event.type === 'step.succeeded' && event.step === 's2') controller.abort();
      },
    },
  );
  expect(record.status).toBe('cancelled');
  expect(started).toEqual(['s0', 's1', 's2']);
  expect(record.steps.map((s) => `${s.name} ${s.status}`)).toEqual([
    's0 succeeded',
    's1 succeeded',
    's2 succeeded',
  ]);
});

it('keeps a long chain in its stored record step by step, with a line a finished step logs later', async () => {
  const engine = new Engine();
  // s3 logs once more after it returned; s70 waits, so the run still goes on when that line comes.
  engine.actions.register({
    provider: 'test',
    module: 'chain',
    action: 'late_log',
    input: z.object({ value: z.unknown() }),
    run: (input, context) => {
      setTimeout(() => context.log('late'), 5);
      return input;
    },
  });
  engine.actions.register({
    provider: 'test',
    module: 'chain',
    action: 'wait',
    input: z.object({ value: z.unknown() }),
    run: async (input) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return input;
    },
  });
  const workflow = chain(130);
  const own = (index: number, action: string) => {
    const step = workflow.steps[index] as { l2_data: { provider: string; module: string; action: string } };
    step.l2_data = { ...step.l2_data, provider: 'test', module: 'chain', action };
  };
  own(3, 'late_log');
  own(70, 'wait');
  await engine.workflows.create(workflow);
  const record = await engine.run('chain_130', { value: { id: 7 } });
  expect(record.error).toBeNull();
  expect(record.steps).toHaveLength(130);
  expect(record.steps[3]!.logs).toEqual(['late']);
  const stored = await engine.getRun(record.id);
  expect(stored).toEqual(JSON.parse(JSON.stringify(record)));
  expect(stored.steps.map((step) => step.name)).toEqual(workflow.steps.map((step) => step.name));
});
