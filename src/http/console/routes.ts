/**
 * The operator console under `/console`: pages rendered on the server, each checked through the
 * engine as the principal asking sees it, and the forms that cancel and retry runs.
 * @module
 */
import { z } from 'zod';
import { isInspectable } from '../../adapters/queue-jobs.js';
import { renderMessagePage } from '../../app/render.js';
import { scheduleOf } from '../../engine/triggers.js';
import { NotFoundError, StepwireError, ValidationError, isForbiddenError } from '../../errors/index.js';
import { runTimelineSvg, workflowGraphSvg } from '../../pictures/index.js';
import type { RunSummary } from '../../schema/index.js';
import { RUN_STATUSES } from '../../schema/run-record.js';
import type { BulkFilter } from '../../engine/bulk.js';
import { defineRoute, type RouteContext, type RouteEngine } from '../route.js';
import { readForm } from '../screens.js';
import { EVENT_ROUTES } from './events.js';
import { answerPage, consolePage, esc, frameOf, pageAnswer, seeOther, type PageFrame } from './layout.js';
import {
  renderApprovals,
  renderAudit,
  renderBulkConfirm,
  renderQueue,
  renderRun,
  renderRuns,
  renderTriggers,
  renderWorkflow,
  renderWorkflows,
  runsQuery,
  statsOf,
  type RunFilters,
} from './pages.js';
import { CONSOLE_SCRIPT } from './script.js';

/** Runs in a page of the runs list. */
const PAGE_SIZE = 50;
/** The latest runs the runs page counts by status. */
const COUNT_LIMIT = 1000;
/** Storage pages read at most to fill one page of runs filtered by initiator. */
const MAX_SCANS = 20;
/** Recent runs a workflow's numbers are computed from. */
const STATS_WINDOW = 100;
/** Jobs of each state the queue page lists. */
const QUEUE_JOBS = 20;
/** Largest console form (a bulk confirmation lists the run ids it acts on). */
const MAX_FORM_BYTES = 1024 * 1024;

const page = (description: string) => ({ description, schema: z.string(), media: 'text/html' as const });
const RUN_ID = z.object({ id: z.string().describe('Run id') });
const form = {
  media: 'form' as const,
  required: true,
  schema: z.record(z.string(), z.string()),
  description: 'The form, with the session’s form token `_csrf`.',
};

type Context = RouteContext<unknown, unknown, unknown>;

/** Routes of the operator console, and of a run's event stream. @internal */
export const CONSOLE_ROUTES = [
  ...EVENT_ROUTES,
  defineRoute({
    method: 'GET',
    path: '/console',
    name: 'console.home',
    summary: 'The operator console',
    description: 'Sends the browser to the runs page of the console.',
    responses: { 303: { description: 'To `/console/runs`.', headers: { Location: 'The runs page.' } } },
    problems: [],
    action: async (context) =>
      answerPage(context, async () => {
        // The console is for who may read runs: refused here as the runs page would be.
        await context.engine.listRuns({ limit: 1 });
        return seeOther(`${context.options.basePath}/console/runs`);
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/console.js',
    name: 'console.script',
    public: true,
    summary: "The console's script",
    description:
      'The script that keeps a run’s page live (it listens to `GET /runs/{id}/events`). The same for everyone: it holds no data.',
    responses: { 200: { description: 'The script.', schema: z.string(), media: 'text/javascript' } },
    problems: [],
    action: async () =>
      new Response(CONSOLE_SCRIPT, {
        headers: {
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'no-cache',
          'x-content-type-options': 'nosniff',
        },
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/runs',
    name: 'console.runs',
    summary: 'Console: runs',
    description:
      'Runs newest first, filtered by workflow, status, initiator (a principal id) and start time (`since` included, `until` not), 50 a page (`after`), with the latest 1,000 runs (of the workflow, in the time window) counted by status. Needs `runs.read` (or `runs.read_own`: the principal’s own runs).',
    query: z.strictObject({
      workflow: z.string().optional(),
      status: z.string().optional(),
      initiator: z.string().optional(),
      since: z.string().optional(),
      until: z.string().optional(),
      after: z.string().optional(),
      acted: z
        .enum(['cancel', 'retry'])
        .optional()
        .describe('A bulk action just done (with `done` and `of`).'),
      done: z
        .string()
        .regex(/^\d{1,6}$/)
        .optional(),
      of: z
        .string()
        .regex(/^\d{1,6}$/)
        .optional(),
    }),
    responses: { 200: page('The runs page.') },
    problems: [],
    action: async (context) => answerPage(context, () => runsPage(context, context.query())),
  }),
  defineRoute({
    method: 'POST',
    path: '/console/runs/bulk',
    name: 'console.bulk',
    summary: 'Console: cancel or retry runs by filter',
    description:
      'The bulk form: `action` (`cancel` or `retry`), `workflow`, `status`, `started_after`, `started_before`. Without `confirm` it answers a page with how many runs match (a dry run, nothing done) and a form to go on; with `confirm` and `runs` (the ids the dry run counted) it acts on exactly those and sends the browser to the runs page. Needs `runs.cancel` or `runs.retry`.',
    body: form,
    responses: {
      200: page('How many runs the action would touch, and the form that does it.'),
      303: { description: 'Done: to the runs page.', headers: { Location: 'The runs page.' } },
      400: page('What is wrong with the form.'),
    },
    problems: [403, 413, 415],
    action: async (context) => answerPage(context, () => bulkAction(context)),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/runs/{id}',
    name: 'console.run',
    summary: 'Console: a run',
    description:
      'A run: its timeline, its workflow’s graph, its steps with attempts, outputs, errors and waits, its input and output, and the buttons to cancel or retry it. Live with the console’s script. Needs what `GET /runs/{id}` needs.',
    params: RUN_ID,
    responses: { 200: page('The run page.') },
    problems: [404],
    action: async (context) => answerPage(context, () => runPage(context, context.params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/console/runs/{id}/cancel',
    name: 'console.cancel',
    summary: 'Console: cancel a run',
    description: 'The cancel button of a run’s page. Answers 303 back to the page. Needs `runs.cancel`.',
    params: RUN_ID,
    body: form,
    responses: { 303: { description: 'Back to the run’s page.', headers: { Location: 'The run’s page.' } } },
    problems: [403, 404, 409, 413, 415],
    action: async (context) =>
      answerPage(context, async () => {
        const values = await checkedForm(context);
        if (values instanceof Response) return values;
        await context.engine.cancel(context.params.id);
        return seeOther(`${context.options.basePath}/console/runs/${encodeURIComponent(context.params.id)}`);
      }),
  }),
  defineRoute({
    method: 'POST',
    path: '/console/runs/{id}/retry',
    name: 'console.retry',
    summary: 'Console: retry a run',
    description:
      'The retry form of a run’s page: `from_step` (empty: the step it failed at, else the first) and `input` (JSON, empty to keep the old input). Answers 303 to the new run’s page, or the run’s page again (422) saying what is wrong. Needs `runs.retry`.',
    params: RUN_ID,
    body: form,
    responses: {
      303: { description: 'To the new run’s page.', headers: { Location: 'The new run’s page.' } },
      422: page('The run’s page again, saying what is wrong.'),
    },
    problems: [403, 404, 409, 413, 415],
    action: async (context) => answerPage(context, () => retryAction(context)),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/workflows',
    name: 'console.workflows',
    summary: 'Console: workflows',
    description: `Every workflow with its latest ${STATS_WINDOW} runs’ success rate and p50 and p95 durations. Needs \`definitions.read\` and \`runs.read\` (or \`runs.read_own\`).`,
    responses: { 200: page('The workflows page.') },
    problems: [],
    action: async (context) =>
      answerPage(context, async () => {
        const workflows = await context.engine.workflows.list();
        const rows = await Promise.all(
          workflows.map(async (workflow) => ({
            workflow,
            stats: statsOf(await recentRuns(context.engine, workflow.name)),
          })),
        );
        return pageAnswer(200, renderWorkflows(frameOf(context), rows, STATS_WINDOW));
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/workflows/{name}',
    name: 'console.workflow',
    summary: 'Console: a workflow',
    description:
      'A workflow’s graph, its recent runs and their numbers. Needs `definitions.read` and `runs.read` (or `runs.read_own`).',
    params: z.object({ name: z.string().describe('Workflow name') }),
    responses: { 200: page('The workflow page.') },
    problems: [404],
    action: async (context) =>
      answerPage(context, async () => {
        const workflow = await context.engine.workflows.get(context.params.name);
        const runs = await recentRuns(context.engine, workflow.name);
        return pageAnswer(
          200,
          renderWorkflow(frameOf(context), workflow, workflowGraphSvg(workflow), runs, statsOf(runs)),
        );
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/approvals',
    name: 'console.approvals',
    summary: 'Console: approvals',
    description:
      'The approvals waiting for the principal’s decision, linking to their pages. Needs `runs.read` (or `runs.read_own`), as every page of the console; the inbox at `/approvals` needs nothing more than being an assignee.',
    responses: { 200: page('The approvals page.') },
    problems: [],
    action: async (context) =>
      answerPage(context, async () => {
        await context.engine.listRuns({ limit: 1 });
        return pageAnswer(200, renderApprovals(frameOf(context), await context.engine.approvals.list()));
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/triggers',
    name: 'console.triggers',
    summary: 'Console: triggers',
    description: 'Every trigger, with when a schedule fires next. Needs `definitions.read`.',
    responses: { 200: page('The triggers page.') },
    problems: [],
    action: async (context) =>
      answerPage(context, async () => {
        const now = new Date();
        const rows = (await context.engine.triggers.list()).map((trigger) => {
          if (trigger.type !== 'schedule') return { trigger };
          let next: string | null = null;
          try {
            next = scheduleOf(trigger).nextRun(now)?.toISOString() ?? null;
          } catch {
            // A stored cron is always valid; a bad one has no next slot.
          }
          return { trigger, next };
        });
        return pageAnswer(200, renderTriggers(frameOf(context), rows));
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/queue',
    name: 'console.queue',
    summary: 'Console: the durable queue',
    description:
      'The jobs of the durable queue that wait, run or failed, by count and the latest of each, limited to runs the principal may read; without a queue, the page says so. Needs `runs.read` (or `runs.read_own`).',
    responses: { 200: page('The queue page.') },
    problems: [],
    action: async (context) => answerPage(context, () => queuePage(context)),
  }),
  defineRoute({
    method: 'GET',
    path: '/console/audit',
    name: 'console.audit',
    summary: 'Console: the audit log',
    description:
      'The audit log oldest first, 100 entries a page (`after`), filtered by `action`, `principal` (id) and `resource`. Needs `audit.read`.',
    query: z.strictObject({
      action: z.string().optional(),
      principal: z.string().optional(),
      resource: z.string().optional(),
      after: z.string().optional(),
    }),
    responses: { 200: page('The audit page.') },
    problems: [400],
    action: async (context) =>
      answerPage(context, async () => {
        const query = context.query();
        const filters: Record<string, string> = {};
        for (const key of ['action', 'principal', 'resource'] as const)
          if (query[key]) filters[key] = query[key];
        const entries = await context.engine.audit.list({
          ...filters,
          ...(query.after ? { after: query.after } : {}),
          limit: 100,
        });
        return pageAnswer(200, renderAudit(frameOf(context), entries, filters));
      }),
  }),
] as const;

/** Names of the console's pages: a browser without credentials is sent to sign in. @internal */
export const CONSOLE_PAGES: readonly string[] = CONSOLE_ROUTES.filter(
  (route) => route.method === 'GET' && route.name.startsWith('console.') && route.name !== 'console.script',
).map((route) => route.name);

/** The runs page: a page of runs that match, and the counts by status. */
async function runsPage(
  context: RouteContext<unknown, unknown, unknown>,
  query: RunFilters & {
    after?: string | undefined;
    acted?: 'cancel' | 'retry' | undefined;
    done?: string | undefined;
    of?: string | undefined;
  },
): Promise<Response> {
  const engine = context.engine;
  const filters: RunFilters = {};
  for (const key of ['workflow', 'status', 'initiator', 'since', 'until'] as const) {
    const value = query[key]?.trim();
    if (value) filters[key] = value;
  }
  const problems: string[] = [];
  if (filters.status && !(RUN_STATUSES as readonly string[]).includes(filters.status)) {
    problems.push(`status must be one of ${RUN_STATUSES.join(', ')}`);
    delete filters.status;
  }
  const since = timeOf(filters.since, 'since', problems);
  const until = timeOf(filters.until, 'until', problems);
  const status = filters.status as RunSummary['status'] | undefined;
  // The storage reads only the runs of the workflow, status and time window, on an index.
  const scope = {
    ...(filters.workflow ? { workflow: filters.workflow } : {}),
    ...(since === undefined ? {} : { started_after: since }),
    ...(until === undefined ? {} : { started_before: until }),
  };
  const matches = (run: RunSummary) =>
    filters.initiator === undefined ||
    (run.initiator?.id ?? 'host') === filters.initiator ||
    (run.initiator !== undefined && `${run.initiator.kind}:${run.initiator.id}` === filters.initiator);
  const runs: RunSummary[] = [];
  let after = query.after || undefined;
  let next: string | undefined;
  for (let scan = 0; scan < MAX_SCANS; scan++) {
    const batch = await engine.listRuns({
      ...scope,
      ...(status ? { status } : {}),
      limit: PAGE_SIZE,
      ...(after ? { after } : {}),
    });
    runs.push(...batch.runs.filter(matches));
    next = batch.next;
    // Only the initiator is filtered here: without it, one read fills the page.
    if (!next || runs.length >= PAGE_SIZE) break;
    after = next;
  }
  // One read on an index: the latest runs (of the workflow, in the window), counted by status.
  const counts: Record<string, number> = {};
  const latest = await engine.listRuns({ ...scope, limit: COUNT_LIMIT });
  for (const run of latest.runs.filter(matches)) counts[run.status] = (counts[run.status] ?? 0) + 1;
  const workflows = await engine.workflows
    .list()
    .then((list) => list.map((w) => w.name))
    .catch((error: unknown) => {
      if (isForbiddenError(error)) return [];
      throw error;
    });
  const frame = frameOf(context);
  const notices: string[] = [];
  if (query.acted && query.done !== undefined && query.of !== undefined)
    notices.push(
      `${query.acted === 'cancel' ? 'Cancelled' : 'Retried'} ${query.done} of the ${query.of} runs counted.`,
    );
  if (problems.length) notices.push(`Not used: ${problems.join('; ')}.`);
  const notice = notices.length ? notices.join(' ') : undefined;
  return pageAnswer(
    200,
    renderRuns(frame, { runs, filters, next, counts, countLimit: COUNT_LIMIT, workflows, notice }),
  );
}

/** A time of a filter as an ISO date-time, or undefined (with a problem noted when it is no time). */
function timeOf(text: string | undefined, name: string, problems: string[]): string | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  // Runs start within years 1 to 9999 (what JSON and Postgres times both hold).
  const iso = Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
  if (iso === undefined || !/^(?!0000)\d{4}-/.test(iso)) {
    problems.push(`${name} must be a date or date-time such as 2026-01-31T09:00Z`);
    return undefined;
  }
  return iso;
}

/** The page of a run. */
async function runPage(context: Context, id: string, notice?: string, status = 200): Promise<Response> {
  const record = await context.engine.getRun(id);
  const graph = await context.engine.workflows.get(record.workflow).then(
    (workflow) => ({ svg: workflowGraphSvg(workflow, { run: record }) }),
    (error: unknown) => {
      if (error instanceof NotFoundError)
        return { missing: `The workflow "${record.workflow}" no longer exists.` };
      if (isForbiddenError(error)) return { missing: 'Reading workflow definitions needs definitions.read.' };
      throw error;
    },
  );
  return pageAnswer(
    status,
    renderRun(frameOf(context), {
      record,
      timeline: runTimelineSvg(record, { now: Date.now() }),
      graph,
      notice,
    }),
  );
}

/** The queue page: its jobs, of runs the principal may read. */
async function queuePage(context: Context): Promise<Response> {
  // Reading runs is what the page needs: refused here as the runs list is.
  await context.engine.listRuns({ limit: 1 });
  const queue = context.host.options.queue;
  const frame = frameOf(context);
  if (!queue?.available)
    return pageAnswer(
      200,
      renderQueue(frame, {
        none: 'This engine has no durable queue: each run executes in the process that started it, and the runs page lists them.',
      }),
    );
  if (!isInspectable(queue))
    return pageAnswer(
      200,
      renderQueue(frame, { none: 'This engine’s queue does not let its jobs be listed.' }),
    );
  const jobs = await queue.jobs(QUEUE_JOBS);
  const visible = new Map<string, boolean>();
  for (const run of new Set(jobs.jobs.map((j) => j.job.run)))
    visible.set(
      run,
      await context.engine.getRun(run).then(
        () => true,
        () => false,
      ),
    );
  return pageAnswer(
    200,
    renderQueue(frame, { ...jobs, jobs: jobs.jobs.filter((j) => visible.get(j.job.run)) }),
  );
}

/** The latest runs of a workflow that the principal may read. */
async function recentRuns(engine: RouteEngine, workflow: string): Promise<RunSummary[]> {
  return (await engine.listRuns({ workflow, limit: STATS_WINDOW })).runs;
}

/** The form of a request, its session's token checked; or the answer refusing it. */
async function checkedForm(context: Context): Promise<Record<string, string> | Response> {
  const values = await readForm(context.request, MAX_FORM_BYTES);
  if (values instanceof Response) return values;
  const session = context.identity.session;
  if (session && values['_csrf'] !== session.csrf)
    return pageAnswer(
      403,
      renderMessagePage(
        'Forbidden',
        'This form is not one this server gave you; open the page again and send it from there.',
      ),
    );
  delete values['_csrf'];
  return values;
}

/** Retries a run from the form of its page. */
async function retryAction(context: RouteContext<{ id: string }, unknown, unknown>): Promise<Response> {
  const values = await checkedForm(context);
  if (values instanceof Response) return values;
  const engine = context.engine;
  const id = context.params.id;
  const options: { from_step?: string; input?: unknown } = {};
  if (values['from_step']) options.from_step = values['from_step'];
  const input = values['input']?.trim();
  if (input) {
    try {
      options.input = JSON.parse(input);
    } catch {
      return runPage(
        context,
        id,
        'The new input is not JSON: fix it, or leave it empty to keep the old input.',
        422,
      );
    }
  }
  try {
    const handle = await engine.retry(id, options);
    return seeOther(`${context.options.basePath}/console/runs/${encodeURIComponent(handle.id)}`);
  } catch (error) {
    if (error instanceof ValidationError)
      return runPage(context, id, `Not retried: ${error.issues.map((i) => i.message).join('; ')}`, 422);
    if (error instanceof StepwireError && error.code === 'conflict')
      return runPage(context, id, `Not retried: ${error.message}`, 409);
    throw error;
  }
}

/** The bulk form: a dry run first (how many, which), then the action on exactly those runs. */
async function bulkAction(context: Context): Promise<Response> {
  const values = await checkedForm(context);
  if (values instanceof Response) return values;
  const engine = context.engine;
  const frame = frameOf(context);
  const action = values['action'];
  if (action !== 'cancel' && action !== 'retry')
    return pageAnswer(400, badForm(frame, 'Choose Cancel or Retry.'));
  const filter: Record<string, string> = {};
  for (const key of ['workflow', 'status', 'started_after', 'started_before', 'initiator'])
    if (values[key]?.trim()) filter[key] = values[key].trim();
  for (const key of ['started_after', 'started_before'])
    if (filter[key] !== undefined) {
      const ms = Date.parse(filter[key]);
      if (Number.isNaN(ms)) return pageAnswer(400, badForm(frame, `${key} must be a date or date-time.`));
      filter[key] = new Date(ms).toISOString();
    }
  if (values['confirm'] === undefined) {
    try {
      const counted = await engine.bulk({ action, filter: filter as BulkFilter, dry_run: true });
      return pageAnswer(
        200,
        renderBulkConfirm(frame, { action, filter, count: counted.count, runs: counted.runs }),
      );
    } catch (error) {
      if (error instanceof ValidationError)
        return pageAnswer(400, badForm(frame, error.issues.map((i) => `${i.path}: ${i.message}`).join('; ')));
      throw error;
    }
  }
  const runs = (values['runs'] ?? '').split(',').filter(Boolean);
  const done = await engine.bulk({ action, runs });
  const query = runsQuery(
    { workflow: filter['workflow'], status: action === 'cancel' ? 'cancelled' : undefined },
    { acted: action, done: String(done.done ?? done.count), of: String(done.count) },
  );
  return seeOther(`${context.options.basePath}/console/runs${query}`);
}

function badForm(frame: PageFrame, message: string): string {
  return consolePage(
    frame,
    'Not done',
    `<h1>Not done</h1><p role="alert" class="form-error">${esc(message)}</p>`,
  );
}
