/**
 * Valid bodies of every spec resource, written by hand from the tables of SPEC sections 2 and 4.
 * Tests copy them with `clone` before changing anything.
 */

export const customersEntity = {
  name: 'customers',
  description: 'People who place orders',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'sheet-123', sheet_name: 'Customers', origin: { row: 0, col: 0 } },
};

export const ordersEntity = {
  name: 'orders',
  description: 'Orders of customers',
  columns: [
    { name: 'order_id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'total', type: 'NUMBER' },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 'sheet-123', sheet_name: 'Orders', origin: { row: 2, col: 1 } },
};

export const ordersCustomerRelationship = {
  name: 'orders_customer',
  relationship_type: 'foreign_key',
  source_entity: 'orders',
  target_entity: 'customers',
  foreign_key_config: { source_columns: ['customer_id'], target_columns: ['id'], enforce_foreign_key: false },
};

/** A workflow with `workflow_input` and `workflow_output`: read a customer, render a PDF, upload it, announce it. */
export const customerReportWorkflow = {
  name: 'customer_report',
  steps: [
    {
      name: 'customer',
      type: 'l2',
      l2_data: {
        provider: 'catalog',
        module: 'action',
        action: 'get_entity',
        input_data: {
          entity_name: 'customers',
          operation: {
            filters: [
              { column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: '{{input.customer_id}}' },
            ],
          },
        },
        metadata: {},
      },
    },
    {
      name: 'pdf',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'converters',
        action: 'create_pdf',
        input_data: {
          template: '<h1>Customer [[.id]]</h1>[[.table]]',
          template_type: 'html',
          variables: [
            { name: 'id', value_type: 'NUMBER', value: '{{input.customer_id}}' },
            { name: 'table', value_type: 'TABLE', value: '{{customer.body.table}}' },
          ],
        },
      },
    },
    {
      name: 'upload',
      type: 'l2',
      l2_data: {
        provider: 'memory',
        module: 'files',
        action: 'upload_file',
        input_data: {
          file_data: '{{pdf.pdf_data}}',
          file_name: 'customer.pdf',
          file_type: 'pdf',
          folder_id: 'reports',
        },
      },
    },
    {
      name: 'announce',
      type: 'l2',
      conditions: [{ data_path: 'input.notify', value: true }],
      l2_data: {
        provider: 'chat',
        module: 'bot',
        action: 'send_message',
        input_data: { channel: 'reports', message: 'Report ready: {{upload.file_url}}' },
      },
    },
  ],
  wires: [
    {
      source_name: 'input',
      source_data_path: 'customer_id',
      target_name: 'pdf',
      target_data_path: 'customer_id',
    },
  ],
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: { customer_id: { type: 'number' }, notify: { type: 'boolean' } },
      required: ['customer_id'],
    },
    default_data: { notify: false },
  },
  workflow_output: { name: 'output', output_data: { file_url: '{{upload.file_url}}' } },
};

/** A data transform without `workflow_input` and `workflow_output` (SPEC 2.4, 2.5). */
export const orderTotalsWorkflow = {
  name: 'order_totals',
  steps: [
    {
      name: 'totals',
      type: 'atlas',
      atlas_data: {
        action: 'transform',
        input_data: { language: 'javascript', code_file: 'order_totals.js' },
        input_entities: [{ name: 'orders' }, { name: 'customers' }],
        output_entities: [{ name: 'customer_totals', write_mode: 'append' }],
      },
    },
  ],
  wires: [],
};

/** An `atlas` `get` step followed by a step that uses its table. */
export const topOrdersWorkflow = {
  name: 'top_orders',
  steps: [
    {
      name: 'top',
      type: 'atlas',
      atlas_data: {
        action: 'get',
        input_data: {
          operation: { order_by: [{ column: 'total', direction: 'DESC' }] },
          page_size: 10,
          page_number: 1,
        },
        input_entities: [{ name: 'orders' }],
      },
    },
    {
      name: 'echo',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { table: '{{top.table}}' },
      },
    },
  ],
  wires: [
    { source_name: 'top', source_data_path: 'table.rows', target_name: 'echo', target_data_path: 'rows' },
  ],
};

/** A `request` step. */
export const exchangeRateWorkflow = {
  name: 'exchange_rate',
  steps: [
    {
      name: 'rate',
      type: 'request',
      request_data: {
        url: 'https://api.example.com/rates/{currency}',
        method: 'GET',
        headers: { accept: 'application/json' },
        path_params: { currency: '{{input.currency}}' },
        query_params: { date: 'today' },
      },
    },
  ],
  wires: [],
  workflow_input: {
    name: 'input',
    input_schema: { type: 'object', properties: { currency: { type: 'string' } }, required: ['currency'] },
  },
  workflow_output: { name: 'output', output_data: { rate: '{{rate.body.rate}}' } },
};

/** An application with text, form, datagrid and button components (SPEC 2.7). */
export const ordersApplication = {
  screens: [
    {
      url: 'home',
      components: [
        [
          {
            name: 'title',
            type: 'text',
            formatting: {},
            text: { contents: 'Customer reports', type: 'heading' },
          },
          {
            name: 'to_orders',
            type: 'button',
            formatting: {},
            button: {
              label: 'Orders',
              event: { type: 'redirect', redirect_data: { url: '/screens/orders' } },
            },
          },
        ],
        [
          {
            name: 'report_form',
            type: 'form',
            formatting: {},
            form: {
              form_items: [{ label: 'customer_id', type: 'number', required: true, number_config: {} }],
              job: { type: 'sync', workflow_name: 'customer_report' },
              do: { type: 'redirect', redirect_data: { url: '/screens/done?file={{output.file_url}}' } },
            },
          },
        ],
      ],
    },
    {
      url: 'orders',
      components: [
        [{ name: 'orders_grid', type: 'datagrid', formatting: {}, datagrid: { entity_name: 'orders' } }],
      ],
    },
    {
      url: 'done',
      components: [
        [
          {
            name: 'done_text',
            type: 'text',
            formatting: {},
            text: { contents: 'Your report: {{query_params.file}}' },
          },
          {
            name: 'back',
            type: 'button',
            formatting: {},
            button: { label: 'Back', event: { type: 'redirect', redirect_data: { url: '/screens/home' } } },
          },
        ],
      ],
    },
  ],
  start_screen_url: 'home',
};

export const getEntityInput = {
  entity_name: 'orders',
  operation: {
    select_columns: [{ column: 'order_id' }, { column: 'total', alias: 'amount' }],
    filters: [{ column: 'customer_id', operator: 'EQUALS', value_type: 'NUMBER', value: 7 }],
    order_by: [{ column: 'total', direction: 'DESC' }],
  },
  page_size: 20,
  page_number: 1,
};

export const getEntityOutput = {
  body: {
    table: {
      columns: [
        { name: 'order_id', type: 'NUMBER', number: { latin_numbering: true, min: 0, max: 100000, step: 1 } },
        { name: 'note', type: 'STRING', string: { is_json: false, is_url: false } },
        { name: 'paid', type: 'BOOLEAN', boolean: {} },
        { name: 'day', type: 'DATE', date: {} },
        { name: 'at', type: 'DATETIME', datetime: {} },
      ],
      rows: [[1, 'first', true, '2024-01-02', '2024-01-02T10:00:00Z']],
    },
    error: { is_error: false, errors: [] },
  },
};

/** The output of a read that found no data: both table fields null. */
export const emptyGetEntityOutput = { body: { table: { columns: null, rows: null } } };

export const createPdfInput = {
  template: '<h1>Total [[.total]]</h1>[[.orders]]',
  template_type: 'html',
  variables: [
    { name: 'total', value_type: 'NUMBER', value: 42 },
    { name: 'orders', value_type: 'TABLE', value: { columns: [{ name: 'id' }], rows: [[1]] } },
  ],
};

export const uploadFileInput = {
  file_data: 'JVBERi0xLjQ=',
  file_name: 'report.pdf',
  file_type: 'pdf',
  folder_id: 'reports',
};

export const sendMessageInput = { channel: 'sales', message: 'Report ready' };

/** A deep copy of a fixture, to change in one test. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}
