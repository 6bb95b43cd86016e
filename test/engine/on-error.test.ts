import { describe, expect, it } from 'vitest';
import { Engine, NonRetryableError, type Workflow } from '../../src/index.js';

/** `fragile` (acme/work/fragile) then `report`, which reads the fragile step's output. */
function fragile(fields: Record<string, unknown>): Workflow {
  return {
    name: 'fragile',
    steps: [
      {
        name: 'fragile',
        type: 'l2',
        l2_data: { provider: 'acme', module: 'work', action: 'fragile', input_data: {} },
        ...fields,
      } as Workflow['steps'][number],
      {
        name: 'report',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'dummy',
          action: 'dummy_task',
          input_data: { code: '{{fragile.error.code}}', message: 'failed: {{fragile.error.message}}' },
        },
      },
    ],
    wires: [],
  };
}

describe('on_error', () => {
  it('"continue" makes a failure the output { error: { code, message } } and the run goes on', async () => {
    const engine = new Engine();
    let calls = 0;
    engine.actions.stub('acme/work/fragile', () => {
      calls += 1;
      throw calls < 2 ? new Error('busy') : new NonRetryableError('the printer is on fire');
    });
    await engine.workflows.create(fragile({ on_error: 'continue', retry: { attempts: 3, backoff_ms: 0 } }));
    const run = await engine.run('fragile');
    expect(run.status).toBe('succeeded');
    expect(run.error).toBeNull();
    expect(calls).toBe(2);
    expect(run.steps[0]).toMatchObject({
      status: 'failed',
      attempts: 2,
      output: { error: { code: 'non_retryable', message: 'the printer is on fire' } },
      error: {
        code: 'non_retryable',
        step: 'fragile',
        message: 'step "fragile" failed: the printer is on fire',
      },
    });
    expect(run.steps[1]!.output).toEqual({
      code: 'non_retryable',
      message: 'failed: the printer is on fire',
    });
  });

  it('"fail", the default, fails the run and starts nothing after it', async () => {
    const engine = new Engine();
    engine.actions.stub('acme/work/fragile', () => {
      throw new Error('busy');
    });
    await engine.workflows.create(fragile({}));
    const run = await engine.run('fragile');
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ step: 'fragile', message: 'step "fragile" failed: busy' });
    expect(run.steps.map((s) => s.name)).toEqual(['fragile']);
  });
});
