import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  ApplicationSchema,
  CreatePdfInputSchema,
  DataTableSchema,
  EntitySchema,
  GetEntityInputSchema,
  GetEntityOutputSchema,
  RelationshipSchema,
  SendMessageInputSchema,
  UploadFileInputSchema,
  WorkflowSchema,
  check,
} from '../../src/schema/index.js';
import * as f from './fixtures.js';

const cases: Array<[string, z.ZodType, unknown]> = [
  ['entity with spreadsheet_config (2.1, 2.2)', EntitySchema, f.customersEntity],
  ['entity with an origin away from A1', EntitySchema, f.ordersEntity],
  ['relationship with foreign_key_config (2.3)', RelationshipSchema, f.ordersCustomerRelationship],
  ['workflow with workflow_input and workflow_output (2.4)', WorkflowSchema, f.customerReportWorkflow],
  ['data transform workflow without input and output (2.4, 2.5)', WorkflowSchema, f.orderTotalsWorkflow],
  ['workflow with an atlas get step (2.5)', WorkflowSchema, f.topOrdersWorkflow],
  ['workflow with a request step (2.4)', WorkflowSchema, f.exchangeRateWorkflow],
  ['application with text, form, datagrid and button (2.7)', ApplicationSchema, f.ordersApplication],
  ['get_entity input (4.2)', GetEntityInputSchema, f.getEntityInput],
  [
    'get_entity input with an empty operation',
    GetEntityInputSchema,
    { entity_name: 'orders', operation: {} },
  ],
  ['get_entity output (4.2)', GetEntityOutputSchema, f.getEntityOutput],
  ['get_entity output with null columns and rows', GetEntityOutputSchema, f.emptyGetEntityOutput],
  ['data table (2.6)', DataTableSchema, f.getEntityOutput.body.table],
  ['create_pdf input (4.3)', CreatePdfInputSchema, f.createPdfInput],
  ['upload_file input (4.3)', UploadFileInputSchema, f.uploadFileInput],
  [
    'upload_file input with bytes',
    UploadFileInputSchema,
    { file_data: new Uint8Array([37, 80, 68, 70]), file_name: 'a.pdf' },
  ],
  ['send_message input (4.3)', SendMessageInputSchema, f.sendMessageInput],
];

describe('valid bodies from the spec tables', () => {
  it.each(cases)('%s passes', (_name, schema, body) => {
    const result = check(schema, body);
    expect(result.ok ? [] : result.issues).toEqual([]);
  });

  it('keeps every field of a valid entity', () => {
    const result = check(EntitySchema, f.customersEntity);
    expect(result.ok && result.value).toEqual(f.customersEntity);
  });

  it('keeps every field of a valid workflow', () => {
    const result = check(WorkflowSchema, f.customerReportWorkflow);
    expect(result.ok && result.value).toEqual(f.customerReportWorkflow);
  });

  it('accepts a lowercase request method and normalizes it', () => {
    const body = f.clone(f.exchangeRateWorkflow);
    body.steps[0]!.request_data.method = 'get';
    const result = check(WorkflowSchema, body);
    const step = result.ok ? result.value.steps[0] : undefined;
    expect(step?.type === 'request' && step.request_data.method).toBe('GET');
  });
});
