import { z } from 'zod';
import { NotFoundError, ValidationError } from '../errors/index.js';
import { RUN_STATUSES, RunRecordSchema, WorkflowSchema } from '../schema/index.js';
import {
  IDEMPOTENCY_KEY,
  LOCATION,
  defineRoute,
  idempotencyKey,
  json,
  jsonText,
  nameParam,
  noContent,
} from './route.js';

const enc = encodeURIComponent;
const WORKFLOW_BODY = {
  media: 'json',
  schema: WorkflowSchema,
  required: true,
  description: 'The workflow definition.',
} as const;

/** The body of `PUT /workflows/{name}`, as documented: a definition whose `name` may be left out. @internal */
export const WorkflowReplaceSchema = z.object({
  ...WorkflowSchema.shape,
  name: WorkflowSchema.shape.name.optional(),
});

/** `PUT /workflows/{name}`: the definition, `name` optional (the path's when left out). */
const WORKFLOW_PUT_BODY = {
  ...WORKFLOW_BODY,
  schema: WorkflowReplaceSchema,
  description: 'The workflow definition; without `name`, it takes the path’s.',
} as const;

/** Routes of workflows and their runs. @internal */
export const WORKFLOW_ROUTES = [
  defineRoute({
    method: 'POST',
    path: '/workflows',
    name: 'workflows.create',
    summary: 'Create a workflow',
    body: WORKFLOW_BODY,
    responses: { 201: { description: 'Created.', schema: WorkflowSchema, headers: LOCATION } },
    problems: [400, 409, 413, 415],
    action: async ({ engine, body, options }) => {
      const workflow = await engine.workflows.create(await body());
      return json(201, workflow, { location: `${options.basePath}/workflows/${enc(workflow.name)}` });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/workflows',
    name: 'workflows.list',
    summary: 'List workflows',
    responses: { 200: { description: 'Every workflow, ordered by name.', schema: z.array(WorkflowSchema) } },
    problems: [],
    action: async ({ engine }) => json(200, await engine.workflows.list()),
  }),
  defineRoute({
    method: 'GET',
    path: '/workflows/{name}',
    name: 'workflows.get',
    summary: 'Read a workflow',
    params: nameParam('Workflow'),
    responses: { 200: { description: 'The workflow.', schema: WorkflowSchema } },
    problems: [404],
    action: async ({ engine, params }) => json(200, await engine.workflows.get(params.name)),
  }),
  defineRoute({
    method: 'PUT',
    path: '/workflows/{name}',
    name: 'workflows.replace',
    summary: 'Create or replace a workflow',
    description:
      'The body `name`, when given, must equal the name in the path; without it the body takes the path’s.',
    params: nameParam('Workflow'),
    body: WORKFLOW_PUT_BODY,
    responses: {
      200: { description: 'Replaced.', schema: WorkflowSchema },
      201: { description: 'Created.', schema: WorkflowSchema, headers: LOCATION },
    },
    problems: [400, 413, 415],
    action: async ({ engine, params, body, options }) => {
      const definition = await body();
      const isObject = typeof definition === 'object' && definition !== null && !Array.isArray(definition);
      const bodyName = isObject ? (definition as { name?: unknown }).name : undefined;
      if (bodyName !== undefined && bodyName !== params.name) {
        throw new ValidationError([
          {
            code: 'name_mismatch',
            path: 'name',
            message: `the body names workflow ${JSON.stringify(bodyName)} but the path names "${params.name}"; they must be equal`,
          },
        ]);
      }
      const { workflow, created } = await engine.workflows.replace(
        isObject ? { ...definition, name: params.name } : definition,
      );
      return json(
        created ? 201 : 200,
        workflow,
        created ? { location: `${options.basePath}/workflows/${enc(workflow.name)}` } : {},
      );
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/workflows/{name}',
    name: 'workflows.delete',
    summary: 'Delete a workflow',
    params: nameParam('Workflow'),
    responses: { 204: { description: 'Deleted.' } },
    problems: [404, 409],
    action: async ({ engine, params }) => {
      if (!(await engine.workflows.delete(params.name))) throw new NotFoundError('workflow', params.name);
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/workflows/{name}/runs',
    name: 'workflows.run',
    summary: 'Run a workflow',
    description:
      'Runs the workflow to its end. 200 with the run record whether it succeeded or failed, and `Location: /runs/{id}`; 400 when the input is invalid (nothing runs). Without an `Idempotency-Key`, the run is cancelled when the client goes away. With one, the run goes on when the client goes away, and a key already used for this workflow answers the run it started once it ends (header `Idempotent-Replayed: true`) instead of running again.',
    params: nameParam('Workflow'),
    headers: [IDEMPOTENCY_KEY],
    body: {
      media: 'json',
      schema: z.unknown().describe('The workflow input; validated against its input_schema.'),
      required: false,
      description: 'The input; empty means `{}`.',
    },
    responses: {
      200: {
        description: 'The run record.',
        schema: RunRecordSchema,
        headers: {
          Location: 'The path the run record is read at: `/runs/{id}`.',
          'Idempotent-Replayed':
            '`true` when the `Idempotency-Key` was used before: the run it started, not a new one.',
        },
      },
    },
    problems: [400, 404, 413, 415, 503],
    action: async ({ engine, request, params, body, options }) => {
      const key = idempotencyKey(request);
      // A run with a key outlives its request: the client that went away (a timeout) sends the key
      // again to get the run, which must not have been cancelled meanwhile.
      const run = await engine.start(params.name, await body(), {
        ...(key === null ? { signal: request.signal } : {}),
        traceparent: request.headers.get('traceparent') ?? undefined,
        ...(key === null ? {} : { key }),
      });
      const record = await run.result;
      return json(200, record, {
        location: `${options.basePath}/runs/${enc(record.id)}`,
        ...(run.replayed ? { 'idempotent-replayed': 'true' } : {}),
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/runs',
    name: 'runs.list',
    summary: 'List runs',
    description:
      'Run records newest first, a page at a time. Pass `next` of a page as `after` for the page after it.',
    query: z.strictObject({
      workflow: z.string().min(1).optional().describe('Only runs of this workflow.'),
      status: z.enum(RUN_STATUSES).optional().describe('Only runs with this status.'),
      // Decimal digits only: Number() would also take "0x10", "1e1" or " 3 ".
      limit: z
        .string()
        .regex(/^(?:[1-9]\d{0,2}|1000)$/, 'must be a whole number from 1 to 1000, in decimal digits')
        .transform(Number)
        .optional()
        .describe('Runs in a page (default 50).'),
      after: z.string().min(1).optional().describe('The `next` of the previous page.'),
    }),
    responses: {
      200: {
        description: 'A page of run records.',
        schema: z.strictObject({
          runs: z.array(RunRecordSchema),
          next: z.string().optional().describe('Where the next page starts; absent on the last page.'),
        }),
      },
    },
    problems: [400],
    action: async ({ engine, query }) => json(200, await engine.listRuns(query())),
  }),
  defineRoute({
    method: 'GET',
    path: '/runs/{id}',
    name: 'runs.get',
    summary: 'Read a run record',
    params: z.object({ id: z.string().describe('Run id') }),
    responses: { 200: { description: 'The run record.', schema: RunRecordSchema } },
    problems: [404],
    action: async ({ engine, params }) => jsonText(200, await engine.getRunText(params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/runs/{id}/cancel',
    name: 'runs.cancel',
    summary: 'Cancel a run',
    description:
      'Cancels a run: no further step starts and the steps running are told to stop; the run ends `cancelled`. `cancelled: false` when it had already ended (or, without a durable queue, runs in another process). A child run (`run_workflow`) is cancelled by its id in the process executing it; with a durable queue, one executing in another process answers 409 naming its parent run, whose cancel cancels it.',
    params: z.object({ id: z.string().describe('Run id') }),
    responses: {
      200: {
        description: 'Whether this call cancelled the run.',
        schema: z.strictObject({
          cancelled: z.boolean().describe('True when the run was cancelled by this call.'),
        }),
      },
    },
    problems: [404, 409],
    action: async ({ engine, params }) => json(200, { cancelled: await engine.cancel(params.id) }),
  }),
] as const;
