import type { Workflow } from '../src/index.js';

/** The invoice workflow: read a customer's orders, render a PDF with a TABLE, upload it, post to chat, output file_url. */
export function invoiceWorkflow(provider: string, channel = 'general', folder = 'invoices'): Workflow {
  return {
    name: 'invoice',
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
        name: 'orders',
        type: 'l2',
        l2_data: {
          provider: 'catalog',
          module: 'action',
          action: 'get_entity',
          input_data: {
            entity_name: 'orders',
            operation: {
              select_columns: [
                { column: 'order_id', alias: 'Order' },
                { column: 'item', alias: 'Item' },
                { column: 'amount', alias: 'Amount' },
              ],
              filters: [
                {
                  column: 'customer_id',
                  operator: 'EQUALS',
                  value_type: 'NUMBER',
                  value: '{{input.customer_id}}',
                },
              ],
              order_by: [{ column: 'order_id', direction: 'ASC' }],
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
            template: '<h1>Invoice for [[.customer_name]]</h1><p>Orders: [[.count]]</p>[[.orders]]',
            template_type: 'html',
            variables: [
              { name: 'customer_name', value_type: 'STRING', value: '{{customer.body.table.rows[0][1]}}' },
              { name: 'count', value_type: 'NUMBER', value: '{{orders.body.table.rows.length}}' },
              { name: 'orders', value_type: 'TABLE', value: '{{orders.body.table}}' },
            ],
          },
        },
      },
      {
        name: 'upload',
        type: 'l2',
        l2_data: {
          provider,
          module: 'files',
          action: 'upload_file',
          input_data: {
            file_data: '{{pdf.pdf_data}}',
            file_name: 'invoice-{{input.customer_id}}.pdf',
            file_type: 'pdf',
            folder_id: folder,
          },
        },
      },
      {
        name: 'notify',
        type: 'l2',
        l2_data: {
          provider: 'chat',
          module: 'bot',
          action: 'send_message',
          input_data: { channel, message: 'Invoice for customer {{input.customer_id}}: {{upload.file_url}}' },
        },
      },
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: {
        type: 'object',
        properties: { customer_id: { type: 'integer' } },
        required: ['customer_id'],
      },
    },
    workflow_output: { name: 'output', output_data: { file_url: '{{upload.file_url}}' } },
  };
}
