import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  ApplicationSchema,
  CreatePdfInputSchema,
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

/** One invalid body: the schema, the body, and the issue expected (its path and a key part of its message). */
interface Case {
  title: string;
  schema: z.ZodType;
  body: unknown;
  path: string;
  message: string | RegExp;
}

/** A copy of `fixture` changed by `change`. */
function mutate<T>(fixture: T, change: (body: any) => void): unknown {
  const body = f.clone(fixture);
  change(body);
  return body;
}

const E = (title: string, change: (b: any) => void, path: string, message: string | RegExp): Case => ({
  title,
  schema: EntitySchema,
  body: mutate(f.customersEntity, change),
  path,
  message,
});
const R = (title: string, change: (b: any) => void, path: string, message: string | RegExp): Case => ({
  title,
  schema: RelationshipSchema,
  body: mutate(f.ordersCustomerRelationship, change),
  path,
  message,
});
const W = (
  title: string,
  base: object,
  change: (b: any) => void,
  path: string,
  message: string | RegExp,
): Case => ({ title, schema: WorkflowSchema, body: mutate(base, change), path, message });
const A = (title: string, change: (b: any) => void, path: string, message: string | RegExp): Case => ({
  title,
  schema: ApplicationSchema,
  body: mutate(f.ordersApplication, change),
  path,
  message,
});
const G = (title: string, change: (b: any) => void, path: string, message: string | RegExp): Case => ({
  title,
  schema: GetEntityInputSchema,
  body: mutate(f.getEntityInput, change),
  path,
  message,
});
const O = (title: string, change: (b: any) => void, path: string, message: string | RegExp): Case => ({
  title,
  schema: GetEntityOutputSchema,
  body: mutate(f.getEntityOutput, change),
  path,
  message,
});

const report = f.customerReportWorkflow;
const totals = f.orderTotalsWorkflow;
const top = f.topOrdersWorkflow;
const rate = f.exchangeRateWorkflow;

const cases: Case[] = [
  // Entity (2.1, 2.2)
  E(
    'primary_key naming an undeclared column',
    (b) => (b.primary_key = ['email']),
    'primary_key[0]',
    'primary_key names "email", which is not a column',
  ),
  E(
    'duplicate column names',
    (b) => b.columns.push({ name: 'id', type: 'STRING' }),
    'columns[2].name',
    'column name "id" is used more than once',
  ),
  E('empty columns', (b) => (b.columns = []), 'columns', 'columns must have at least 1 item'),
  E(
    'bad column type',
    (b) => (b.columns[1].type = 'TEXT'),
    'columns[1].type',
    /type must be one of .*"STRING".*got the string "TEXT"/,
  ),
  E(
    'lowercase column type',
    (b) => (b.columns[0].type = 'number'),
    'columns[0].type',
    'got the string "number"',
  ),
  E('column without a name', (b) => delete b.columns[0].name, 'columns[0].name', 'name is required'),
  E(
    'origin row negative',
    (b) => (b.spreadsheet_config.origin.row = -1),
    'spreadsheet_config.origin.row',
    'row must be at least 0',
  ),
  E(
    'origin col not an integer',
    (b) => (b.spreadsheet_config.origin.col = 1.5),
    'spreadsheet_config.origin.col',
    'col must be an integer, got number 1.5',
  ),
  E(
    'origin given as a string',
    (b) => (b.spreadsheet_config.origin.row = '0'),
    'spreadsheet_config.origin.row',
    'row must be a number',
  ),
  E(
    'missing origin',
    (b) => delete b.spreadsheet_config.origin,
    'spreadsheet_config.origin',
    'origin is required',
  ),
  E(
    'missing spreadsheet_config',
    (b) => delete b.spreadsheet_config,
    'spreadsheet_config',
    'spreadsheet_config is required',
  ),
  E(
    'empty sheet_name',
    (b) => (b.spreadsheet_config.sheet_name = ''),
    'spreadsheet_config.sheet_name',
    'sheet_name must not be empty',
  ),
  E('empty primary_key', (b) => (b.primary_key = []), 'primary_key', 'primary_key must have at least 1 item'),
  E(
    'primary_key naming a column twice',
    (b) => (b.primary_key = ['id', 'id']),
    'primary_key[1]',
    'more than once',
  ),
  E(
    'name with a trailing space',
    (b) => (b.name = 'customers '),
    'name',
    '"customers " is not a valid name: use a name of 1 to 128 characters',
  ),
  E(
    'columns not an array',
    (b) => (b.columns = { id: 'NUMBER' }),
    'columns',
    'columns must be an array, got an object',
  ),

  // Relationship (2.3)
  R(
    'FK lists of unequal length',
    (b) => b.foreign_key_config.source_columns.push('order_id'),
    'foreign_key_config.target_columns',
    'must be of equal length',
  ),
  R(
    'empty FK source list',
    (b) => (b.foreign_key_config.source_columns = []),
    'foreign_key_config.source_columns',
    'source_columns must have at least 1 item',
  ),
  R(
    'empty FK target list',
    (b) => (b.foreign_key_config.target_columns = []),
    'foreign_key_config.target_columns',
    'target_columns must have at least 1 item',
  ),
  R(
    'unknown relationship_type',
    (b) => (b.relationship_type = 'one_to_many'),
    'relationship_type',
    'relationship_type must be one of "foreign_key", got the string "one_to_many"',
  ),
  R(
    'enforce_foreign_key as a string',
    (b) => (b.foreign_key_config.enforce_foreign_key = 'false'),
    'foreign_key_config.enforce_foreign_key',
    'enforce_foreign_key must be a boolean',
  ),
  R('missing target_entity', (b) => delete b.target_entity, 'target_entity', 'target_entity is required'),
  R(
    'missing foreign_key_config',
    (b) => delete b.foreign_key_config,
    'foreign_key_config',
    'foreign_key_config is required',
  ),

  // Workflow (2.4, 2.5)
  W(
    'duplicate step names',
    report,
    (b) => (b.steps[1].name = 'customer'),
    'steps[1].name',
    'step name "customer" is used more than once',
  ),
  W(
    'a step named like the workflow input',
    report,
    (b) => (b.steps[0].name = 'input'),
    'steps[0].name',
    'is the name of the workflow input',
  ),
  W(
    'a step name with a dot',
    report,
    (b) => (b.steps[3].name = 'an.nounce'),
    'steps[3].name',
    'may not contain "."',
  ),
  W(
    'unknown step type',
    report,
    (b) => (b.steps[0].type = 'lambda'),
    'steps[0].type',
    'type must be one of "l2", "atlas", "request", "wait", got the string "lambda"',
  ),
  W(
    'l2 step without l2_data',
    report,
    (b) => delete b.steps[2].l2_data,
    'steps[2].l2_data',
    'a step of type "l2" needs l2_data',
  ),
  W(
    'atlas step without atlas_data',
    totals,
    (b) => delete b.steps[0].atlas_data,
    'steps[0].atlas_data',
    'needs atlas_data',
  ),
  W(
    'request step without request_data',
    rate,
    (b) => delete b.steps[0].request_data,
    'steps[0].request_data',
    'needs request_data',
  ),
  W(
    'l2_data without action',
    report,
    (b) => delete b.steps[1].l2_data.action,
    'steps[1].l2_data.action',
    'action is required',
  ),
  W(
    'l2 input_data not an object',
    report,
    (b) => (b.steps[1].l2_data.input_data = 'x'),
    'steps[1].l2_data.input_data',
    'input_data must be an object',
  ),
  W(
    'wire to an unknown step',
    report,
    (b) => (b.wires[0].target_name = 'pfd'),
    'wires[0].target_name',
    'wire target "pfd" is not a step',
  ),
  W(
    'wire from an unknown source',
    report,
    (b) => (b.wires[0].source_name = 'inputs'),
    'wires[0].source_name',
    'neither a step nor the workflow input "input"',
  ),
  W(
    'wire from a step to itself',
    report,
    (b) => (b.wires[0] = { source_name: 'pdf', target_name: 'pdf' }),
    'wires[0].target_name',
    'to itself',
  ),
  W(
    'wire source path with __proto__',
    report,
    (b) => (b.wires[0].source_data_path = '__proto__.polluted'),
    'wires[0].source_data_path',
    'may not use "__proto__"',
  ),
  W(
    'wire target path with constructor',
    report,
    (b) => (b.wires[0].target_data_path = 'a.constructor'),
    'wires[0].target_data_path',
    'may not use "constructor"',
  ),
  W(
    'wire path with a bad index',
    top,
    (b) => (b.wires[0].source_data_path = 'table.rows[x]'),
    'wires[0].source_data_path',
    'is not an array index',
  ),
  W('missing wires', totals, (b) => delete b.wires, 'wires', 'wires is required'),
  W(
    'condition path with prototype',
    report,
    (b) => (b.steps[3].conditions[0].data_path = 'input.prototype'),
    'steps[3].conditions[0].data_path',
    'may not use "prototype"',
  ),
  W(
    'condition without value',
    report,
    (b) => delete b.steps[3].conditions[0].value,
    'steps[3].conditions[0].value',
    'value is required',
  ),
  W(
    'transform without code_file',
    totals,
    (b) => delete b.steps[0].atlas_data.input_data.code_file,
    'steps[0].atlas_data.input_data.code_file',
    'needs input_data.code_file',
  ),
  W(
    'transform in another language',
    totals,
    (b) => (b.steps[0].atlas_data.input_data.language = 'python'),
    'steps[0].atlas_data.input_data.language',
    'language "python" is not supported',
  ),
  W(
    'transform without output entities',
    totals,
    (b) => delete b.steps[0].atlas_data.output_entities,
    'steps[0].atlas_data.output_entities',
    'at least one output entity',
  ),
  W(
    'unknown write_mode',
    totals,
    (b) => (b.steps[0].atlas_data.output_entities[0].write_mode = 'merge'),
    'steps[0].atlas_data.output_entities[0].write_mode',
    'got the string "merge"',
  ),
  W(
    'input entity of a wrong shape',
    totals,
    (b) => (b.steps[0].atlas_data.input_entities[1] = 7),
    'steps[0].atlas_data.input_entities[1]',
    'an object with a name, or a string',
  ),
  W(
    'unknown atlas action',
    top,
    (b) => (b.steps[0].atlas_data.action = 'delete'),
    'steps[0].atlas_data.action',
    'got the string "delete"',
  ),
  W(
    'atlas get with two input entities',
    top,
    (b) => b.steps[0].atlas_data.input_entities.push({ name: 'customers' }),
    'steps[0].atlas_data.input_entities',
    'exactly one input entity',
  ),
  W(
    'atlas get with a lowercase direction',
    top,
    (b) => (b.steps[0].atlas_data.input_data.operation.order_by[0].direction = 'desc'),
    'steps[0].atlas_data.input_data.operation.order_by[0].direction',
    'got the string "desc"',
  ),
  W(
    'atlas get with page_number 0',
    top,
    (b) => (b.steps[0].atlas_data.input_data.page_number = 0),
    'steps[0].atlas_data.input_data.page_number',
    'page_number must be at least 1',
  ),
  W(
    'unknown request method',
    rate,
    (b) => (b.steps[0].request_data.method = 'FETCH'),
    'steps[0].request_data.method',
    /must be one of "GET".*got the string "FETCH"/,
  ),
  W(
    'request header value not a string',
    rate,
    (b) => (b.steps[0].request_data.headers.accept = 1),
    'steps[0].request_data.headers.accept',
    'accept must be a string, got number 1',
  ),
  W(
    'empty request url',
    rate,
    (b) => (b.steps[0].request_data.url = ''),
    'steps[0].request_data.url',
    'url must not be empty',
  ),
  W(
    'retry with 0 attempts',
    rate,
    (b) => (b.steps[0].retry = { attempts: 0 }),
    'steps[0].retry.attempts',
    'attempts must be at least 1',
  ),
  W(
    'workflow_input without a name',
    report,
    (b) => delete b.workflow_input.name,
    'workflow_input.name',
    'name is required',
  ),
  W(
    'input_schema not an object',
    report,
    (b) => (b.workflow_input.input_schema = 'object'),
    'workflow_input.input_schema',
    'input_schema must be an object',
  ),
  W(
    'workflow_output without a name',
    report,
    (b) => delete b.workflow_output.name,
    'workflow_output.name',
    'name is required',
  ),

  // Application (2.7)
  A(
    'start_screen_url naming no screen',
    (b) => (b.start_screen_url = 'start'),
    'start_screen_url',
    'start_screen_url "start" names no screen (screens: home, orders, done)',
  ),
  A(
    'duplicate screen urls',
    (b) => (b.screens[2].url = 'orders'),
    'screens[2].url',
    'screen url "orders" is used more than once',
  ),
  A(
    'button redirect outside the app',
    (b) => (b.screens[0].components[0][1].button.event.redirect_data.url = 'https://evil.example/phish'),
    'screens[0].components[0][1].button.event.redirect_data.url',
    'must be /screens/<screen_url>',
  ),
  A(
    'protocol-relative redirect',
    (b) => (b.screens[2].components[0][1].button.event.redirect_data.url = '//evil.example/screens/home'),
    'screens[2].components[0][1].button.event.redirect_data.url',
    'must be /screens/<screen_url>',
  ),
  A(
    'form redirect to an unknown screen',
    (b) => (b.screens[0].components[1][0].form.do.redirect_data.url = '/screens/finished'),
    'screens[0].components[1][0].form.do.redirect_data.url',
    'names no screen of this application',
  ),
  A(
    'duplicate component names on a screen',
    (b) => (b.screens[0].components[1][0].name = 'title'),
    'screens[0].components[1][0].name',
    'component name "title" is used more than once on screen "home"',
  ),
  A(
    'a component named ".." (a segment of its address)',
    (b) => (b.screens[0].components[1][0].name = '..'),
    'screens[0].components[1][0].name',
    'component name ".." cannot be a segment of the form\'s address',
  ),
  A(
    'a form item filling the submission token field',
    (b) => (b.screens[0].components[1][0].form.form_items[0].label = '_submission'),
    'screens[0].components[1][0].form.form_items[0].label',
    '"_submission" is the field of the form\'s submission token; name the item otherwise',
  ),
  A(
    'unknown component type',
    (b) => (b.screens[1].components[0][0].type = 'carousel'),
    'screens[1].components[0][0].type',
    'type must be one of "text", "form", "datagrid", "button", "chart", "metric", got the string "carousel"',
  ),
  A(
    'screen url with a slash',
    (b) => (b.screens[1].url = 'orders/all'),
    'screens[1].url',
    'one path segment',
  ),
  A(
    'form job that is not sync',
    (b) => (b.screens[0].components[1][0].form.job.type = 'async'),
    'screens[0].components[1][0].form.job.type',
    'must be one of "sync"',
  ),
  A(
    'form job without a workflow',
    (b) => delete b.screens[0].components[1][0].form.job.workflow_name,
    'screens[0].components[1][0].form.job.workflow_name',
    'workflow_name is required',
  ),
  A(
    'unknown form item type',
    (b) => (b.screens[0].components[1][0].form.form_items[0].type = 'slider'),
    'screens[0].components[1][0].form.form_items[0].type',
    'got the string "slider"',
  ),
  A(
    'datagrid without an entity',
    (b) => delete b.screens[1].components[0][0].datagrid.entity_name,
    'screens[1].components[0][0].datagrid.entity_name',
    'entity_name is required',
  ),
  A(
    'button event that is not a redirect',
    (b) => (b.screens[0].components[0][1].button.event.type = 'navigate'),
    'screens[0].components[0][1].button.event.type',
    'must be one of "redirect"',
  ),
  A('no screens', (b) => (b.screens = []), 'screens', 'screens must have at least 1 item'),

  // get_entity input (4.2): no other properties at any level
  G(
    'extra property at the top level',
    (b) => (b.limit = 5),
    'limit',
    'unknown property "limit"; no other properties are allowed here',
  ),
  G(
    'extra property in operation',
    (b) => (b.operation.having = ['id']),
    'operation.having',
    'unknown property "having"; no other properties are allowed here',
  ),
  G(
    'extra property in a filter',
    (b) => (b.operation.filters[0].negate = true),
    'operation.filters[0].negate',
    'unknown property "negate"; no other properties are allowed here',
  ),
  G(
    'extra property in order_by',
    (b) => (b.operation.order_by[0].nulls = 'first'),
    'operation.order_by[0].nulls',
    'unknown property "nulls"',
  ),
  G(
    'extra property in select_columns',
    (b) => (b.operation.select_columns[0].as = 'x'),
    'operation.select_columns[0].as',
    'unknown property "as"',
  ),
  G(
    'unknown operator',
    (b) => (b.operation.filters[0].operator = 'LIKE'),
    'operation.filters[0].operator',
    /operator must be one of "EQUALS".*got the string "LIKE"/,
  ),
  G(
    'unknown value_type',
    (b) => (b.operation.filters[0].value_type = 'DECIMAL'),
    'operation.filters[0].value_type',
    'got the string "DECIMAL"',
  ),
  G(
    'direction lowercase',
    (b) => (b.operation.order_by[0].direction = 'asc'),
    'operation.order_by[0].direction',
    'direction must be one of "ASC", "DESC", got the string "asc"',
  ),
  G(
    'select column without a column',
    (b) => delete b.operation.select_columns[1].column,
    'operation.select_columns[1].column',
    'column is required',
  ),
  G('page_number 0', (b) => (b.page_number = 0), 'page_number', 'page_number must be at least 1'),
  G(
    'page_size not an integer',
    (b) => (b.page_size = 2.5),
    'page_size',
    'page_size must be an integer, got number 2.5',
  ),
  G('page_size as a string', (b) => (b.page_size = '20'), 'page_size', 'page_size must be a number'),
  G('missing entity_name', (b) => delete b.entity_name, 'entity_name', 'entity_name is required'),
  G('missing operation', (b) => delete b.operation, 'operation', 'operation is required'),

  // get_entity output (4.2) and data table (2.6)
  O('missing body.table', (b) => delete b.body.table, 'body.table', 'table is required'),
  O(
    'is_error not a boolean',
    (b) => (b.body.error.is_error = 'no'),
    'body.error.is_error',
    'is_error must be a boolean',
  ),
  O(
    'errors not strings',
    (b) => (b.body.error.errors = [{ message: 'x' }]),
    'body.error.errors[0]',
    'must be a string',
  ),
  O(
    'a row that is not an array',
    (b) => (b.body.table.rows[0] = { order_id: 1 }),
    'body.table.rows[0]',
    'must be an array, got an object',
  ),
  O(
    'string config without is_url',
    (b) => delete b.body.table.columns[1].string.is_url,
    'body.table.columns[1].string.is_url',
    'is_url is required',
  ),
  O(
    'number config min not an integer',
    (b) => (b.body.table.columns[0].number.min = 0.5),
    'body.table.columns[0].number.min',
    'min must be an integer',
  ),
  O(
    'number config without latin_numbering',
    (b) => delete b.body.table.columns[0].number.latin_numbering,
    'body.table.columns[0].number.latin_numbering',
    'latin_numbering is required',
  ),

  // Other actions (4.3)
  {
    title: 'create_pdf with a markdown template',
    schema: CreatePdfInputSchema,
    body: mutate(f.createPdfInput, (b) => (b.template_type = 'markdown')),
    path: 'template_type',
    message: 'must be one of "html"',
  },
  {
    title: 'create_pdf variable with an unknown value_type',
    schema: CreatePdfInputSchema,
    body: mutate(f.createPdfInput, (b) => (b.variables[0].value_type = 'IMAGE')),
    path: 'variables[0].value_type',
    message: 'got the string "IMAGE"',
  },
  {
    title: 'create_pdf without a template',
    schema: CreatePdfInputSchema,
    body: mutate(f.createPdfInput, (b) => delete b.template),
    path: 'template',
    message: 'template is required',
  },
  {
    title: 'upload_file without file_name',
    schema: UploadFileInputSchema,
    body: mutate(f.uploadFileInput, (b) => delete b.file_name),
    path: 'file_name',
    message: 'file_name is required',
  },
  {
    title: 'upload_file with numeric file_data',
    schema: UploadFileInputSchema,
    body: mutate(f.uploadFileInput, (b) => (b.file_data = 12)),
    path: 'file_data',
    message: 'file_data must be base64 text or bytes',
  },
  {
    title: 'send_message with an empty channel',
    schema: SendMessageInputSchema,
    body: mutate(f.sendMessageInput, (b) => (b.channel = '')),
    path: 'channel',
    message: 'channel must not be empty',
  },
  {
    title: 'send_message without a message',
    schema: SendMessageInputSchema,
    body: mutate(f.sendMessageInput, (b) => delete b.message),
    path: 'message',
    message: 'message is required',
  },
];

describe('invalid bodies', () => {
  it('has at least 40 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases.map((c) => [c.title, c] as const))('%s', (_title, c) => {
    const result = check(c.schema, c.body);
    expect(result.ok, 'the body should be rejected').toBe(false);
    if (result.ok) return;
    const atPath = result.issues.filter((issue) => issue.path === c.path);
    expect(atPath, `no issue at "${c.path}"; issues: ${JSON.stringify(result.issues)}`).not.toHaveLength(0);
    expect(atPath.map((issue) => issue.message)).toContainEqual(
      expect.stringMatching(typeof c.message === 'string' ? escape(c.message) : c.message),
    );
  });

  it('reports every problem of a body at once, each at its own path', () => {
    const body = mutate(f.customersEntity, (b) => {
      b.columns[1].type = 'TEXT';
      b.spreadsheet_config.origin.row = -2;
      b.spreadsheet_config.sheet_name = '';
    });
    const result = check(EntitySchema, body);
    expect(result.ok ? [] : result.issues.map((i) => i.path).sort()).toEqual([
      'columns[1].type',
      'spreadsheet_config.origin.row',
      'spreadsheet_config.sheet_name',
    ]);
  });
});

/**
 * LEAD: schema gaps. Each case below fails until src/schema is changed as described in its title;
 * the report of issue 2 (items 5-7) lists the exact change.
 */
const gaps: Case[] = [
  G(
    'GAP issues.ts: a missing enum field reads "is required", not "got undefined undefined"',
    (b) => delete b.operation.filters[0].operator,
    'operation.filters[0].operator',
    'operator is required',
  ),
  G(
    'GAP issues.ts: a missing direction reads "is required"',
    (b) => delete b.operation.order_by[0].direction,
    'operation.order_by[0].direction',
    'direction is required',
  ),
  E(
    'GAP entity.ts: primary_key is checked even when a column type is wrong',
    (b) => {
      b.columns[1].type = 'TEXT';
      b.primary_key = ['email'];
    },
    'primary_key[0]',
    'primary_key names "email"',
  ),
  W(
    'GAP workflow.ts: a data block of another step type is refused',
    report,
    (b) => (b.steps[0].request_data = { url: 'https://example.com' }),
    'steps[0].request_data',
    'type "l2"',
  ),
  W(
    'GAP workflow.ts: input_schema.required names only declared properties',
    report,
    (b) => b.workflow_input.input_schema.required.push('customer_name'),
    'workflow_input.input_schema.required[1]',
    'customer_name',
  ),
  A(
    'GAP application.ts: a redirect may only use {{output.x}} and {{query_params.x}}',
    (b) =>
      (b.screens[2].components[0][1].button.event.redirect_data.url = '/screens/home?t={{secrets.token}}'),
    'screens[2].components[0][1].button.event.redirect_data.url',
    'secrets.token',
  ),
  A(
    'GAP application.ts: a button redirect cannot use {{output.x}} (no workflow ran)',
    (b) =>
      (b.screens[0].components[0][1].button.event.redirect_data.url = '/screens/orders?id={{output.id}}'),
    'screens[0].components[0][1].button.event.redirect_data.url',
    'output',
  ),
];

describe('LEAD: schema gaps (fail until src/schema is changed)', () => {
  it.each(gaps.map((c) => [c.title, c] as const))('%s', (_title, c) => {
    const result = check(c.schema, c.body);
    expect(result.ok, 'the body should be rejected').toBe(false);
    if (result.ok) return;
    const atPath = result.issues.filter((issue) => issue.path === c.path);
    expect(atPath, `no issue at "${c.path}"; issues: ${JSON.stringify(result.issues)}`).not.toHaveLength(0);
    expect(atPath.map((issue) => issue.message)).toContainEqual(
      expect.stringMatching(typeof c.message === 'string' ? escape(c.message) : c.message),
    );
  });
});

function escape(text: string): RegExp {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}
