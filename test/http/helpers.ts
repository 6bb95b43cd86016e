import { expect } from 'vitest';
import { compileSchema } from '../../src/json-schema/index.js';
import { buildOpenApi } from '../../src/http/index.js';
import type { Workflow } from '../../src/index.js';

/** Sends one request to a fetch handler and reads the answer. */
export async function call(
  handler: (request: Request) => Promise<Response>,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ response: Response; status: number; body: any; text: string }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await handler(new Request(`http://localhost${path}`, init));
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { response, status: response.status, body: parsed, text };
}

const DOC = buildOpenApi() as any;

function resolve(schema: any): any {
  if (schema && typeof schema.$ref === 'string') return DOC.components.schemas[schema.$ref.split('/').pop()];
  if (schema?.type === 'array' && schema.items?.$ref) return { ...schema, items: resolve(schema.items) };
  if (Array.isArray(schema?.anyOf)) return { ...schema, anyOf: schema.anyOf.map(resolve) };
  return schema;
}

/**
 * Checks an answer against what the OpenAPI document says the operation answers with that status:
 * the status is documented, and a JSON body matches the documented schema.
 */
export function expectDocumented(
  operationId: string,
  status: number,
  response: Response,
  body: unknown,
): void {
  let operation: any;
  for (const item of Object.values<any>(DOC.paths))
    for (const op of Object.values<any>(item)) if (op.operationId === operationId) operation = op;
  expect(operation, `operation ${operationId} is documented`).toBeDefined();
  let documented = operation.responses[String(status)];
  expect(documented, `${operationId} documents status ${status}`).toBeDefined();
  if (documented.$ref) documented = DOC.components.responses[documented.$ref.split('/').pop()];
  const type = response.headers.get('content-type')?.split(';')[0] ?? '';
  if (!documented.content) return;
  const media = documented.content[type];
  expect(media, `${operationId} ${status} documents ${type}`).toBeDefined();
  if (type.endsWith('json')) {
    const issues = compileSchema(resolve(media.schema)).validate(body);
    expect(issues, `${operationId} ${status} body matches its documented schema`).toEqual([]);
  }
}

/** A workflow with a dummy_task and a get_entity step reading the customer named in the input. */
export const lookupWorkflow: Workflow = {
  name: 'lookup customer',
  steps: [
    {
      name: 'hello',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { greeting: 'hi {{input.id}}' },
      },
    },
    {
      name: 'read',
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
        metadata: {},
      },
    },
  ],
  wires: [],
  workflow_input: {
    name: 'input',
    input_schema: { type: 'object', properties: { id: { type: 'number' } }, required: ['id'] },
  },
  workflow_output: { name: 'output', output_data: { rows: '{{read.body.table.rows}}' } },
};

/** A workflow whose request step is refused (loopback is not allowed), so its runs fail. */
export const failingWorkflow: Workflow = {
  name: 'always fails',
  steps: [
    { name: 'call', type: 'request', request_data: { url: 'http://127.0.0.1:9/nothing', method: 'GET' } },
  ],
  wires: [],
};
