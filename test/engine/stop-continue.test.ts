import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, StepwireError, type Workflow } from '../../src/index.js';

/** An engine whose `wait` action waits for the run's stop, and whose `refuse` fails with code `cancelled`. */
function engineWithActions() {
  const engine = new Engine();
  let waiting = 0;
  engine.actions.register({
    provider: 'test',
    module: 'stop',
    action: 'wait',
    input: z.looseObject({}),
    run: (_input, context) =>
      new Promise((_resolve, reject) => {
        waiting += 1;
        context.signal.addEventListener('abort', () => reject(new Error('stopped waiting')));
      }),
  });
  engine.actions.register({
    provider: 'test',
    module: 'stop',
    action: 'refuse',
    input: z.looseObject({}),
    run: () => {
      throw new StepwireError('cancelled', 'my upstream job was cancelled');
    },
  });
  return { engine, waiting: () => waiting };
}

const step = (name: string, action: string, extra: object = {}) => ({
  name,
  type: 'l2',
  l2_data: { provider: 'test', module: 'stop', action, input_data: {} },
  ...extra,
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

describe('a run nobody cancelled', () => {
  it('fails, not cancelled, when a step fails with code cancelled', async () => {
    const { engine } = engineWithActions();
    await engine.workflows.create({ name: 'w', steps: [step('up', 'refuse')], wires: [] } as Workflow);
    const record = await engine.run('w', {});
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'cancelled', step: 'up' });
  });
});

describe('a stop that cuts short an on_error "continue" step', () => {
  it.each([
    ['a step', {}],
    ['a for_each step of one item', { for_each: '{{input.list}}' }],
  ])('fails %s and names it in the run error: a cancel', async (_what, extra) => {
    const { engine, waiting } = engineWithActions();
    await engine.workflows.create({
      name: 'w',
      steps: [step('each', 'wait', { on_error: 'continue', ...extra })],
      wires: [],
    } as Workflow);
    const handle = await engine.start('w', { list: [1] });
    await until(() => waiting() === 1);
    await engine.cancel(handle.id);
    const record = await handle.result;
    expect(record.status).toBe('cancelled');
    expect(record.error).toMatchObject({ code: 'cancelled', step: 'each' });
    expect(record.steps[0]).toMatchObject({ name: 'each', status: 'failed', error: { code: 'cancelled' } });
  });

  it('fails a for_each step whose items had all started, and names it: the time limit', async () => {
    const { engine } = engineWithActions();
    await engine.workflows.create({
      name: 'w',
      steps: [step('each', 'wait', { on_error: 'continue', for_each: '{{input.list}}', concurrency: 2 })],
      wires: [],
    } as Workflow);
    const record = await engine.run('w', { list: [1, 2] }, { timeoutMs: 100 });
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'limit_exceeded', step: 'each' });
    expect(record.steps[0]).toMatchObject({ status: 'failed', items: { total: 2, failed: 2, skipped: 0 } });
  });
});
