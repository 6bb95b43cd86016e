// The end-to-end scenario every runtime plays through `createHandler(engine)`: workerd (through
// miniflare), Bun and Deno. Plain data only: the workerd bundle imports it too.

/** The cells the engine starts from: `new MemorySpreadsheets(SHOP)`. */
export const SHOP = {
  shop: {
    customers: [
      ['id', 'name', 'city'],
      [1, 'Ada', 'London'],
      [2, 'Grace', 'New York'],
      [3, 'Linus', 'Helsinki'],
    ],
    orders: [
      ['id', 'customer_id', 'amount'],
      [10, 1, 100],
      [11, 1, 75.5],
      [12, 2, 80],
      [13, 3, 2],
    ],
    totals: [['customer_id', 'orders', 'total']],
  },
};

/** One HTTP request of the scenario; a string body is sent as is, anything else as JSON. */
export interface ScenarioRequest {
  method: string;
  path: string;
  body?: unknown;
  type?: string;
}

/** What the runtime answered: the status and the body, parsed when it is JSON. */
export interface ScenarioResponse {
  status: number;
  type: string | null;
  body: any;
}

const sheet = (name: string) => ({ spreadsheet_id: 'shop', sheet_name: name, origin: { row: 0, col: 0 } });

/** The customers entity, on `shop/customers`. */
export const CUSTOMERS = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
    { name: 'city', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: sheet('customers'),
};

/**
 * The orders entity, on `shop/orders`, with a computed column (a CEL formula, evaluated by the engine
 * in the runtime) and rules every write must keep (a column's and the entity's check).
 */
const ORDERS = {
  name: 'orders',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER', required: true },
    { name: 'amount', type: 'NUMBER' },
    { name: 'with_vat', type: 'NUMBER', formula: 'round(amount * 1.2, 2)' },
  ],
  primary_key: ['id'],
  checks: [{ expression: 'amount > 0.0', message: 'an order is for more than nothing' }],
  spreadsheet_config: sheet('orders'),
};

const TOTALS = {
  name: 'order_totals',
  columns: [
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'orders', type: 'NUMBER' },
    { name: 'total', type: 'NUMBER' },
  ],
  primary_key: ['customer_id'],
  spreadsheet_config: sheet('totals'),
};

/** The transform script QuickJS runs: orders per customer, with their sum. */
const SUMMARIZE = [
  'const totals = new Map();',
  "for (const order of getEntity('orders')) {",
  '  const t = totals.get(order.customer_id) ?? { customer_id: order.customer_id, orders: 0, total: 0 };',
  '  t.orders += 1;',
  '  t.total += order.amount;',
  '  totals.set(order.customer_id, t);',
  '}',
  "console.log('customers', totals.size);",
  "writeEntity('order_totals', [...totals.values()]);",
].join('\n');

/** Read an entity -> transform in QuickJS -> read what it wrote -> output. */
const CUSTOMER_TOTALS = {
  name: 'customer_totals',
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
            filters: [{ column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: '{{input.id}}' }],
          },
        },
      },
    },
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
    {
      name: 'totals',
      type: 'atlas',
      atlas_data: {
        action: 'get',
        input_data: { operation: { order_by: [{ column: 'total', direction: 'DESC' }] } },
        input_entities: [{ name: 'order_totals' }],
      },
    },
  ],
  wires: [
    {
      source_name: 'summarize',
      source_data_path: 'written',
      target_name: 'totals',
      target_data_path: 'after',
    },
  ],
  workflow_input: {
    name: 'input',
    input_schema: { type: 'object', properties: { id: { type: 'number' } }, required: ['id'] },
  },
  workflow_output: {
    name: 'output',
    output_data: {
      customer: '{{customer.body.table.rows[0][1]}}',
      written: '{{summarize.written.order_totals}}',
      totals: '{{totals.table.rows}}',
    },
  },
};

/**
 * The requests, in order: register three entities; write orders (one breaks both rules and is refused,
 * one is written); read the orders filtered and sorted by the formula; store the script, create the
 * workflow, run it (last).
 */
export const SCENARIO: ScenarioRequest[] = [
  { method: 'POST', path: '/catalog/entity', body: CUSTOMERS },
  { method: 'POST', path: '/catalog/entity', body: ORDERS },
  { method: 'POST', path: '/catalog/entity', body: TOTALS },
  {
    method: 'POST',
    path: '/catalog/entities/orders/rows',
    body: {
      rows: [
        { id: 14, customer_id: 3, amount: 5 },
        { id: 15, amount: -1 },
      ],
    },
  },
  {
    method: 'POST',
    path: '/catalog/entities/orders/rows',
    body: { rows: [{ id: 14, customer_id: 3, amount: 5 }] },
  },
  {
    method: 'POST',
    path: '/catalog/entities/orders/read',
    body: {
      operation: {
        filters: [{ column: 'with_vat', operator: 'GREATER_THAN', value_type: 'NUMBER', value: 5 }],
        order_by: [{ column: 'with_vat', direction: 'DESC' }],
      },
    },
  },
  { method: 'PUT', path: '/scripts/summarize.js', body: SUMMARIZE, type: 'application/javascript' },
  { method: 'POST', path: '/workflows', body: CUSTOMER_TOTALS },
  { method: 'POST', path: '/workflows/customer_totals/runs', body: { id: 1 } },
];
