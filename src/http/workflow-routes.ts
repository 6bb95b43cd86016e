import { z } from 'zod';
import { NotFoundError, ValidationError } from '../errors/index.js';
import {
  RUN_STATUSES,
  RunRecordSchema,
  RunSummarySchema,
  WorkflowSchema,
  type WorkflowBody,
} from '../schema/index.js';
import {
  IDEMPOTENCY_KEY,
  LOCATION,
  defineRoute,
  idempotencyKey,
  json,
  jsonText,
  nameParam,
  noContent,
  type RouteHeader,
} from './route.js';

const enc = encodeURIComponent;
const RUN_ID = z.strictObject({
  run_id: z.string().describe('The run the call started, or started before.'),
});

/** The `Prefer` header of `POST /workflows/{name}/runs` (RFC 7240). */
const PREFER: RouteHeader = {
  name: 'Prefer',
  description:
    '`respond-async`: answer 202 `{ run_id }` at once instead of waiting for the run to end. Other preferences are ignored.',
};
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
      const workflow = await engine.workflows.create((await body()) as WorkflowBody);
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
        (isObject ? { ...definition, name: params.name } : definition) as WorkflowBody,
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
      'Starts the workflow. Without `Prefer: respond-async` the answer waits for the run to end: 200 with the run record whether it succeeded or failed, and `Location: /runs/{id}`. With it, the answer is 202 `{ run_id }` at once, with `Location` and `Preference-Applied: respond-async`; read the run at `Location` (or cancel it with `POST /runs/{id}/cancel`). 400 when the input is invalid (nothing runs). A client that goes away never cancels the run: the answer stops waiting and the run goes on. An `Idempotency-Key` already used for this workflow answers the run it started (header `Idempotent-Replayed: true`) instead of running again: waiting, its record once it ends; with `respond-async`, 200 `{ run_id }` at once.',
    params: nameParam('Workflow'),
    headers: [IDEMPOTENCY_KEY, PREFER],
    body: {
      media: 'json',
      schema: z.unknown().describe('The workflow input; validated against its input_schema.'),
      required: false,
      description: 'The input; empty means `{}`.',
    },
    responses: {
      200: {
        description:
          'The run record once the run ended; with `Prefer: respond-async` and an `Idempotency-Key` used before, `{ run_id }` of the run it started.',
        schema: z.union([RunRecordSchema, RUN_ID]),
        headers: {
          Location: 'The path the run record is read at: `/runs/{id}`.',
          'Idempotent-Replayed':
            '`true` when the `Idempotency-Key` was used before: the run it started, not a new one.',
          'Preference-Applied': '`respond-async` when the answer did not wait for the run.',
        },
      },
      202: {
        description: 'With `Prefer: respond-async`: the run started and goes on; read it at `Location`.',
        schema: RUN_ID,
        headers: {
          Location: 'The path the run record is read at: `/runs/{id}`.',
          'Preference-Applied': '`respond-async`.',
        },
      },
    },
    problems: [400, 404, 413, 415, 503],
    action: async ({ engine, request, params, body, options }) => {
      const key = idempotencyKey(request);
      const respondAsync = prefersAsync(request);
      // No request signal: a run outlives its request; only `POST /runs/{id}/cancel` cancels it.
      const run = await engine.start(params.name, await body(), {
        traceparent: request.headers.get('traceparent') ?? undefined,
        ...(key === null ? {} : { key }),
      });
      const headers: Record<string, string> = {
        location: `${options.basePath}/runs/${enc(run.id)}`,
        ...(run.replayed ? { 'idempotent-replayed': 'true' } : {}),
      };
      if (respondAsync) {
        // Its failures are in its record; nobody waits for it here.
        run.result.catch(() => undefined);
        return json(
          run.replayed ? 200 : 202,
          { run_id: run.id },
          { ...headers, 'preference-applied': 'respond-async' },
        );
      }
      const record = await unlessGone(run.result, request.signal);
      // The client went away: nobody reads this answer, and the run goes on.
      if (record === undefined) return json(202, { run_id: run.id }, headers);
      return json(200, record, headers);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/runs',
    name: 'runs.list',
    summary: 'List runs',
    description:
      'Runs newest first, a page at a time, as summaries (id, workflow, status, times, the error code and message): no input, output or steps, which `GET /runs/{id}` answers. Filter by `workflow`, `status` and start time (`started_after` included, `started_before` not). Pass `next` of a page as `after` for the page after it.',
    query: z.strictObject({
      workflow: z.string().min(1).optional().describe('Only runs of this workflow.'),
      status: z.enum(RUN_STATUSES).optional().describe('Only runs with this status.'),
      started_after: z
        .string()
        .min(1)
        .optional()
        .describe('Only runs started at or after this ISO date or date-time.'),
      started_before: z
        .string()
        .min(1)
        .optional()
        .describe('Only runs started before this ISO date or date-time.'),
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
        description: 'A page of run summaries.',
        schema: z.strictObject({
          runs: z.array(RunSummarySchema),
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
  defineRoute({
    method: 'POST',
    path: '/runs/{id}/retry',
    name: 'runs.retry',
    summary: 'Retry a run from a step',
    description:
      'Starts a new run (`retry_of` names this one) of the workflow as this run had it: the steps before `from_step` keep what they did and do not run again; `from_step` and every step after it run. Without `from_step`, from the step the run failed at (else the whole run). `input` replaces the input. Answers 202 with the new run id at once; read it at `Location`. Needs `runs.retry`; 409 for a run that has not ended or is a child run.',
    params: z.object({ id: z.string().describe('Run id') }),
    body: {
      media: 'json',
      required: false,
      validate: true,
      description: '`{ from_step?, input? }`.',
      schema: z.strictObject({
        from_step: z.string().optional().describe('The step to run again from.'),
        input: z.unknown().optional().describe("A new input (default: the run's)."),
      }),
    },
    responses: {
      202: {
        description: 'The new run started.',
        schema: z.strictObject({ run_id: z.string(), retry_of: z.string() }),
        headers: LOCATION,
      },
    },
    problems: [400, 404, 409, 413, 415, 422],
    action: async ({ engine, params, body, options }) => {
      const { from_step, input } = await body();
      const handle = await engine.retry(params.id, {
        ...(from_step === undefined ? {} : { from_step }),
        ...(input === undefined ? {} : { input }),
      });
      handle.result.catch(() => undefined);
      return json(
        202,
        { run_id: handle.id, retry_of: params.id },
        { location: `${options.basePath}/runs/${encodeURIComponent(handle.id)}` },
      );
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/runs/bulk',
    name: 'runs.bulk',
    summary: 'Cancel or retry many runs',
    description:
      'Selects the runs a `filter` matches (workflow, status, started_after, started_before, initiator) among those the caller may read, or exactly the `runs` listed, counts them, and then cancels or retries exactly those (runs started meanwhile are not touched). With `dry_run: true` it only counts. Needs `runs.cancel` or `runs.retry`; audited as one entry with the count. At most 10,000 runs.',
    body: {
      media: 'json',
      required: true,
      description: '`{ action: "cancel" | "retry", filter?, runs?, dry_run? }`.',
      schema: z.strictObject({
        action: z.enum(['cancel', 'retry']),
        filter: z
          .strictObject({
            workflow: z.string().optional(),
            status: z.enum(RUN_STATUSES).optional(),
            started_after: z.string().optional(),
            started_before: z.string().optional(),
            initiator: z.string().optional(),
          })
          .optional(),
        runs: z.array(z.string()).optional(),
        dry_run: z.boolean().optional(),
      }),
    },
    responses: {
      200: {
        description: 'What was selected, and what was done.',
        schema: z.strictObject({
          count: z.number().int(),
          runs: z.array(z.string()),
          done: z.number().int().optional(),
          retries: z.record(z.string(), z.string()).optional(),
          failed: z
            .array(z.strictObject({ run: z.string(), code: z.string(), message: z.string() }))
            .optional(),
        }),
      },
    },
    problems: [400, 413, 415, 422],
    action: async ({ engine, body }) => json(200, await engine.bulk((await body()) as never)),
  }),
] as const;

/** Whether the request's `Prefer` header (RFC 7240, any number of them) holds `respond-async`. */
function prefersAsync(request: Request): boolean {
  const prefer = request.headers.get('prefer');
  if (prefer === null) return false;
  // Preferences are separated by commas; each is a token, optionally `=value` and `;` parameters.
  return prefer.split(',').some((preference) => {
    const name = preference.split(/[=;]/, 1)[0]!.trim().toLowerCase();
    return name === 'respond-async';
  });
}

/**
 * The run's record once it ends, or `undefined` as soon as the client goes away (`signal`): the
 * answer then stops waiting, and the run goes on.
 */
function unlessGone<T>(result: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) {
    result.catch(() => undefined);
    return Promise.resolve(undefined);
  }
  return new Promise<T | undefined>((resolve, reject) => {
    const gone = (): void => resolve(undefined);
    signal.addEventListener('abort', gone, { once: true });
    result.then(
      (value) => {
        signal.removeEventListener('abort', gone);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', gone);
        reject(error);
      },
    );
  });
}
