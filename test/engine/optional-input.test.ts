import { describe, expect, it } from 'vitest';
import { Engine, type Workflow } from '../../src/index.js';

/** A workflow of one `dummy_task` step given `input_data`, its output the step's, with `input_schema`. */
function echo(
  inputData: Record<string, unknown>,
  inputSchema: Record<string, unknown>,
  extra: Partial<Workflow> = {},
): Workflow {
  return {
    name: 'echo',
    steps: [
      {
        name: 'echo',
        type: 'l2',
        l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: inputData },
      },
    ],
    wires: [],
    workflow_input: { name: 'input', input_schema: inputSchema },
    workflow_output: { name: 'output', output_data: '{{echo}}' },
    ...extra,
  };
}

const customer = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    city: { type: 'string' },
    address: {
      type: 'object',
      properties: { street: { type: 'string' }, zip: { type: 'string' } },
    },
  },
  required: ['id', 'name'],
};

async function run(workflow: Workflow, input: unknown) {
  const engine = new Engine();
  await engine.workflows.create(workflow);
  return engine.run(workflow.name, input);
}

describe('an input property the schema declares and the input leaves out', () => {
  it('resolves to null, whole or inside text, as the "Add a customer" form with no City sends it', async () => {
    const record = await run(
      echo(
        {
          row: ['{{input.id}}', '{{input.name}}', '{{input.city}}'],
          line: '{{input.name}} of {{input.city}}',
          is_null: '{{input.city}}',
        },
        customer,
      ),
      { id: 1, name: 'Ada' },
    );
    expect(record.error).toBeNull();
    expect(record.output).toEqual({ row: [1, 'Ada', null], line: 'Ada of ', is_null: null });
  });

  it('resolves to null in workflow_output, and with the path going on past it', async () => {
    const record = await run(
      echo({ id: '{{input.id}}' }, customer, {
        workflow_output: {
          name: 'output',
          output_data: {
            city: '{{input.city}}',
            street: '{{input.address.street}}',
            first: '{{input.city[0]}}',
          },
        },
      }),
      { id: 1, name: 'Ada' },
    );
    expect(record.error).toBeNull();
    expect(record.output).toEqual({ city: null, street: null, first: null });
  });

  it('is null as well when a nested object the input gives leaves out a property its schema declares', async () => {
    const record = await run(echo({ zip: '{{input.address.zip}}' }, customer), {
      id: 1,
      name: 'Ada',
      address: { street: 'Main Street 1' },
    });
    expect(record.error).toBeNull();
    expect(record.output).toEqual({ zip: null });
  });

  it('is given by default_data when the defaults fill it', async () => {
    const workflow = echo({ city: '{{input.city}}' }, customer);
    workflow.workflow_input!.default_data = { city: 'Paris' };
    const record = await run(workflow, { id: 1, name: 'Ada' });
    expect(record.output).toEqual({ city: 'Paris' });
  });

  it('reads as null through a wire from the input', async () => {
    const workflow = echo({ keep: 1 }, customer, {
      wires: [
        { source_name: 'input', target_name: 'echo', source_data_path: 'city', target_data_path: 'city' },
        {
          source_name: 'input',
          target_name: 'echo',
          source_data_path: 'address.zip',
          target_data_path: 'zip',
        },
        // Merged at the root, null brings nothing.
        { source_name: 'input', target_name: 'echo', source_data_path: 'address' },
      ],
    });
    const record = await run(workflow, { id: 1, name: 'Ada' });
    expect(record.error).toBeNull();
    expect(record.output).toEqual({ keep: 1, city: null, zip: null });
  });
});

describe('a property the input schema does not declare', () => {
  const open = { type: 'object', properties: { id: { type: 'integer' } }, additionalProperties: true };

  it('still fails the step, quoting the reference', async () => {
    const record = await run(echo({ nickname: '{{input.nickname}}' }, open), { id: 1 });
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'reference_error', step: 'echo' });
    expect(record.error!.message).toContain('reference {{input.nickname}} does not resolve');
  });

  it('fails inside a declared object whose schema does not declare it, and under a null the input gives', async () => {
    const nested = await run(echo({ floor: '{{input.address.floor}}' }, customer), {
      id: 1,
      name: 'Ada',
      address: {},
    });
    expect(nested.error!.message).toContain('reference {{input.address.floor}} does not resolve');
    const nullable = {
      ...customer,
      properties: {
        ...customer.properties,
        address: { ...customer.properties.address, type: ['object', 'null'] },
      },
    };
    const underNull = await run(echo({ zip: '{{input.address.zip}}' }, nullable), {
      id: 1,
      name: 'Ada',
      address: null,
    });
    expect(underNull.status).toBe('failed');
    expect(underNull.error!.message).toContain('reference {{input.address.zip}} does not resolve');
  });

  it('fails through a wire from the input', async () => {
    const workflow = echo({}, open, {
      wires: [
        { source_name: 'input', target_name: 'echo', source_data_path: 'nickname', target_data_path: 'n' },
      ],
    });
    const record = await run(workflow, { id: 1 });
    expect(record.status).toBe('failed');
    expect(record.error!.message).toContain('wire from "input" reads "nickname"');
  });
});
