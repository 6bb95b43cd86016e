import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, type Workflow } from '../../src/index.js';
import { customersEntity, ordersCustomerFk, ordersEntity, shopSheets } from '../fixtures.js';

const totalsEntity = {
  name: 'order_totals',
  description: 'Sum of amounts per customer',
  columns: [
    { name: 'customer_id', type: 'NUMBER' as const },
    { name: 'orders', type: 'NUMBER' as const },
    { name: 'total', type: 'NUMBER' as const },
  ],
  primary_key: ['customer_id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'totals', origin: { row: 0, col: 0 } },
};

const summarize = `
const totals = new Map();
for (const order of getEntity('orders')) {
  const t = totals.get(order.customer_id) ?? { customer_id: order.customer_id, orders: 0, total: 0 };
  t.orders += 1;
  t.total += order.amount;
  totals.set(order.customer_id, t);
}
console.log('customers', totals.size);
writeEntity('order_totals', [...totals.values()]);
`;

const transformWorkflow: Workflow = {
  name: 'summarize_orders',
  steps: [
    {
      name: 'summarize',
      type: 'atlas',
      atlas_data: {
        action: 'transform',
        input_data: { language: 'javascript', code_file: 'summarize.js' },
        input_entities: [{ name: 'orders' }],
        output_entities: [{ name: 'order_totals', write_mode: 'append' }],
      },
    },
  ],
  wires: [],
};

async function engineWithTotals() {
  const sheets = shopSheets();
  sheets['shop']!['totals'] = [['customer_id', 'orders', 'total']];
  const spreadsheets = new MemorySpreadsheets(sheets);
  const engine = new Engine({ spreadsheets });
  for (const entity of [customersEntity, ordersEntity, totalsEntity])
    await engine.catalog.registerEntity(entity);
  await engine.catalog.createRelationship(ordersCustomerFk);
  await engine.catalog.createRelationship({
    name: 'totals_customer',
    relationship_type: 'foreign_key',
    source_entity: 'order_totals',
    target_entity: 'customers',
    foreign_key_config: {
      source_columns: ['customer_id'],
      target_columns: ['id'],
      enforce_foreign_key: true,
    },
  });
  return { engine, spreadsheets };
}

describe('transform steps', () => {
  it('aggregates one entity into another through engine.run (a workflow without input and output declarations)', async () => {
    const { engine, spreadsheets } = await engineWithTotals();
    await engine.scripts.put('summarize.js', summarize);
    await engine.workflows.create(transformWorkflow);
    const run = await engine.run('summarize_orders');
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ summarize: { written: { order_totals: 3 } } });
    expect(run.steps[0]!.logs).toEqual(['customers 3']);
    expect(spreadsheets.cells('shop', 'totals')).toEqual([
      ['customer_id', 'orders', 'total'],
      [1, 2, 175.5],
      [2, 1, 80],
      [3, 1, 2],
    ]);
  });

  it('writes nothing when any row of any output breaks a rule (the sheet is inspected after the failed run)', async () => {
    const { engine, spreadsheets } = await engineWithTotals();
    await engine.scripts.put(
      'summarize.js',
      `writeEntity('order_totals', [{ customer_id: 1, orders: 1, total: 1 }, { customer_id: 42, orders: 1, total: 1 }]);`,
    );
    await engine.workflows.create(transformWorkflow);
    const before = spreadsheets.cells('shop', 'totals');
    const run = await engine.run('summarize_orders');
    expect(run.status).toBe('failed');
    expect(run.error?.message).toMatch(/customer_id=42/);
    expect(spreadsheets.cells('shop', 'totals')).toEqual(before);
  });

  it.each(['trusted', 'sandboxed'])(
    'replace with no rows written empties the output entity, as the script gave none (%s)',
    async (kind) => {
      const { engine } = await engineWithTotals();
      await engine.catalog.append('order_totals', [{ customer_id: 1, orders: 1, total: 1 }]);
      if (kind === 'trusted') engine.scripts.register('summarize.js', ({ log }) => log('nothing'));
      else await engine.scripts.put('summarize.js', `console.log('nothing');`);
      const workflow = structuredClone(transformWorkflow);
      const step = workflow.steps[0] as Extract<Workflow['steps'][number], { type: 'atlas' }>;
      step.atlas_data.output_entities![0]!.write_mode = 'replace';
      await engine.workflows.create(workflow);
      const run = await engine.run('summarize_orders');
      expect(run).toMatchObject({
        status: 'succeeded',
        output: { summarize: { written: { order_totals: 0 } } },
      });
      const read = await engine.catalog.getEntity({ entity_name: 'order_totals', operation: {} });
      expect(read.body.table.rows).toEqual([]);
    },
  );

  it.each(['trusted', 'sandboxed'])(
    'keeps the lines logged before the script failed in the step record (%s)',
    async (kind) => {
      const { engine } = await engineWithTotals();
      if (kind === 'trusted')
        engine.scripts.register('summarize.js', ({ log }) => {
          log('before the error');
          throw new Error('boom');
        });
      else
        await engine.scripts.put(
          'summarize.js',
          `console.log('before the error');\nthrow new Error('boom');`,
        );
      await engine.workflows.create(transformWorkflow);
      const run = await engine.run('summarize_orders');
      expect(run.status).toBe('failed');
      expect(run.error?.message).toMatch(/boom/);
      expect(run.steps[0]).toMatchObject({ status: 'failed', logs: ['before the error'] });
    },
  );

  it('reports the script line of an error, and refuses entities the step did not declare', async () => {
    const { engine } = await engineWithTotals();
    await engine.scripts.put('summarize.js', `const a = 1;\nconst rows = getEntity('customers');\n`);
    await engine.workflows.create(transformWorkflow);
    const run = await engine.run('summarize_orders');
    expect(run.status).toBe('failed');
    expect(run.error?.message).toMatch(/line 2/);
    expect(run.error?.message).toMatch(/customers/);
  });

  it('runs a trusted TypeScript transform in-process with the same contract and atomic writes', async () => {
    const { engine, spreadsheets } = await engineWithTotals();
    engine.scripts.register('summarize.js', ({ getEntity, writeEntity, log }) => {
      const orders = getEntity('orders');
      log('rows', orders.length);
      writeEntity('order_totals', {
        columns: [{ name: 'customer_id' }, { name: 'orders' }, { name: 'total' }],
        rows: [[3, orders.length, 0]],
      });
    });
    await engine.workflows.create(transformWorkflow);
    const run = await engine.run('summarize_orders');
    expect(run.status).toBe('succeeded');
    expect(run.steps[0]!.logs).toEqual(['rows 4']);
    expect(spreadsheets.cells('shop', 'totals')!.at(-1)).toEqual([3, 4, 0]);
  });

  it('fails the step, naming the limit, when a script spins, and keeps serving', async () => {
    const { engine } = await engineWithTotals();
    const limited = new Engine({
      spreadsheets: new MemorySpreadsheets(shopSheets()),
      limits: { scriptTimeoutMs: 200 },
    });
    await limited.catalog.registerEntity(ordersEntity);
    await limited.catalog.registerEntity(totalsEntity);
    await limited.scripts.put('summarize.js', 'while (true) {}');
    await limited.workflows.create(transformWorkflow);
    const run = await limited.run('summarize_orders');
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('limit_exceeded');
    expect(run.error?.message).toMatch(/time/);
    const read = await engine.catalog.getEntity({ entity_name: 'orders', operation: {} });
    expect(read.body.table.rows).toHaveLength(4);
  });

  it.each([
    ['its step timeout_ms', { timeout_ms: 150 }, {}, /took longer than its timeout of 150 ms/],
    ['the run time limit', {}, { timeoutMs: 150 }, /time limit/],
  ])('stops a script that outlasts %s, names it, and writes nothing', async (_, step, options, message) => {
    const { engine, spreadsheets } = await engineWithTotals();
    // The script spins for a second, then writes: a QuickJS script holds the thread, so the
    // step's own timers cannot fire before it ends.
    await engine.scripts.put(
      'summarize.js',
      `const t = Date.now(); while (Date.now() - t < 1000) {} writeEntity('order_totals', [{ customer_id: 1, orders: 1, total: 1 }]);`,
    );
    const [only] = transformWorkflow.steps;
    await engine.workflows.create({ ...transformWorkflow, steps: [{ ...only!, ...step }] });
    const started = Date.now();
    const run = await engine.run('summarize_orders', {}, options);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'limit_exceeded', step: 'summarize', message });
    expect(spreadsheets.cells('shop', 'totals')).toEqual([['customer_id', 'orders', 'total']]);
  });

  it.each(['trusted', 'sandboxed'])(
    'reads and writes entities named like Object.prototype members (%s)',
    async (kind) => {
      const entity = (name: string) => ({
        name,
        columns: [{ name: 'id', type: 'NUMBER' as const }],
        primary_key: ['id'],
        spreadsheet_config: { spreadsheet_id: 'odd', sheet_name: name, origin: { row: 0, col: 0 } },
      });
      const spreadsheets = new MemorySpreadsheets({
        odd: { ['__proto__']: [['id'], [1], [2]], constructor: [['id']] },
      });
      const engine = new Engine({ spreadsheets });
      await engine.catalog.registerEntity(entity('__proto__'));
      await engine.catalog.registerEntity(entity('constructor'));
      if (kind === 'trusted')
        engine.scripts.register('copy.js', ({ getEntity, writeEntity }) => {
          writeEntity('constructor', getEntity('__proto__'));
        });
      else await engine.scripts.put('copy.js', `writeEntity('constructor', getEntity('__proto__'));`);
      await engine.workflows.create({
        name: 'copy',
        steps: [
          {
            name: 'copy',
            type: 'atlas',
            atlas_data: {
              action: 'transform',
              input_data: { language: 'javascript', code_file: 'copy.js' },
              input_entities: [{ name: '__proto__' }],
              output_entities: [{ name: 'constructor', write_mode: 'append' }],
            },
          },
        ],
        wires: [],
      });
      const run = await engine.run('copy');
      expect(run.error).toBeNull();
      expect(run.output).toEqual({ copy: { written: { constructor: 2 } } });
      expect(spreadsheets.cells('odd', 'constructor')).toEqual([['id'], [1], [2]]);
    },
  );
});
