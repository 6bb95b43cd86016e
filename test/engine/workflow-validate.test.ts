import { describe, expect, it } from 'vitest';
import { Engine, ValidationError, type WorkflowBody } from '../../src/index.js';

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
} satisfies WorkflowBody;

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

  it('refuses default_data the input schema refuses, and leaves required properties to the caller', async () => {
    const engine = new Engine();
    const input_schema = {
      type: 'object',
      properties: {
        amount: { type: 'number' },
        who: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['amount', 'who'],
    };
    const error = await engine.workflows
      .create({
        ...definition,
        workflow_input: { name: 'input', input_schema, default_data: { amount: 'ten', tags: ['a', 2] } },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((i) => [i.path, i.code])).toEqual([
      ['workflow_input.default_data.amount', 'invalid_type'],
      ['workflow_input.default_data.tags[1]', 'invalid_type'],
    ]);
    expect(await engine.workflows.list()).toEqual([]);
    // Defaults that fit, without the required "who": created, and a run gives "who".
    await engine.workflows.create({
      ...definition,
      workflow_input: { name: 'input', input_schema, default_data: { amount: 10 } },
    });
    expect((await engine.run('echo', { who: 'me' })).status).toBe('succeeded');
  });

  it('refuses data nested more than 512 levels deep with a ValidationError naming where, at any depth', async () => {
    const engine = new Engine();
    const nest = (levels: number) => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = { a: value };
      return value;
    };
    const deep = (levels: number) => ({
      ...definition,
      steps: [
        {
          ...definition.steps[0]!,
          l2_data: { ...definition.steps[0]!.l2_data, input_data: nest(levels) as Record<string, unknown> },
        },
      ],
    });
    for (const levels of [600, 20_000]) {
      const error = await engine.workflows.create(deep(levels)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([
        {
          code: 'too_deep',
          path: 'steps[0].l2_data.input_data',
          message: 'input_data is nested more than 512 levels deep',
        },
      ]);
    }
    // 500 levels of data (the definition's own four above them) is within the limit and runs.
    await engine.workflows.create(deep(500));
    expect((await engine.run('echo')).status).toBe('succeeded');
  });

  it('refuses a trigger whose input_data is nested more than 512 levels deep, naming where', async () => {
    const engine = new Engine();
    await engine.workflows.create(definition);
    let value: unknown = 1;
    for (let i = 0; i < 20_000; i++) value = { a: value };
    const error = await engine.triggers
      .create({
        name: 'deep',
        type: 'webhook',
        workflow_name: 'echo',
        input_data: value as Record<string, unknown>,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toEqual([
      { code: 'too_deep', path: 'input_data.a.a.a', message: 'a is nested more than 512 levels deep' },
    ]);
    expect(await engine.triggers.list()).toEqual([]);
  });
});
