/**
 * `engine.as(principal)`: the engine as one principal may use it. Every method checks the
 * principal's grants before it does anything, changes are written to the audit log (denied ones
 * too), and runs started here carry the principal as their initiator.
 * @module
 */
import type { Grants } from '../access/grants.js';
import { forbidden } from '../access/grants.js';
import type { Principal } from '../access/principal.js';
import type { AuditLog, AuditPage, AuditQuery, AuditRecord } from '../access/audit.js';
import type { Catalog } from '../catalog/catalog.js';
import { isForbiddenError, NotFoundError } from '../errors/index.js';
import type { AccessPolicy, Permission } from '../schema/access.js';
import type {
  Application,
  ApplicationBody,
  RunRecord,
  RunSummary,
  Workflow,
  WorkflowBody,
} from '../schema/index.js';
import type { TriggerBody } from '../schema/trigger.js';
import type { AppRuntime } from '../app/runtime.js';
import type { RunPage } from '../adapters/types.js';
import type { StoredScript } from './scripts.js';
import type { StoredTrigger } from './triggers.js';
import type { RunInput, WorkflowRef } from './workflow-ref.js';
import { workflowName } from './workflow-ref.js';
import type { RunOptions } from './run.js';
import type { RunHandle, RunListQuery } from './engine-types.js';
import type { ApiKey, ApiKeyInput, ApiKeys, CreatedApiKey } from '../auth/keys.js';
import type { User, UserInput, Users } from '../auth/users.js';
import type { DefinitionWriteOptions, VersionPage, VersionQuery } from '../adapters/definition-history.js';
import type { WorkflowRegistry } from './workflows.js';
import type { ScriptRegistry } from './scripts.js';
import type { TriggerRegistry } from './triggers.js';
import type { Applications } from '../app/applications.js';
import type { ApprovalsApi, EventSent } from './waits/approvals.js';
import type { RetryOptions } from './retry-run.js';
import { checkBulk, runBulk, type BulkInput, type BulkResult } from './bulk.js';

/** What the view needs of the engine beyond its public methods. @internal */
export interface ViewHost {
  engine: ViewEngine;
  grants(principal: Principal): Promise<Grants>;
  audit: AuditLog;
  /** The catalog as the principal sees it; writes through it are audited. */
  catalog(principal: Principal, audited: boolean): Catalog;
  /** Starts a run with `principal` as its initiator. */
  start(principal: Principal, name: string, input: unknown, options: RunOptions): Promise<RunHandle>;
  /** Runs a workflow to its end with `principal` as its initiator. */
  run(principal: Principal, name: string, input: unknown, options: RunOptions): Promise<RunRecord>;
  /** Retries a run with `principal` as the new run's initiator. */
  retry(principal: Principal, id: string, options: RetryOptions): Promise<RunHandle>;
  /** Opens an application whose grids and forms act as `principal`. */
  openApplication(principal: Principal, name: string): Promise<AppRuntime>;
  /** Approvals as `principal` may see and decide them. */
  approvals(principal: Principal): ApprovalsApi;
  /** Sends an event to the waits for it. */
  sendEvent(event: string, payload: unknown): Promise<EventSent>;
}

/** What the view calls on the engine once a check passed. @internal */
export interface ViewEngine {
  workflows: WorkflowRegistry;
  scripts: ScriptRegistry;
  triggers: TriggerRegistry;
  applications: Applications;
  keys: ApiKeys;
  users: Users;
  access: {
    get(): Promise<AccessPolicy | undefined>;
    put(policy: AccessPolicy, options?: DefinitionWriteOptions): Promise<AccessPolicy>;
  };
  getRun(id: string): Promise<RunRecord>;
  getRunText(id: string): Promise<string>;
  listRuns(query?: RunListQuery): Promise<RunPage<RunSummary>>;
  cancel(id: string): Promise<boolean>;
}

/** The engine as one principal may use it: what `engine.as(principal)` returns. */
export class EngineView {
  /** Who this view acts for. */
  readonly principal: Principal;
  /** Entities, relationships, reads and writes, as the principal sees them. */
  readonly catalog: Catalog;
  /** Workflow definitions: reading needs `definitions.read`, changing `definitions.write`. */
  readonly workflows: {
    create(definition: WorkflowBody): Promise<Workflow>;
    /** The versions a workflow went through, oldest first. */
    versions(name: string, query?: VersionQuery): Promise<VersionPage<Workflow>>;
    put(definition: WorkflowBody): Promise<{ workflow: Workflow; created: boolean }>;
    /** The same as `put`. */
    replace(definition: WorkflowBody): Promise<{ workflow: Workflow; created: boolean }>;
    get(name: string): Promise<Workflow>;
    list(): Promise<Workflow[]>;
    delete(name: string): Promise<boolean>;
  };
  /** Transform scripts: reading needs `definitions.read`, changing `definitions.write`. */
  readonly scripts: {
    put(name: string, source: string): Promise<StoredScript & { created: boolean }>;
    /** The versions a script went through, oldest first. */
    versions(name: string, query?: VersionQuery): Promise<VersionPage<StoredScript>>;
    get(name: string): Promise<string>;
    list(): Promise<string[]>;
    delete(name: string): Promise<boolean>;
  };
  /** Triggers: reading needs `definitions.read`, changing `definitions.write`. */
  readonly triggers: {
    create(definition: TriggerBody): Promise<StoredTrigger>;
    /** The versions a trigger went through, oldest first. */
    versions(name: string, query?: VersionQuery): Promise<VersionPage<StoredTrigger>>;
    get(name: string): Promise<StoredTrigger>;
    list(): Promise<StoredTrigger[]>;
    delete(name: string): Promise<boolean>;
  };
  /** Applications: configs need `definitions.*`; opening one needs `app.use` on it. */
  readonly applications: {
    put(name: string, config: ApplicationBody): Promise<{ application: Application; created: boolean }>;
    /** The versions an application went through, oldest first. */
    versions(name: string, query?: VersionQuery): Promise<VersionPage<Application>>;
    get(name: string): Promise<Application>;
    list(): Promise<string[]>;
    delete(name: string): Promise<boolean>;
    open(name: string): Promise<AppRuntime>;
  };
  /** The access policy: reading needs `definitions.read`, changing it `definitions.write`. */
  readonly access: {
    get(): Promise<AccessPolicy | undefined>;
    put(policy: AccessPolicy): Promise<AccessPolicy>;
  };
  /** The audit log: needs `audit.read`. */
  readonly audit: { list(query?: AuditQuery): Promise<AuditPage> };
  /** API keys: every call needs `keys.manage`; changes are audited. */
  readonly keys: {
    create(input: ApiKeyInput): Promise<CreatedApiKey>;
    list(): Promise<ApiKey[]>;
    revoke(id: string): Promise<boolean>;
  };
  /**
   * Approvals of `wait` steps: those the principal may decide (it is one of their `assignees`),
   * and those of runs it may read. Decisions are audited.
   */
  readonly approvals: ApprovalsApi;
  /** Events for `wait` steps: sending one needs `events.send` (on the event's name); audited. */
  readonly events: { send(event: string, payload?: unknown): Promise<EventSent> };
  /** Users: every call needs `users.manage`; changes are audited (never a password). */
  readonly users: {
    create(input: UserInput): Promise<User>;
    get(id: string): Promise<User | undefined>;
    list(): Promise<User[]>;
    setRoles(id: string, roles: string[]): Promise<User>;
    setPassword(id: string, password: string): Promise<void>;
    disable(id: string): Promise<User>;
  };
  #host: ViewHost;

  /** @internal */
  constructor(host: ViewHost, principal: Principal) {
    this.#host = host;
    this.principal = principal;
    this.catalog = host.catalog(principal, true);
    const engine = host.engine;
    const read = <T>(work: () => Promise<T>) => this.#allowed('definitions.read', undefined, work);
    // Who changes a definition, for its history.
    const by = { by: { id: principal.id, kind: principal.kind } };
    const change = <T>(action: string, resource: string, work: () => Promise<T>) =>
      this.#changed('definitions.write', undefined, action, resource, work);
    this.workflows = {
      create: (definition) =>
        change('definition.create', `workflow:${nameOf(definition)}`, () =>
          engine.workflows.create(definition),
        ),
      put: (definition) =>
        change('definition.put', `workflow:${nameOf(definition)}`, () =>
          engine.workflows.put(definition, by),
        ),
      replace: (definition) =>
        change('definition.put', `workflow:${nameOf(definition)}`, () =>
          engine.workflows.put(definition, by),
        ),
      get: (name) => read(() => engine.workflows.get(name)),
      versions: (name, query) => read(() => engine.workflows.versions(name, query)),
      list: () => read(() => engine.workflows.list()),
      delete: (name) =>
        change('definition.delete', `workflow:${name}`, () => engine.workflows.delete(name, by)),
    };
    this.scripts = {
      put: (name, source) =>
        change('definition.put', `script:${name}`, () => engine.scripts.put(name, source, by)),
      get: (name) => read(() => engine.scripts.get(name)),
      versions: (name, query) => read(() => engine.scripts.versions(name, query)),
      list: () => read(() => engine.scripts.list()),
      delete: (name) => change('definition.delete', `script:${name}`, () => engine.scripts.delete(name, by)),
    };
    this.triggers = {
      create: (definition) =>
        change('definition.create', `trigger:${nameOf(definition)}`, () =>
          engine.triggers.create(definition),
        ),
      get: (name) => read(() => engine.triggers.get(name)),
      versions: (name, query) => read(() => engine.triggers.versions(name, query)),
      list: () => read(() => engine.triggers.list()),
      delete: (name) =>
        change('definition.delete', `trigger:${name}`, () => engine.triggers.delete(name, by)),
    };
    this.applications = {
      put: (name, config) =>
        change('definition.put', `application:${name}`, () => engine.applications.put(name, config, by)),
      get: (name) => read(() => engine.applications.get(name)),
      versions: (name, query) => read(() => engine.applications.versions(name, query)),
      list: () => read(() => engine.applications.list()),
      delete: (name) =>
        change('definition.delete', `application:${name}`, () => engine.applications.delete(name, by)),
      open: (name) => this.#allowed('app.use', name, () => host.openApplication(principal, name)),
    };
    this.access = {
      get: () => read(() => engine.access.get()),
      put: (policy) => change('access.put', 'access:policy', () => engine.access.put(policy, by)),
    };
    this.audit = { list: (query) => this.#allowed('audit.read', undefined, () => host.audit.list(query)) };
    const keys =
      (action: string, resource: string) =>
      <T>(work: () => Promise<T>) =>
        this.#changed('keys.manage', undefined, action, resource, work);
    this.keys = {
      create: (input) => keys('key.create', `key:${nameOf(input)}`)(() => engine.keys.create(input)),
      list: () => this.#allowed('keys.manage', undefined, () => engine.keys.list()),
      revoke: (id) => keys('key.revoke', `key:${id}`)(() => engine.keys.revoke(id)),
    };
    this.approvals = host.approvals(principal);
    this.events = {
      send: (event, payload) =>
        this.#changed(
          'events.send',
          typeof event === 'string' ? event : undefined,
          'event.send',
          `event:${String(event)}`,
          () => host.sendEvent(event, payload),
        ),
    };
    const users =
      (action: string, resource: string) =>
      <T>(work: () => Promise<T>) =>
        this.#changed('users.manage', undefined, action, resource, work);
    const manage = <T>(work: () => Promise<T>) => this.#allowed('users.manage', undefined, work);
    this.users = {
      create: (input) =>
        users(
          'user.create',
          `user:${String((input as { email?: unknown }).email)}`,
        )(() => engine.users.create(input)),
      get: (id) => manage(() => engine.users.get(id)),
      list: () => manage(() => engine.users.list()),
      setRoles: (id, roles) => users('user.set_roles', `user:${id}`)(() => engine.users.setRoles(id, roles)),
      setPassword: (id, password) =>
        users('user.set_password', `user:${id}`)(() => engine.users.setPassword(id, password)),
      disable: (id) => users('user.disable', `user:${id}`)(() => engine.users.disable(id)),
    };
  }

  /**
   * Runs a workflow to its end as the principal (it needs `workflow.run` on it); the run's
   * initiator is the principal, and its steps read and write as it.
   * @throws {@link ForbiddenError} without `workflow.run` on the workflow; else as `engine.run`.
   */
  async run<const W extends WorkflowRef>(
    workflow: W,
    input?: RunInput<W>,
    options: RunOptions = {},
  ): Promise<RunRecord> {
    const name = nameOfWorkflow(workflow, 'run');
    return this.#changed('workflow.run', name, 'run.start', `workflow:${name}`, () =>
      this.#host.run(this.principal, name, input, options),
    );
  }

  /**
   * Starts a workflow as the principal (it needs `workflow.run` on it) and hands back its events.
   * @throws {@link ForbiddenError} without `workflow.run` on the workflow; else as `engine.start`.
   */
  async start<const W extends WorkflowRef>(
    workflow: W,
    input?: RunInput<W>,
    options: RunOptions = {},
  ): Promise<RunHandle> {
    const name = nameOfWorkflow(workflow, 'start');
    return this.#changed('workflow.run', name, 'run.start', `workflow:${name}`, () =>
      this.#host.start(this.principal, name, input, options),
    );
  }

  /**
   * A run record: with `runs.read` any run, with `runs.read_own` the runs the principal started.
   * @throws {@link NotFoundError} when there is no such run or it is not the principal's to see;
   *   {@link ForbiddenError} with neither permission.
   */
  async getRun(id: string): Promise<RunRecord> {
    const grants = await this.#grants();
    if (!grants.allows('runs.read_own')) throw forbidden(this.principal, 'runs.read', undefined, 'read runs');
    const record = await this.#host.engine.getRun(id);
    if (!grants.allows('runs.read') && !this.#owns(record)) throw new NotFoundError('run', id);
    return record;
  }

  /**
   * The JSON text of a run record, under the same checks as {@link EngineView.getRun}. @internal
   */
  async getRunText(id: string): Promise<string> {
    const grants = await this.#grants();
    if (grants.allows('runs.read')) return this.#host.engine.getRunText(id);
    return JSON.stringify(await this.getRun(id));
  }

  /**
   * Runs newest first, as `engine.listRuns`: every run with `runs.read`, the principal's own with
   * `runs.read_own` (pages may then hold fewer runs than `limit`; follow `next`).
   * @throws {@link ForbiddenError} with neither permission.
   */
  async listRuns(query: RunListQuery = {}): Promise<RunPage<RunSummary>> {
    const grants = await this.#grants();
    if (grants.allows('runs.read')) return this.#host.engine.listRuns(query);
    if (!grants.allows('runs.read_own')) throw forbidden(this.principal, 'runs.read', undefined, 'read runs');
    const page = await this.#host.engine.listRuns(query);
    return { ...page, runs: page.runs.filter((run) => this.#owns(run)) };
  }

  /**
   * Retries a run that has ended (it needs `runs.retry`, and to see the run): a new run, started by
   * the principal, keeps the steps before `from_step` (see `engine.retry`). Audited.
   * @throws {@link ForbiddenError} without `runs.retry`; {@link NotFoundError} for a run it may not
   *   see; else as `engine.retry`.
   */
  async retry(id: string, options: RetryOptions = {}): Promise<RunHandle> {
    return this.#changed('runs.retry', undefined, 'run.retry', `run:${id}`, async () => {
      await this.getRun(id);
      return this.#host.retry(this.principal, id, options);
    });
  }

  /**
   * Cancels or retries every run a filter selects among those the principal may see (it needs
   * `runs.cancel` or `runs.retry`), as `engine.bulk`: counted first, then exactly those acted on.
   * One audit entry for the whole action, with the count.
   */
  async bulk(input: BulkInput): Promise<BulkResult> {
    const checked = checkBulk(input);
    const permission = checked.action === 'cancel' ? 'runs.cancel' : 'runs.retry';
    const act = () =>
      runBulk(checked, {
        list: (query) => this.listRuns(query),
        cancel: async (id) => {
          await this.getRun(id);
          return this.#host.engine.cancel(id);
        },
        retry: async (id) => {
          await this.getRun(id);
          return this.#host.retry(this.principal, id, {});
        },
      });
    if (checked.dry_run === true) return this.#allowed(permission, undefined, act);
    return this.#changed(permission, undefined, `run.bulk_${checked.action}`, 'runs', act);
  }

  /**
   * Cancels a run (it needs `runs.cancel`, and to see the run).
   * @throws {@link ForbiddenError} without `runs.cancel`; {@link NotFoundError} for a run it may not see.
   */
  async cancel(id: string): Promise<boolean> {
    return this.#changed('runs.cancel', undefined, 'run.cancel', `run:${id}`, async () => {
      await this.getRun(id);
      return this.#host.engine.cancel(id);
    });
  }

  #grants(): Promise<Grants> {
    return this.#host.grants(this.principal);
  }

  #owns(run: { initiator?: { id: string; kind: string } | undefined }): boolean {
    return run.initiator?.id === this.principal.id && run.initiator.kind === this.principal.kind;
  }

  /** Does `work` when the principal holds `permission` (on `name`). */
  async #allowed<T>(permission: Permission, name: string | undefined, work: () => Promise<T>): Promise<T> {
    (await this.#grants()).require(permission, name);
    return work();
  }

  /** Does `work` when the principal holds `permission`, and writes what came of it to the audit log. */
  async #changed<T>(
    permission: Permission,
    name: string | undefined,
    action: string,
    resource: string,
    work: () => Promise<T>,
  ): Promise<T> {
    const entry = (outcome: AuditRecord['outcome'], detail?: Record<string, unknown>): AuditRecord => ({
      principal: { id: this.principal.id, kind: this.principal.kind },
      action,
      resource,
      outcome,
      ...(detail ? { detail } : {}),
    });
    const grants = await this.#grants();
    if (!grants.allows(permission, name)) {
      await this.#host.audit.record(entry('denied', { permission }));
      throw forbidden(this.principal, permission, name);
    }
    try {
      const result = await work();
      await this.#host.audit.record(entry('success', runDetail(result)));
      return result;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      await this.#host.audit.record(
        entry(
          isForbiddenError(error) ? 'denied' : 'failure',
          typeof code === 'string' ? { code } : undefined,
        ),
      );
      throw error;
    }
  }
}

/** What the audit log keeps of a result: a run's id (a bulk action's count), nothing else. */
function runDetail(result: unknown): Record<string, unknown> | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const bulk = result as Partial<BulkResult>;
  if (typeof bulk.count === 'number' && Array.isArray(bulk.runs))
    return { count: bulk.count, done: bulk.done ?? 0, failed: bulk.failed?.length ?? 0 };
  const { id, run_id } = result as { id?: unknown; run_id?: unknown };
  const runId =
    typeof run_id === 'string' ? run_id : typeof id === 'string' && 'status' in result ? id : undefined;
  if (runId !== undefined) return { run_id: runId };
  if ('events' in result && typeof id === 'string') return { run_id: id };
  return undefined;
}

/** The name of the workflow a run is asked for. @throws a `TypeError` when it is no string. */
function nameOfWorkflow(workflow: WorkflowRef, call: string): string {
  const name: unknown = workflowName(workflow);
  if (typeof name !== 'string')
    throw new TypeError(`engine.as(...).${call}: the workflow name must be a string, got ${typeof name}`);
  return name;
}

/** The `name` of a definition, for the audit log (`?` when it has none: it is refused anyway). */
function nameOf(definition: unknown): string {
  const name = (definition as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : '?';
}
