import { backoffDelay } from '../retry/index.js';
import ky, { type KyInstance } from 'ky';
import type { RunEvent, RunRecord, RunSummary } from '../engine/record.js';
import type { RunListQuery } from '../engine/engine.js';
import type { AuditPage, AuditQuery } from '../access/audit.js';
import type { Approval, ApprovalLink, DecisionInput, EventSent } from '../engine/waits/approvals.js';
import type { RetryOptions } from '../engine/retry-run.js';
import type { BulkInput, BulkResult } from '../engine/bulk.js';
import type { AccessPolicy } from '../schema/access.js';
import { eventsOfStream } from './console/events.js';
import type { StoredTrigger } from '../engine/triggers.js';
import type { StoredScript } from '../engine/scripts.js';
import type { VersionPage, VersionQuery } from '../adapters/definition-history.js';
import type {
  Application,
  Entity,
  GetEntityOutput,
  ReadEntityBody,
  Relationship,
  Workflow,
  TriggerBody,
  WorkflowInputBody,
  WriteRowsBody,
} from '../schema/index.js';
import { createCallRoute } from './call-route.js';
import { hexOf } from '../bytes/hex.js';
import { httpUrlOption } from '../adapters/http-url.js';

/** The longest time a timer waits (2^31 - 1 ms, about 24.8 days): ky's longest timeout. */
const MAX_MS = 2_147_483_647;

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Where the API is mounted, e.g. `https://example.com/api`. */
  baseUrl: string | URL;
  /** The fetch function to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Headers sent with every request, e.g. `{ authorization: 'Bearer …' }`. */
  headers?: Record<string, string>;
  /**
   * Retries of idempotent requests (GET, PUT, DELETE) after 408, 429, 5xx or a network error,
   * with exponential backoff; a number is the retry limit. POST is never retried.
   * @default 2
   */
  retry?: number | { limit?: number; backoffLimit?: number };
  /** Time each request may take, in ms (runs: see `runTimeout`). `false` for none. @default 30000 */
  timeout?: number | false;
  /** Time `runWorkflow` may take, in ms; a run may last up to the engine's `runTimeoutMs`. @default 310000 */
  runTimeout?: number | false;
}

/** Options of {@link StepwireClient.runWorkflow}. */
export interface RunWorkflowOptions {
  /**
   * Sent as `Idempotency-Key`: a key this workflow already ran with answers the run it started, so a
   * request sent again (after a timeout, say) never runs the workflow twice.
   */
  idempotencyKey?: string;
}

/** A typed client of the stepwire HTTP API; every method throws `HttpProblemError` on an error answer. */
export interface StepwireClient {
  /** `POST /catalog/entity`: registers an entity. */
  registerEntity(entity: Entity): Promise<Entity>;
  /** `POST /catalog/entities/spreadsheet/register`: registers or replaces an entity. */
  upsertEntity(entity: Entity): Promise<{ entity: Entity; created: boolean }>;
  /** `POST /catalog/entity/relationship`: creates a relationship. */
  createRelationship(relationship: Relationship): Promise<Relationship>;
  /** `GET /catalog/entities`: every entity definition. */
  listEntities(): Promise<Entity[]>;
  /** `GET /catalog/entities/{name}`: one entity definition. */
  getEntityDefinition(name: string): Promise<Entity>;
  /** `POST /catalog/entities/{name}/read`: the get_entity read; data errors come back in `body.error`. */
  readEntity(name: string, body?: ReadEntityBody): Promise<GetEntityOutput>;
  /** `POST /catalog/entities/{name}/rows`: writes rows (append, upsert, update, delete, replace), all or nothing. */
  writeRows(name: string, body: WriteRowsBody): Promise<{ written: number }>;
  /** `POST /workflows`: creates a workflow. */
  createWorkflow(workflow: WorkflowInputBody): Promise<Workflow>;
  /** `PUT /workflows/{name}`: creates or replaces a workflow (named by `workflow.name`). */
  replaceWorkflow(workflow: WorkflowInputBody): Promise<{ workflow: Workflow; created: boolean }>;
  /** `GET /workflows/{name}`. */
  getWorkflow(name: string): Promise<Workflow>;
  /** `GET /workflows`. */
  listWorkflows(): Promise<Workflow[]>;
  /** `DELETE /workflows/{name}`. */
  deleteWorkflow(name: string): Promise<void>;
  /**
   * `POST /workflows/{name}/runs`: runs a workflow and waits for its end; the record says whether it
   * succeeded. Giving up (a timeout) never cancels the run: {@link StepwireClient.cancelRun} does.
   */
  runWorkflow(name: string, input?: unknown, options?: RunWorkflowOptions): Promise<RunRecord>;
  /**
   * `POST /workflows/{name}/runs` with `Prefer: respond-async`: starts a workflow and resolves at once
   * with its run id (`replayed` when the idempotency key was used before: the run it started). Read
   * the run with {@link StepwireClient.getRun}.
   * @example
   * ```ts
   * const { run_id } = await client.startRun('invoice', { customer_id: 1 }, { idempotencyKey: 'order-7' });
   * const record = await client.getRun(run_id);
   * ```
   */
  startRun(
    name: string,
    input?: unknown,
    options?: RunWorkflowOptions,
  ): Promise<{ run_id: string; replayed: boolean }>;
  /** `GET /runs/{id}`. */
  getRun(id: string): Promise<RunRecord>;
  /** `POST /runs/{id}/cancel`: cancels a run; `cancelled` is false when it had already ended. */
  cancelRun(id: string): Promise<{ cancelled: boolean }>;
  /** `GET /workflows/{name}/graph.svg`: the workflow as an SVG picture. */
  workflowGraph(name: string): Promise<string>;
  /** `GET /runs/{id}/timeline.svg`: the run as an SVG timeline. */
  runTimeline(id: string): Promise<string>;
  /** `GET /runs/{id}/page`: the HTML page of a run (its timeline, graph and record). */
  runPage(id: string): Promise<string>;
  /**
   * `GET /runs`: runs newest first as summaries (no input, output or steps: {@link StepwireClient.getRun}
   * reads a whole record), a page at a time (`next` goes back as `after`).
   */
  listRuns(query?: RunListQuery): Promise<{ runs: RunSummary[]; next?: string | undefined }>;
  /** `GET /access`: the stored access policy (404 when none is stored). */
  getAccess(): Promise<AccessPolicy>;
  /** `PUT /access`: checks the access policy against the catalog and stores it. */
  putAccess(policy: AccessPolicy): Promise<AccessPolicy>;
  /** The audit log (needs `audit.read`). */
  audit: {
    /**
     * `GET /audit`: entries oldest first (in append order), filtered by `action`, `principal` (id) and
     * `resource`, a page at a time (`next` goes back as `after`).
     */
    list(query?: AuditQuery): Promise<AuditPage>;
  };
  /** `PUT /scripts/{name}`: stores a transform script's source. */
  putScript(name: string, source: string): Promise<{ name: string; created: boolean }>;
  /** `GET /scripts/{name}`: a script's source. */
  getScript(name: string): Promise<string>;
  /** `GET /scripts`: every script name. */
  listScripts(): Promise<string[]>;
  /** `DELETE /scripts/{name}`. */
  deleteScript(name: string): Promise<void>;
  /** `POST /triggers`: creates a trigger. */
  createTrigger(trigger: TriggerBody): Promise<StoredTrigger>;
  /** `GET /triggers`: every trigger (webhook secrets hidden). */
  listTriggers(): Promise<StoredTrigger[]>;
  /** `GET /triggers/{name}`. */
  getTrigger(name: string): Promise<StoredTrigger>;
  /** `DELETE /triggers/{name}`. */
  deleteTrigger(name: string): Promise<void>;
  /**
   * `POST /hooks/{name}`: calls a webhook trigger with a JSON body, signed with `secret` when given;
   * resolves with the run it started (`replayed` when the idempotency key was used before).
   */
  callHook(
    name: string,
    body?: Record<string, unknown>,
    options?: { secret?: string; idempotencyKey?: string },
  ): Promise<{ run_id: string; replayed: boolean }>;
  /** `PUT /applications/{name}`: stores an application config. */
  putApplication(name: string, config: Application): Promise<{ application: Application; created: boolean }>;
  /** `GET /applications/{name}`. */
  getApplication(name: string): Promise<Application>;
  /** `GET /applications`: every application name. */
  listApplications(): Promise<string[]>;
  /** `DELETE /applications/{name}`. */
  deleteApplication(name: string): Promise<void>;
  /**
   * `GET /workflows/{name}/versions`: the versions of a workflow, oldest first, a page at a time
   * (`next` goes back as `after`); each with when, who (when known), the action and the definition.
   */
  workflowVersions(name: string, query?: VersionQuery): Promise<VersionPage<Workflow>>;
  /** `GET /scripts/{name}/versions`: the versions of a script, as {@link StepwireClient.workflowVersions}. */
  scriptVersions(name: string, query?: VersionQuery): Promise<VersionPage<StoredScript>>;
  /** `GET /applications/{name}/versions`: the versions of an application config. */
  applicationVersions(name: string, query?: VersionQuery): Promise<VersionPage<Application>>;
  /** `GET /triggers/{name}/versions`: the versions of a trigger. */
  triggerVersions(name: string, query?: VersionQuery): Promise<VersionPage<StoredTrigger>>;
  /** `GET /catalog/entities/{name}/versions`: the versions of an entity definition. */
  entityVersions(name: string, query?: VersionQuery): Promise<VersionPage<Entity>>;
  /** `GET /applications/{name}/screens/{url}`: the screen as HTML. */
  renderScreen(name: string, url: string, query?: Record<string, string>): Promise<string>;
  /**
   * `GET /applications/{name}/screens/{url}/grids/{grid}/export`: the CSV of a grid's view (the
   * `query` as the screen's: `<grid>_q`, `<grid>_sort`, `<grid>_dir`, filter values).
   */
  exportGrid(name: string, url: string, grid: string, query?: Record<string, string>): Promise<string>;
  /** Approvals of `wait` steps, as the caller may see and decide them. */
  approvals: {
    /** `GET /approvals`: those waiting for the caller's decision, oldest first. */
    list(): Promise<Approval[]>;
    /** `GET /approvals/{id}`. */
    get(id: string): Promise<Approval>;
    /** `POST /approvals/{id}/decision`: approve or reject; the run goes on once the wait ends. */
    decide(id: string, decision: DecisionInput): Promise<Approval>;
    /** `POST /approvals/{id}/link`: a single-use link for an outside approver. */
    link(
      id: string,
      input: { email: string; expires?: string },
    ): Promise<ApprovalLink & { url?: string | undefined }>;
  };
  /** `POST /runs/{id}/retry`: a new run that keeps the steps before `from_step`; resolves to its id. */
  retryRun(id: string, options?: RetryOptions): Promise<{ run_id: string; retry_of: string }>;
  /** `POST /runs/bulk`: cancels or retries the runs a filter selects (`dry_run` only counts). */
  bulkRuns(input: BulkInput): Promise<BulkResult>;
  /**
   * `GET /runs/{id}/events`: the run's events in order (those after `after`, a place in its log), read
   * from its event stream once the run has ended. For events as they come, open the stream with an
   * `EventSource`.
   */
  runEvents(id: string, options?: { after?: number }): Promise<RunEvent[]>;
  /** `POST /events/{event}`: ends the waits for the event whose `match` the payload has. */
  sendEvent(event: string, payload?: unknown): Promise<EventSent>;
  /** `GET /openapi.json`: the OpenAPI document. */
  openapi(): Promise<Record<string, unknown>>;
}

/** The statuses `isRetryableStatus` accepts, as the list ky needs: 408, 429 and the 5xx servers send. */
const RETRY_STATUS = [408, 429, 500, 502, 503, 504];

/**
 * A typed client of the stepwire HTTP API, built on ky.
 * @example
 * ```ts
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8787' });
 * const run = await client.runWorkflow('invoice', { customer_id: 1 });
 * ```
 */
export function createClient(options: ClientOptions): StepwireClient {
  if (typeof options !== 'object' || options === null || !options.baseUrl)
    throw new TypeError('createClient needs { baseUrl }');
  // A relative baseUrl (`/api`) is read against the page's address in a browser.
  const page = (globalThis as { location?: { href?: unknown } }).location?.href;
  const baseUrl = httpUrlOption('createClient: baseUrl', options.baseUrl, {
    base: typeof page === 'string' ? page : undefined,
  });
  for (const name of ['timeout', 'runTimeout'] as const) {
    const value = options[name];
    if (
      value !== undefined &&
      value !== false &&
      !(typeof value === 'number' && value > 0 && value <= MAX_MS)
    )
      throw new TypeError(
        `createClient: ${name} must be a number of ms from 1 to ${MAX_MS}, or false for none (got ${String(value)})`,
      );
  }
  const retry = typeof options.retry === 'number' ? { limit: options.retry } : (options.retry ?? {});
  if (retry.limit !== undefined && !(Number.isInteger(retry.limit) && retry.limit >= 0))
    throw new TypeError(
      `createClient: retry must be a whole number of retries, 0 or more (got ${String(retry.limit)})`,
    );
  const api: KyInstance = ky.create({
    prefixUrl: baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    timeout: options.timeout ?? 30_000,
    retry: {
      limit: retry.limit ?? 2,
      methods: ['get', 'put', 'delete'],
      statusCodes: RETRY_STATUS,
      afterStatusCodes: [429, 503],
      // ky sends these requests, so ky's retry runs, waiting as every other retry of stepwire waits.
      delay: (attempt) =>
        backoffDelay(attempt, { attempts: Infinity, baseMs: 300, capMs: retry.backoffLimit ?? 30_000 }),
      ...(retry.backoffLimit !== undefined ? { backoffLimit: retry.backoffLimit } : {}),
    },
  });
  const runTimeout = options.runTimeout ?? 310_000;
  const call = createCallRoute(api);
  const value = async <T>(answer: Promise<{ value: T }>): Promise<T> => (await answer).value;
  const created = async <T>(answer: Promise<{ value: T; status: number }>) => {
    const { value, status } = await answer;
    return { value, created: status === 201 };
  };

  return {
    registerEntity: (entity) => value(call('catalog.registerEntity', { body: entity })),
    upsertEntity: async (entity) => {
      const answer = await created(call('catalog.upsertEntity', { body: entity }));
      return { entity: answer.value, created: answer.created };
    },
    createRelationship: (relationship) => value(call('catalog.createRelationship', { body: relationship })),
    listEntities: () => value(call('catalog.listEntities', {})),
    getEntityDefinition: (name) => value(call('catalog.getEntityDefinition', { params: { name } })),
    readEntity: (name, body = {}) => value(call('catalog.readEntity', { params: { name }, body })),
    writeRows: (name, body) => value(call('catalog.writeRows', { params: { name }, body })),
    createWorkflow: (workflow) => value(call('workflows.create', { body: workflow })),
    replaceWorkflow: async (workflow) => {
      const request = { params: { name: workflow.name }, body: workflow };
      const answer = await created(call('workflows.replace', request));
      return { workflow: answer.value, created: answer.created };
    },
    getWorkflow: (name) => value(call('workflows.get', { params: { name } })),
    listWorkflows: () => value(call('workflows.list', {})),
    deleteWorkflow: (name) => value(call('workflows.delete', { params: { name } })),
    runWorkflow: async (name, input, { idempotencyKey } = {}) => {
      const answer = await call(
        'workflows.run',
        { params: { name }, body: input ?? {} },
        {
          timeout: runTimeout,
          ...(idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': idempotencyKey } }),
        },
      );
      // Without `Prefer: respond-async` the answer waits: its body is the run record.
      return answer.value as RunRecord;
    },
    startRun: async (name, input, { idempotencyKey } = {}) => {
      const headers: Record<string, string> = { prefer: 'respond-async' };
      if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
      const answer = await call('workflows.run', { params: { name }, body: input ?? {} }, { headers });
      const { run_id } = answer.value as { run_id: string };
      return { run_id, replayed: answer.status === 200 };
    },
    getRun: (id) => value(call('runs.get', { params: { id } })),
    cancelRun: (id) => value(call('runs.cancel', { params: { id } })),
    listRuns: ({ limit, ...query } = {}) =>
      value(
        call('runs.list', { query: { ...query, ...(limit === undefined ? {} : { limit: String(limit) }) } }),
      ),
    getAccess: async () => (await value(call('access.get', {}))) as AccessPolicy,
    putAccess: async (policy) => (await value(call('access.put', { body: policy }))) as AccessPolicy,
    audit: {
      // JSON holds no `undefined`: an absent `detail` or `next` is absent, as AuditPage says.
      list: async ({ limit, ...query } = {}) =>
        (await value(
          call('audit.list', {
            query: { ...query, ...(limit === undefined ? {} : { limit: String(limit) }) },
          }),
        )) as AuditPage,
    },
    workflowGraph: (name) => value(call('workflows.graph', { params: { name } })),
    runTimeline: (id) => value(call('runs.timeline', { params: { id } })),
    runPage: (id) => value(call('runs.page', { params: { id } })),
    putScript: async (name, source) => {
      const answer = await created(call('scripts.put', { params: { name }, body: source }));
      return { name: answer.value.name, created: answer.created };
    },
    getScript: (name) => value(call('scripts.get', { params: { name } })),
    listScripts: () => value(call('scripts.list', {})),
    deleteScript: (name) => value(call('scripts.delete', { params: { name } })),
    createTrigger: (trigger) => value(call('triggers.create', { body: trigger })),
    listTriggers: () => value(call('triggers.list', {})),
    getTrigger: (name) => value(call('triggers.get', { params: { name } })),
    deleteTrigger: (name) => value(call('triggers.delete', { params: { name } })),
    callHook: async (name, body = {}, { secret, idempotencyKey } = {}) => {
      const headers: Record<string, string> = {};
      if (secret !== undefined)
        headers['x-stepwire-signature'] = await signBody(secret, JSON.stringify(body));
      if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
      const answer = await call('hooks.call', { params: { name }, body }, { headers });
      return { run_id: answer.value.run_id, replayed: answer.status === 200 };
    },
    putApplication: async (name, config) => {
      const answer = await created(call('applications.put', { params: { name }, body: config }));
      return { application: answer.value, created: answer.created };
    },
    getApplication: (name) => value(call('applications.get', { params: { name } })),
    listApplications: () => value(call('applications.list', {})),
    deleteApplication: (name) => value(call('applications.delete', { params: { name } })),
    workflowVersions: (name, query) =>
      value(call('workflows.versions', { params: { name }, query: pageQuery(query) })),
    scriptVersions: (name, query) =>
      value(call('scripts.versions', { params: { name }, query: pageQuery(query) })),
    applicationVersions: (name, query) =>
      value(call('applications.versions', { params: { name }, query: pageQuery(query) })),
    triggerVersions: (name, query) =>
      value(call('triggers.versions', { params: { name }, query: pageQuery(query) })),
    entityVersions: (name, query) =>
      value(call('catalog.entityVersions', { params: { name }, query: pageQuery(query) })),
    renderScreen: (name, url, query) =>
      value(call('applications.renderScreen', { params: { name, url }, ...(query ? { query } : {}) })),
    exportGrid: (name, url, grid, query) =>
      value(call('applications.exportGrid', { params: { name, url, grid }, ...(query ? { query } : {}) })),
    openapi: () => value(call('openapi', {})),
    approvals: {
      list: async () => (await value(call('approvals.list', {}))) as Approval[],
      get: async (id) => (await value(call('approvals.get', { params: { id } }))) as Approval,
      decide: async (id, decision) =>
        (await value(call('approvals.decide', { params: { id }, body: decision }))) as Approval,
      link: async (id, input) => value(call('approvals.link', { params: { id }, body: input })),
    },
    retryRun: (id, options = {}) => value(call('runs.retry', { params: { id }, body: options })),
    bulkRuns: async (input) => (await value(call('runs.bulk', { body: input }))) as BulkResult,
    runEvents: async (id, { after } = {}) =>
      eventsOfStream(
        await value(
          call(
            'runs.events',
            { params: { id }, query: after === undefined ? {} : { after: String(after) } },
            { timeout: runTimeout },
          ),
        ),
      ),
    sendEvent: (event, payload) => value(call('events.send', { params: { event }, body: payload ?? {} })),
  };
}

/** A page query as query parameters: numbers as decimal text, absent ones left out. */
function pageQuery({ after, limit }: VersionQuery = {}): Record<string, string> {
  return {
    ...(after === undefined ? {} : { after: String(after) }),
    ...(limit === undefined ? {} : { limit: String(limit) }),
  };
}

/** `sha256=<hex HMAC-SHA256>` of a JSON body, as a signed webhook call carries it. */
async function signBody(secret: string, text: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(text)));
  return `sha256=${hexOf(mac)}`;
}
