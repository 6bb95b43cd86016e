import ky, { HTTPError, type KyInstance, type Options as KyOptions } from 'ky';
import type { RunRecord } from '../engine/record.js';
import type {
  Application,
  Entity,
  GetEntityOutput,
  ReadEntityBody,
  Relationship,
  Workflow,
  WorkflowInputBody,
} from '../schema/index.js';
import { problemErrorFrom } from './client-error.js';

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
  /** `POST /workflows/{name}/runs`: runs a workflow; the record says whether it succeeded. */
  runWorkflow(name: string, input?: unknown): Promise<RunRecord>;
  /** `GET /runs/{id}`. */
  getRun(id: string): Promise<RunRecord>;
  /** `PUT /scripts/{name}`: stores a transform script's source. */
  putScript(name: string, source: string): Promise<{ name: string; created: boolean }>;
  /** `GET /scripts/{name}`: a script's source. */
  getScript(name: string): Promise<string>;
  /** `GET /scripts`: every script name. */
  listScripts(): Promise<string[]>;
  /** `DELETE /scripts/{name}`. */
  deleteScript(name: string): Promise<void>;
  /** `PUT /applications/{name}`: stores an application config. */
  putApplication(name: string, config: Application): Promise<{ application: Application; created: boolean }>;
  /** `GET /applications/{name}`. */
  getApplication(name: string): Promise<Application>;
  /** `GET /applications`: every application name. */
  listApplications(): Promise<string[]>;
  /** `DELETE /applications/{name}`. */
  deleteApplication(name: string): Promise<void>;
  /** `GET /applications/{name}/screens/{url}`: the screen as HTML. */
  renderScreen(name: string, url: string, query?: Record<string, string>): Promise<string>;
  /** `GET /openapi.json`: the OpenAPI document. */
  openapi(): Promise<Record<string, unknown>>;
}

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
  const retry = typeof options.retry === 'number' ? { limit: options.retry } : (options.retry ?? {});
  const api: KyInstance = ky.create({
    prefixUrl: String(options.baseUrl),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    timeout: options.timeout ?? 30_000,
    retry: {
      limit: retry.limit ?? 2,
      methods: ['get', 'put', 'delete'],
      statusCodes: RETRY_STATUS,
      afterStatusCodes: [429, 503],
      ...(retry.backoffLimit !== undefined ? { backoffLimit: retry.backoffLimit } : {}),
    },
  });
  const runTimeout = options.runTimeout ?? 310_000;

  async function send(method: string, path: string, init: KyOptions = {}): Promise<Response> {
    try {
      return await api(path, { method, ...init });
    } catch (error) {
      if (error instanceof HTTPError) throw await problemErrorFrom(error.response, error);
      throw error;
    }
  }
  const call = async <T>(method: string, path: string, init?: KyOptions): Promise<T> =>
    (await (await send(method, path, init)).json()) as T;
  const withCreated = async <T>(method: string, path: string, init: KyOptions) => {
    const response = await send(method, path, init);
    return { value: (await response.json()) as T, created: response.status === 201 };
  };
  const e = encodeURIComponent;

  return {
    registerEntity: (entity) => call('POST', 'catalog/entity', { json: entity }),
    upsertEntity: async (entity) => {
      const { value, created } = await withCreated<Entity>('POST', 'catalog/entities/spreadsheet/register', {
        json: entity,
      });
      return { entity: value, created };
    },
    createRelationship: (relationship) => call('POST', 'catalog/entity/relationship', { json: relationship }),
    listEntities: () => call('GET', 'catalog/entities'),
    getEntityDefinition: (name) => call('GET', `catalog/entities/${e(name)}`),
    readEntity: (name, body = {}) => call('POST', `catalog/entities/${e(name)}/read`, { json: body }),
    createWorkflow: (workflow) => call('POST', 'workflows', { json: workflow }),
    replaceWorkflow: async (workflow) => {
      const { value, created } = await withCreated<Workflow>('PUT', `workflows/${e(workflow.name)}`, {
        json: workflow,
      });
      return { workflow: value, created };
    },
    getWorkflow: (name) => call('GET', `workflows/${e(name)}`),
    listWorkflows: () => call('GET', 'workflows'),
    deleteWorkflow: async (name) => void (await send('DELETE', `workflows/${e(name)}`)),
    runWorkflow: (name, input) =>
      call('POST', `workflows/${e(name)}/runs`, { json: input ?? {}, timeout: runTimeout }),
    getRun: (id) => call('GET', `runs/${e(id)}`),
    putScript: async (name, source) => {
      const response = await send('PUT', `scripts/${e(name)}`, {
        body: source,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
      });
      return { name: ((await response.json()) as { name: string }).name, created: response.status === 201 };
    },
    getScript: async (name) => (await send('GET', `scripts/${e(name)}`)).text(),
    listScripts: () => call('GET', 'scripts'),
    deleteScript: async (name) => void (await send('DELETE', `scripts/${e(name)}`)),
    putApplication: async (name, config) => {
      const { value, created } = await withCreated<Application>('PUT', `applications/${e(name)}`, {
        json: config,
      });
      return { application: value, created };
    },
    getApplication: (name) => call('GET', `applications/${e(name)}`),
    listApplications: () => call('GET', 'applications'),
    deleteApplication: async (name) => void (await send('DELETE', `applications/${e(name)}`)),
    renderScreen: async (name, url, query) =>
      (
        await send('GET', `applications/${e(name)}/screens/${e(url)}`, query ? { searchParams: query } : {})
      ).text(),
    openapi: () => call('GET', 'openapi.json'),
  };
}
