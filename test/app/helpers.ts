import { z } from 'zod';
import {
  Engine,
  MemorySpreadsheets,
  type ApplicationBody,
  type CellValue,
  type EngineOptions,
  type Entity,
  type Workflow,
} from '../../src/index.js';

/** 45 orders for customers 1..3 (customer 1 has 15 of them). */
export function orderCells(): CellValue[][] {
  const rows: CellValue[][] = [['order_id', 'customer_id', 'item', 'amount']];
  for (let i = 1; i <= 45; i++) rows.push([i, ((i - 1) % 3) + 1, `Item ${i}`, i * 2.5]);
  return rows;
}

/** Notes whose cells hold markup, to prove the grid escapes them. */
export const HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>&amp;';

export const ordersEntity: Entity = {
  name: 'orders',
  description: 'Orders',
  columns: [
    { name: 'order_id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'item', type: 'STRING' },
    { name: 'amount', type: 'NUMBER' },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};

export const notesEntity: Entity = {
  name: 'notes',
  description: 'Notes with markup in them',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'text', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'notes', origin: { row: 0, col: 0 } },
};

/** Reads a customer's orders and outputs `customer_id` and `count`. */
export const lookupWorkflow: Workflow = {
  name: 'lookup',
  steps: [
    {
      name: 'read',
      type: 'l2',
      l2_data: {
        provider: 'catalog',
        module: 'action',
        action: 'get_entity',
        input_data: {
          entity_name: 'orders',
          operation: {
            filters: [
              {
                column: 'customer_id',
                operator: 'EQUALS',
                value_type: 'NUMBER',
                value: '{{input.customer_id}}',
              },
            ],
          },
        },
        metadata: {},
      },
    },
  ],
  wires: [],
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: { customer_id: { type: 'integer', minimum: 1 } },
      required: ['customer_id'],
    },
  },
  workflow_output: {
    name: 'output',
    output_data: { customer_id: '{{input.customer_id}}', count: '{{read.body.table.rows.length}}' },
  },
};

/** Echoes its input: a note with every item type. */
export const noteWorkflow: Workflow = {
  name: 'note',
  steps: [
    {
      name: 'echo',
      type: 'l2',
      l2_data: {
        provider: 'test',
        module: 'app',
        action: 'echo',
        input_data: { note: '{{input.note}}', extra: null },
      },
    },
  ],
  wires: [],
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: {
        note: { type: 'string' },
        amount: { type: 'number' },
        paid: { type: 'boolean' },
        due: { type: 'string' },
        comment: { type: 'string' },
      },
      required: ['note', 'amount'],
    },
  },
  workflow_output: { name: 'output', output_data: { note: '{{echo.note}}', extra: '{{echo.extra}}' } },
};

/** Always fails. */
export const explodeWorkflow: Workflow = {
  name: 'explode',
  steps: [
    {
      name: 'boom',
      type: 'l2',
      l2_data: { provider: 'test', module: 'app', action: 'fail', input_data: {} },
    },
  ],
  wires: [],
  workflow_input: { name: 'input', input_schema: { type: 'object', properties: { n: { type: 'number' } } } },
  workflow_output: { name: 'output', output_data: {} },
};

/** The shop application used across the app tests. */
export function shopApp(): ApplicationBody {
  return {
    start_screen_url: 'start',
    screens: [
      {
        url: 'start',
        components: [
          [
            {
              name: 'title',
              type: 'text',
              formatting: {},
              text: { contents: 'Find orders', type: 'heading' },
            },
          ],
          [
            {
              name: 'lookup',
              type: 'form',
              formatting: {},
              form: {
                form_items: [
                  {
                    label: 'Customer',
                    name: 'customer_id',
                    type: 'number',
                    required: true,
                    number_config: {},
                  },
                ],
                job: { type: 'sync', workflow_name: 'lookup' },
                do: {
                  type: 'redirect',
                  redirect_data: {
                    url: '/screens/orders?customer={{output.customer_id}}&count={{output.count}}',
                  },
                },
              },
            },
          ],
        ],
      },
      {
        url: 'orders',
        components: [
          [
            {
              name: 'title',
              type: 'text',
              text: { contents: 'Orders of customer {{query_params.customer}}', type: 'heading' },
            },
          ],
          [{ name: 'count', type: 'text', text: { contents: '{{query_params.count}} orders found' } }],
          [{ name: 'grid', type: 'datagrid', datagrid: { entity_name: 'orders' } }],
          [
            {
              name: 'back',
              type: 'button',
              button: {
                label: 'Back to search',
                event: { type: 'redirect', redirect_data: { url: '/screens/start' } },
              },
            },
          ],
        ],
      },
      {
        url: 'notes',
        components: [
          [
            {
              name: 'title',
              type: 'text',
              text: { contents: 'Notes for {{query_params.who}}', type: 'heading' },
            },
          ],
          [{ name: 'grid', type: 'datagrid', datagrid: { entity_name: 'notes', page_size: 2 } }],
          [
            {
              name: 'add',
              type: 'form',
              form: {
                form_items: [
                  { label: 'Note', name: 'note', type: 'text', required: true },
                  {
                    label: 'Amount',
                    name: 'amount',
                    type: 'number',
                    required: true,
                    number_config: { min: 0, max: 1000, step: 0.5 },
                  },
                  { label: 'Paid', name: 'paid', type: 'boolean' },
                  { label: 'Due', name: 'due', type: 'date' },
                  { label: 'comment', type: 'text' },
                ],
                job: { type: 'sync', workflow_name: 'note' },
                do: {
                  type: 'redirect',
                  redirect_data: { url: '/screens/notes?who={{output.note}}&from={{query_params.who}}' },
                },
              },
            },
            {
              name: 'again',
              type: 'form',
              form: {
                form_items: [
                  { label: 'Note', name: 'note', type: 'text' },
                  { label: 'Amount', name: 'amount', type: 'number' },
                ],
                job: { type: 'sync', workflow_name: 'note' },
              },
            },
            {
              name: 'boom',
              type: 'form',
              form: {
                form_items: [{ label: 'N', name: 'n', type: 'number' }],
                job: { type: 'sync', workflow_name: 'explode' },
              },
            },
            {
              name: 'extra',
              type: 'form',
              form: {
                form_items: [
                  { label: 'Note', name: 'note', type: 'text' },
                  { label: 'Amount', name: 'amount', type: 'number' },
                ],
                job: { type: 'sync', workflow_name: 'note' },
                do: { type: 'redirect', redirect_data: { url: '/screens/notes?x={{output.extra}}' } },
              },
            },
          ],
          [
            {
              name: 'who',
              type: 'button',
              button: {
                label: 'Same, for {{query_params.who}}',
                event: {
                  type: 'redirect',
                  redirect_data: { url: '/screens/notes?who={{query_params.who}}' },
                },
              },
            },
          ],
        ],
      },
    ],
  };
}

/** An engine with orders (45 rows), notes (hostile cells), the three workflows and the `shop` app. */
export async function appEngine(options: EngineOptions = {}) {
  const spreadsheets = new MemorySpreadsheets({
    shop: {
      orders: orderCells(),
      notes: [
        ['id', 'text'],
        [1, HOSTILE],
        [2, 'plain'],
        [3, 'third'],
      ],
    },
  });
  const engine = new Engine({ spreadsheets, ...options });
  engine.actions.register({
    provider: 'test',
    module: 'app',
    action: 'echo',
    input: z.looseObject({}),
    run: (input) => input,
  });
  engine.actions.register({
    provider: 'test',
    module: 'app',
    action: 'fail',
    input: z.looseObject({}),
    run: () => {
      throw new Error('the ledger is locked');
    },
  });
  await engine.catalog.registerEntity(ordersEntity);
  await engine.catalog.registerEntity(notesEntity);
  for (const workflow of [lookupWorkflow, noteWorkflow, explodeWorkflow])
    await engine.workflows.create(workflow);
  await engine.applications.put('shop', shopApp());
  return { engine, spreadsheets };
}
