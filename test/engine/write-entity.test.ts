import { describe, expect, it } from 'vitest';
import {
  MemoryStorage,
  ValidationError,
  getEntity,
  transform,
  workflow,
  writeEntity,
  type Workflow,
} from '../../src/index.js';
import { shopEngine } from './helpers.js';

/** Marks one order as shipped: the step a workflow uses to keep state in a sheet. */
const markShipped: Workflow = workflow('mark_shipped')
  .input({
    schema: { type: 'object', properties: { order_id: { type: 'integer' } }, required: ['order_id'] },
  })
  .step('mark', writeEntity('orders', 'update', [{ order_id: '{{input.order_id}}', note: 'shipped' }]))
  .output({ data: { written: '{{mark.written}}' } })
  .build() as Workflow;

describe('catalog/action/write_entity', () => {
  it('updates a row by key from a workflow, writing only the cells it names', async () => {
    const { engine, spreadsheets } = await shopEngine();
    await engine.catalog.upsertEntity({
      ...(await engine.catalog.getDefinition('orders')),
      columns: [...(await engine.catalog.getDefinition('orders')).columns, { name: 'note', type: 'STRING' }],
    });
    await engine.workflows.create(markShipped);
    const run = await engine.run('mark_shipped', { order_id: 12 });
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ written: 1 });
    expect(spreadsheets.cells('shop', 'orders')![4]).toEqual([null, 12, 2, 'Chair', 80, 'shipped']);
  });

  it('fails the step with code write_conflict when the key is missing; nothing is written', async () => {
    const { engine, spreadsheets } = await shopEngine();
    await engine.catalog.upsertEntity({
      ...(await engine.catalog.getDefinition('orders')),
      columns: [...(await engine.catalog.getDefinition('orders')).columns, { name: 'note', type: 'STRING' }],
    });
    await engine.workflows.create(markShipped);
    const before = spreadsheets.cells('shop', 'orders');
    const run = await engine.run('mark_shipped', { order_id: 99 });
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'write_conflict', step: 'mark' });
    expect(spreadsheets.cells('shop', 'orders')).toEqual(before);
  });

  it('refuses a misspelt write_mode instead of appending; nothing is written', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const before = spreadsheets.cells('shop', 'orders');
    await engine.workflows.create({
      name: 'typo',
      steps: [
        {
          name: 'drop',
          type: 'l2',
          l2_data: {
            provider: 'catalog',
            module: 'action',
            action: 'write_entity',
            input_data: { entity_name: 'orders', write_mod: 'delete', rows: [{ order_id: 10 }] },
            metadata: {},
          },
        },
      ],
      wires: [],
    });
    const run = await engine.run('typo');
    expect(run.status).toBe('failed');
    expect(run.error?.message).toContain('"write_mod"');
    expect(spreadsheets.cells('shop', 'orders')).toEqual(before);
  });

  it('deletes the rows a read found, given as its data table', async () => {
    const { engine } = await shopEngine();
    await engine.workflows.create(
      workflow('drop_small_orders')
        .step(
          'small',
          getEntity('orders', {
            select_columns: [{ column: 'order_id' }],
            filters: [{ column: 'amount', operator: 'LESS_THAN', value_type: 'NUMBER', value: 30 }],
          }),
        )
        .step('drop', writeEntity('orders', 'delete', '{{small.body.table}}'))
        .build() as Workflow,
    );
    const run = await engine.run('drop_small_orders');
    expect(run.status).toBe('succeeded');
    expect(run.steps.find((s) => s.name === 'drop')!.output).toEqual({ written: 2 });
    const left = await engine.catalog.getEntity({ entity_name: 'orders', operation: {} });
    expect(left.body.table.rows!.map((r) => r[0])).toEqual([11, 12]);
  });
});

describe('write_entity rows', () => {
  it('fail the step with write_rejected naming a column a data table gives twice; nothing is written', async () => {
    const { engine, spreadsheets } = await shopEngine();
    await engine.workflows.create({
      name: 'twice',
      steps: [
        {
          name: 'add',
          type: 'l2',
          l2_data: {
            provider: 'catalog',
            module: 'action',
            action: 'write_entity',
            input_data: { entity_name: 'customers', rows: { columns: ['id', 'id'], rows: [[8, 9]] } },
          },
        },
      ],
      wires: [],
    });
    const before = spreadsheets.cells('shop', 'customers');
    const run = await engine.run('twice');
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'write_rejected', step: 'add' });
    expect(run.error!.message).toContain('rows.columns[1]: the column "id" is given twice');
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });
});

describe('a trusted transform writing a data table', () => {
  it('takes columns as names, and fails the step naming a repeated column; nothing is written', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const table = { columns: ['id', 'name'], rows: [[4, 'Alan']] };
    engine.scripts.register('add', (context) => context.writeEntity('customers', table));
    const step = transform({
      code_file: 'add',
      inputs: [],
      outputs: [{ name: 'customers', write_mode: 'append' }],
    });
    await engine.workflows.create(workflow('add').step('add', step).build() as Workflow);
    expect((await engine.run('add')).output).toEqual({ add: { written: { customers: 1 } } });
    const before = spreadsheets.cells('shop', 'customers');
    table.columns = ['id', 'id'];
    table.rows = [[5, 6]];
    const run = await engine.run('add');
    expect(run.error).toMatchObject({ code: 'write_rejected', step: 'add' });
    expect(run.error!.message).toContain('writeEntity.rows.columns[1]: the column "id" is given twice');
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });
});

describe('transform write modes by key', () => {
  it('upserts and deletes the rows a script writes', async () => {
    const { engine } = await shopEngine();
    await engine.scripts.put(
      'fix.js',
      `writeEntity('customers', getEntity('customers').map((c) => ({ id: c.id, city: c.city.toUpperCase() })));`,
    );
    await engine.scripts.put('drop.js', `writeEntity('orders', [{ order_id: 13 }]);`);
    await engine.workflows.create(
      workflow('tidy')
        .step(
          'upper',
          transform({
            code_file: 'fix.js',
            inputs: ['customers'],
            outputs: [{ name: 'customers', write_mode: 'upsert' }],
          }),
        )
        .step(
          'drop',
          transform({
            code_file: 'drop.js',
            inputs: ['orders'],
            outputs: [{ name: 'orders', write_mode: 'delete' }],
          }),
        )
        .build() as Workflow,
    );
    const run = await engine.run('tidy');
    expect(run.status).toBe('succeeded');
    expect(run.output).toMatchObject({
      upper: { written: { customers: 3 } },
      drop: { written: { orders: 1 } },
    });
    const customers = await engine.catalog.getEntity({ entity_name: 'customers', operation: {} });
    expect(customers.body.table.rows).toEqual([
      [1, 'Ada', 'LONDON'],
      [2, 'Grace', 'NEW YORK'],
      [3, 'Linus', 'HELSINKI'],
    ]);
    const orders = await engine.catalog.getEntity({ entity_name: 'orders', operation: {} });
    expect(orders.body.table.rows!.map((r) => r[0])).toEqual([10, 11, 12]);
  });

  it('refuses an entity listed twice in output_entities unless both entries append, naming the field', async () => {
    const { engine } = await shopEngine();
    const twice = (modes: ('append' | 'upsert' | 'delete')[]): Workflow => ({
      name: `twice_${modes.join('_')}`,
      steps: [
        {
          name: 'x',
          type: 'atlas',
          atlas_data: {
            action: 'transform',
            input_data: { code_file: 'x.js' },
            output_entities: modes.map((write_mode) => ({ name: 'customers', write_mode })),
          },
        },
      ],
      wires: [],
    });
    const error = await engine.workflows.create(twice(['upsert', 'delete'])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toEqual([
      expect.objectContaining({
        code: 'repeated_entity',
        path: 'steps[0].atlas_data.output_entities[1].name',
        message: expect.stringContaining('already output_entities[0] (upsert)'),
      }),
    ]);
    await expect(engine.workflows.create(twice(['append', 'upsert']))).rejects.toThrow(/repeated|already/);
    await expect(engine.workflows.create(twice(['append', 'append']))).resolves.toBeDefined();
  });

  it('refuses to run a stored definition that lists an entity twice with other modes; nothing is written', async () => {
    const storage = new MemoryStorage();
    await storage.put('workflows', 'old', {
      name: 'old',
      steps: [
        {
          name: 'both',
          type: 'atlas',
          atlas_data: {
            action: 'transform',
            input_data: { code_file: 'both' },
            input_entities: ['customers'],
            output_entities: [
              { name: 'customers', write_mode: 'upsert' },
              { name: 'customers', write_mode: 'delete' },
            ],
          },
        },
      ],
      wires: [],
    });
    const { engine, spreadsheets } = await shopEngine({ storage });
    engine.scripts.register('both', (context) => context.writeEntity('customers', [{ id: 1 }]));
    const before = spreadsheets.cells('shop', 'customers');
    await expect(engine.run('old')).rejects.toThrow(/output_entities\[1\]\.name/);
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });

  it('accepts every write mode in a definition and refuses others, naming the field', async () => {
    const { engine } = await shopEngine();
    const error = await engine.workflows
      .create({
        name: 'bad',
        steps: [
          {
            name: 'x',
            type: 'atlas',
            atlas_data: {
              action: 'transform',
              input_data: { code_file: 'x.js' },
              output_entities: [{ name: 'orders', write_mode: 'merge' as 'append' }],
            },
          },
        ],
        wires: [],
      })
      .catch((e: unknown) => e);
    expect(String(error)).toContain('output_entities[0].write_mode');
  });
});
