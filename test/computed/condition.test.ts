import { describe, expect, it } from 'vitest';
import { Engine, ValidationError } from '../../src/index.js';

const task = (name: string, input_data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
  ...extra,
});

const workflow_input = {
  name: 'input',
  input_schema: { type: 'object', properties: { kind: { type: 'string' }, n: { type: 'number' } } },
};

describe('step condition { expression }', () => {
  it('runs a step only when its CEL expression over the input and earlier steps is true', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'cel',
      steps: [
        task('first', { count: '{{input.n}}' }),
        task('big', { v: 1 }, { conditions: [{ expression: 'input.kind == "big" && first.count + 1 > 3' }] }),
        task('after', { got: '{{big.v}}' }),
      ],
      wires: [],
      workflow_input,
    });
    const small = await engine.run('cel', { kind: 'big', n: 2 });
    expect(small.steps.map((s) => s.status)).toEqual(['succeeded', 'skipped', 'succeeded']);
    const big = await engine.run('cel', { kind: 'big', n: 3 });
    expect(big.output).toMatchObject({ big: { v: 1 }, after: { got: 1 } });
    // A field that is missing makes the condition false, never a failed run.
    const none = await engine.run('cel', { n: 5 });
    expect(none.steps.map((s) => s.status)).toEqual(['succeeded', 'skipped', 'succeeded']);
  });

  it('refuses, when the workflow is stored, an expression that reads an unknown root, a macro or a regex', async () => {
    const engine = new Engine();
    for (const [expression, message] of [
      ['nope.x == 1', /neither the input nor a step/],
      ['[1, 2].exists(x, x > 1)', /exists/],
      ['input.kind.matches("(a+)+$")', /matches/],
      ['1 + 2', /expected bool/],
      ['input.kind ==', /does not parse/],
    ] as const) {
      const error = (await engine.workflows
        .create({
          name: 'bad',
          steps: [task('a', {}, { conditions: [{ expression }] })],
          wires: [],
          workflow_input,
        })
        .catch((e: unknown) => e)) as ValidationError;
      expect(error, expression).toBeInstanceOf(ValidationError);
      expect(error.issues[0]!.path).toBe('steps[0].conditions[0].expression');
      expect(error.issues[0]!.message).toMatch(message);
    }
  });

  it('reads the item in a for_each step', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'items',
      steps: [
        task(
          'each',
          { x: '{{item.x}}' },
          {
            for_each: '{{input.list}}',
            conditions: [{ expression: 'item.x > 1 && item_index < 3' }],
          },
        ),
      ],
      wires: [],
      workflow_input: { name: 'input', input_schema: { type: 'object' } },
    });
    const run = await engine.run('items', { list: [{ x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }] });
    expect(run.status).toBe('succeeded');
    const output = run.output as { each: { items: unknown[] } };
    expect(output.each.items).toEqual([null, { x: 2 }, { x: 3 }, null]);
  });
});
