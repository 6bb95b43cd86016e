import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors/index.js';
import { Engine } from '../../src/engine/engine.js';
import {
  ApplicationSchema,
  EntitySchema,
  RelationshipSchema,
  WorkflowSchema,
  check,
} from '../../src/schema/index.js';
import {
  application,
  atlasGet,
  button,
  datagrid,
  entity,
  form,
  getEntity,
  l2,
  relationship,
  request,
  wait,
  runWorkflow,
  text,
  transform,
  workflow,
} from '../../src/builders/index.js';
import * as f from '../schema/fixtures.js';

const customers = entity('customers')
  .description('People who place orders')
  .column('id', 'NUMBER')
  .column('name', 'STRING')
  .primaryKey('id')
  .sheet({ spreadsheet_id: 'sheet-123', sheet_name: 'Customers' });

const orders = entity('orders')
  .description('Orders of customers')
  .column('order_id', 'NUMBER')
  .column('customer_id', 'NUMBER')
  .column('total', 'NUMBER')
  .primaryKey('order_id')
  .sheet({ spreadsheet_id: 'sheet-123', sheet_name: 'Orders', origin: { row: 2, col: 1 } });

/** Expects `value` to pass `schema` and to equal `expected`. */
function expectBody(schema: Parameters<typeof check>[0], value: unknown, expected: unknown): void {
  expect(check(schema, value).ok).toBe(true);
  expect(value).toEqual(expected);
}

describe('entity()', () => {
  it('builds the spec body, origin defaulting to A1', () => {
    expectBody(EntitySchema, customers.build(), f.customersEntity);
    expectBody(EntitySchema, orders.build(), f.ordersEntity);
  });

  it('is immutable: each method returns a new builder', () => {
    const base = entity('t').column('a', 'STRING');
    base.column('b', 'NUMBER');
    const def = base.primaryKey('a').sheet({ spreadsheet_id: 's', sheet_name: 'S' }).build();
    expect(def.columns.map((c) => c.name)).toEqual(['a']);
  });

  it('throws a ValidationError naming every missing part', () => {
    const build = () => entity('t').column('a', 'STRING').build();
    expect(build).toThrow(ValidationError);
    try {
      build();
    } catch (error) {
      const paths = (error as ValidationError).issues.map((i) => i.path);
      expect(paths).toEqual(expect.arrayContaining(['primary_key', 'spreadsheet_config']));
      expect((error as Error).message).toContain('Invalid entity "t"');
    }
  });

  it('reports a duplicate column', () => {
    const build = () =>
      entity('t')
        .column('a', 'STRING')
        .column('a', 'NUMBER')
        .primaryKey('a')
        .sheet({ spreadsheet_id: 's', sheet_name: 'S' })
        .build();
    expect(build).toThrow(/column name "a" is used more than once/);
  });
});

describe('relationship()', () => {
  it('builds the spec body from builders', () => {
    const rel = relationship('orders_customer')
      .foreignKey({
        source: orders,
        sourceColumns: ['customer_id'],
        target: customers,
        targetColumns: ['id'],
      })
      .build();
    expectBody(RelationshipSchema, rel, f.ordersCustomerRelationship);
  });

  it('builds the spec body from names and definitions, with enforcement', () => {
    const rel = relationship('orders_customer')
      .foreignKey({
        source: 'orders',
        sourceColumns: ['customer_id'],
        target: customers.build(),
        targetColumns: ['id'],
        enforce: true,
      })
      .build();
    expect(rel.foreign_key_config.enforce_foreign_key).toBe(true);
    expect(rel.target_entity).toBe('customers');
  });

  it('rejects lists of unequal length given as plain arrays', () => {
    const source: string[] = ['a', 'b'];
    const build = () =>
      relationship('r')
        .foreignKey({
          source: 'x',
          sourceColumns: source as [string, ...string[]],
          target: 'y',
          targetColumns: ['c'],
        })
        .build();
    expect(build).toThrow(/must be of equal length/);
  });

  it('throws without a foreign key', () => {
    expect(() => relationship('r').build()).toThrow(/foreign_key_config is required/);
  });
});

describe('workflow()', () => {
  it('builds the spec body of a workflow with input and output', () => {
    const built = workflow('customer_report')
      .input({
        schema: {
          type: 'object',
          properties: { customer_id: { type: 'number' }, notify: { type: 'boolean' } },
          required: ['customer_id'],
        },
        defaults: { notify: false },
      })
      .step('customer', ({ ref }) =>
        getEntity(customers, {
          filters: [
            { column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: ref('input.customer_id') },
          ],
        }),
      )
      .step('pdf', ({ ref }) =>
        l2('platform', 'converters', 'create_pdf', {
          template: '<h1>Customer [[.id]]</h1>[[.table]]',
          template_type: 'html',
          variables: [
            { name: 'id', value_type: 'NUMBER', value: ref('input.customer_id') },
            { name: 'table', value_type: 'TABLE', value: ref('customer.body.table') },
          ],
        }),
      )
      .step('upload', ({ ref }) =>
        l2('memory', 'files', 'upload_file', {
          file_data: ref('pdf.pdf_data'),
          file_name: 'customer.pdf',
          file_type: 'pdf',
          folder_id: 'reports',
        }),
      )
      .step('announce', ({ ref }) =>
        l2('chat', 'bot', 'send_message', {
          channel: 'reports',
          message: `Report ready: ${ref('upload.file_url')}`,
        }),
      )
      .when('announce', [{ data_path: 'input.notify', value: true }])
      .wire({ from: 'input', fromPath: 'customer_id', to: 'pdf', toPath: 'customer_id' })
      .output({ data: ({ ref }) => ({ file_url: ref('upload.file_url') }) })
      .build();
    expectBody(WorkflowSchema, built, f.customerReportWorkflow);
  });

  it('builds a data transform without input and output', () => {
    const built = workflow('order_totals')
      .step(
        'totals',
        transform({
          code_file: 'order_totals.js',
          inputs: [orders, 'customers'],
          outputs: ['customer_totals'],
        }),
      )
      .build();
    expectBody(WorkflowSchema, built, f.orderTotalsWorkflow);
    expect(built).not.toHaveProperty('workflow_input');
  });

  it('builds an atlas get step and a wire from it', () => {
    const built = workflow('top_orders')
      .step(
        'top',
        atlasGet(
          orders,
          { order_by: [{ column: 'total', direction: 'DESC' }] },
          { page_size: 10, page_number: 1 },
        ),
      )
      .step('echo', ({ ref }) => l2('platform', 'dummy', 'dummy_task', { table: ref('top.table') }))
      .wire({ from: 'top', fromPath: 'table.rows', to: 'echo', toPath: 'rows' })
      .build();
    expectBody(WorkflowSchema, built, f.topOrdersWorkflow);
  });

  it('builds a request step', () => {
    const built = workflow('exchange_rate')
      .input({
        schema: { type: 'object', properties: { currency: { type: 'string' } }, required: ['currency'] },
      })
      .step('rate', ({ ref }) =>
        request({
          url: 'https://api.example.com/rates/{currency}',
          method: 'GET',
          headers: { accept: 'application/json' },
          path_params: { currency: ref('input.currency') },
          query_params: { date: 'today' },
        }),
      )
      .output({ data: { rate: '{{rate.body.rate}}' } })
      .build();
    expectBody(WorkflowSchema, built, f.exchangeRateWorkflow);
  });

  it('builds wait steps, checked as stored ones are', () => {
    const built = workflow('refund')
      .input({ schema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] } })
      .step('ok', () =>
        wait({
          kind: 'approval',
          title: 'Refund {{input.amount}}',
          assignees: { roles: ['manager'] },
          required: 2,
        }),
      )
      .step('pause', () => wait({ kind: 'timer', seconds: 5 }))
      .build();
    expect(built.steps).toEqual([
      {
        name: 'ok',
        type: 'wait',
        wait_data: {
          kind: 'approval',
          title: 'Refund {{input.amount}}',
          assignees: { roles: ['manager'] },
          required: 2,
        },
      },
      { name: 'pause', type: 'wait', wait_data: { kind: 'timer', seconds: 5 } },
    ]);
    expect(() =>
      workflow('bad')
        .step('pause', () => wait({ kind: 'timer' }))
        .build(),
    ).toThrow(/exactly one/);
  });

  it('keeps transform outputs with an explicit write mode and reference inputs', () => {
    const step = transform({
      code_file: 'x.js',
      inputs: ['{{top.table}}'],
      outputs: [{ name: 'o', write_mode: 'replace' }],
    });
    expect(step).toMatchObject({
      atlas_data: {
        input_entities: ['{{top.table}}'],
        output_entities: [{ name: 'o', write_mode: 'replace' }],
      },
    });
  });

  it('builds a for_each step running a child workflow per row, which the engine accepts', () => {
    const built = workflow('all_invoices')
      .step('people', atlasGet(customers))
      .forEach('invoices', 'people.table', ({ ref }) => ({
        ...runWorkflow('invoice', { customer_id: ref('item.id'), position: ref('item_index') }),
        concurrency: 4,
        on_error: 'continue',
      }))
      .output({ data: ({ ref }) => ({ made: ref('invoices.succeeded') }) })
      .build();
    expect(built.steps[1]).toEqual({
      name: 'invoices',
      for_each: '{{people.table}}',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'workflows',
        action: 'run_workflow',
        input_data: {
          workflow_name: 'invoice',
          input: { customer_id: '{{item.id}}', position: '{{item_index}}' },
        },
      },
      concurrency: 4,
      on_error: 'continue',
    });
    expect(new Engine().workflows.validate(built)).toEqual(built);
  });

  it('names the path of a problem found at build time', () => {
    const build = () =>
      workflow('w')
        .step('a', l2('p', 'm', ''))
        .build();
    expect(build).toThrow(ValidationError);
    expect(build).toThrow(/steps\[0\]\.l2_data\.action: action must not be empty/);
  });
});

describe('application()', () => {
  it('builds the spec body with text, form, datagrid and button', () => {
    const app = application()
      .screen('home', (s) =>
        s
          .row(
            text('Customer reports', { name: 'title', type: 'heading' }),
            button('Orders', '/screens/orders', { name: 'to_orders' }),
          )
          .row(
            form({
              name: 'report_form',
              items: [{ label: 'customer_id', type: 'number', required: true, number_config: {} }],
              workflow: 'customer_report',
              redirect: '/screens/done?file={{output.file_url}}',
            }),
          ),
      )
      .screen('orders', (s) => s.row(datagrid(orders, { name: 'orders_grid' })))
      .screen('done', (s) =>
        s.row(
          text('Your report: {{query_params.file}}', { name: 'done_text' }),
          button('Back', '/screens/home', { name: 'back' }),
        ),
      )
      .start('home')
      .build();
    expectBody(ApplicationSchema, app, f.ordersApplication);
  });

  it('names unnamed components by type and order on each screen', () => {
    const app = application()
      .screen('a', (s) => s.row(text('one'), text('two')).row(datagrid('orders')))
      .start('a')
      .build();
    expect(app.screens[0]?.components.flat().map((c) => c.name)).toEqual(['text_1', 'text_2', 'datagrid_1']);
  });

  it('throws without a start screen, and for a redirect to no screen', () => {
    expect(() =>
      application()
        .screen('a', (s) => s.row(text('x')))
        .build(),
    ).toThrow(/start_screen_url is required/);
    const bad = () =>
      application()
        .screen('a', (s) => s.row(button('Go', '/screens/b')))
        .start('a')
        .build();
    expect(bad).toThrow(/names no screen of this application/);
  });
});
