import { describe, expect, it } from 'vitest';
import { Engine, ValidationError } from '../../src/index.js';

const definition = {
  name: 'echo',
  steps: [
    {
      name: 's',
      type: 'l2',
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { a: 1 } },
    },
  ],
  wires: [],
};

describe('engine.workflows.validate', () => {
  it('returns the definition as it would be stored, and stores nothing', async () => {
    const engine = new Engine();
    expect(engine.workflows.validate(definition)).toEqual(definition);
    expect(await engine.workflows.list()).toEqual([]);
  });

  it('throws a ValidationError naming the step and field of every problem', () => {
    const broken = {
      ...definition,
      steps: [{ ...definition.steps[0]!, l2_data: { ...definition.steps[0]!.l2_data, action: 'nope' } }],
    };
    let error: unknown;
    try {
      new Engine().workflows.validate(broken);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((i) => i.path)).toEqual(['steps[0].l2_data']);
  });

  it('refuses an input name that references could not reach, naming the field', async () => {
    const engine = new Engine();
    for (const name of ['a.b', 'in{{x}}', 'rows[0]']) {
      const input = { name, input_schema: { type: 'object' } };
      const error = await engine.workflows
        .create({ ...definition, workflow_input: input })
        .catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toContainEqual(
        expect.objectContaining({
          path: 'workflow_input.name',
          message: expect.stringContaining('the input name may not contain'),
        }),
      );
    }
    expect(await engine.workflows.list()).toEqual([]);
  });
});
