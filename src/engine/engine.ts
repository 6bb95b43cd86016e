import { ActionRegistry, type ActionDefinition } from '../actions/registry.js';
import { getEntityAction } from '../actions/get-entity.js';
import { writeEntityAction } from '../actions/write-entity.js';
import { dummyTaskAction } from '../actions/dummy-task.js';
import { sendMessageAction } from '../actions/send-message.js';
import { createPdfAction } from '../actions/create-pdf.js';
import { sendEmailAction } from '../actions/send-email.js';
import { uploadFileAction } from '../actions/upload-file.js';
import { runWorkflowAction } from '../actions/run-workflow.js';
import { Catalog } from '../catalog/catalog.js';
import { NotFoundError, StepwireError, ValidationError, formatIssues } from '../errors/index.js';
import { setOwn } from '../schema/own.js';
import { MAX_TIMER_MS } from '../retry/index.js';
import { QuickJsSandbox, type ScriptSandbox } from '../script/index.js';
import { Applications } from '../app/applications.js';
import { EventFeed } from './event-feed.js';
import { describeValue } from '../schema/issues.js';
import { resolveOptions, type EngineOptions, type ResolvedOptions } from './options.js';
import { Execution, INITIATOR, checkRunOptions, type RunOptions } from './run.js';
import { MAX_RECORD_JSON_CHARS } from './record-size.js';
import type { RunServices } from './plan-types.js';
import type { RunEvent, RunRecord, RunSummary } from './record.js';
import type { RunPage, RunQuery } from '../adapters/types.js';
import { pageOfRuns, runSummary, runWindow } from '../adapters/run-list.js';
import { TAKES_JSON_TEXT, takesJsonText } from '../adapters/json-text.js';
import { RunKeys } from './run-keys.js';
import { TriggerRegistry } from './triggers.js';
import { fireDue, tickTime, type FireHost, type TriggerFiring } from './trigger-fire.js';
import { ScriptRegistry } from './scripts.js';
import { preloadTracing, traceDecision } from './tracing.js';
import { WorkflowRegistry } from './workflows.js';
import { workflowName, type RunInput, type WorkflowRef } from './workflow-ref.js';
import { DurableRuns } from './durable.js';
import { interruptedRecord } from './interrupted.js';
import { copyJson, jsonProblem } from './json-value.js';
import type { QueueWorker } from '../adapters/queue.js';
import { RUN_STATUSES, type Entity } from '../schema/index.js';
import { AccessControl } from '../access/control.js';
import { AuditLog } from '../access/audit.js';
import { SERVICE_PRINCIPAL, checkPrincipal, initiatorOf, type Principal } from '../access/principal.js';
import { waitBookOf } from './steps/wait.js';
import { WaitingRuns } from './waits/going-on.js';
import { Approvals, type ApprovalsApi, type EventSent } from './waits/approvals.js';
import { keptSteps, retryRecord, type RetryOptions } from './retry-run.js';
import { checkBulk, runBulk, type BulkInput, type BulkResult } from './bulk.js';
import type { RunInitiator } from '../schema/run-record-types.js';
import type { Workflow } from '../schema/index.js';
import type { AppHost } from '../app/host.js';
import type { AccessPolicy } from '../schema/access.js';
import { EngineView } from './engine-view.js';
import { ApiKeys } from '../auth/keys.js';
import { Users } from '../auth/users.js';
import { Sessions } from '../auth/sessions.js';
import type { CredentialStores } from '../auth/credentials.js';
import type { DefinitionWriteOptions } from '../adapters/definition-history.js';
import type { RunHandle, RunListQuery } from './engine-types.js';

export type { RunHandle, RunListQuery } from './engine-types.js';

/** Options of {@link Engine.work}. */
export interface WorkOptions {
  /** How often triggers are ticked, in ms. @default 1000 */
  tickMs?: number;
  /** Whether this process ticks the triggers. @default true */
  triggers?: boolean;
  /** With a queue: most steps this process executes at once. @default 4 */
  concurrency?: number;
  /** Told about errors of the background work (a tick that failed, a lost database connection). */
  onError?: (error: unknown) => void;
}

/**
 * The stepwire engine: the catalog, workflows, scripts, applications and actions, on the adapters
 * you give it (each defaults to its in-memory reference).
 * @example
 * ```ts
 * const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ crm: { orders: [['id', 'total'], [1, 9.5]] } }) });
 * await engine.catalog.registerEntity(ordersEntity);
 * await engine.workflows.create(workflow);
 * const run = await engine.run('invoice', { customer_id: 1 });
 * ```
 */
export class Engine {
  /** Entities, relationships, reads and writes. */
  readonly catalog: Catalog;
  /** Workflow definitions. */
  readonly workflows: WorkflowRegistry;
  /** Transform scripts. */
  readonly scripts: ScriptRegistry;
  /** `l2` actions: built in, your own, and test stubs. */
  readonly actions: ActionRegistry;
  /** Triggers: schedules, webhooks and entity changes that start workflows. */
  readonly triggers: TriggerRegistry;
  /** Application configurations and their runtime. */
  readonly applications: Applications;
  /**
   * The access policy: `get()` the one stored, `put(policy)` to check it against the
   * catalog and store it (access control is on from then on).
   */
  readonly access: {
    /** The stored policy, or `undefined` when there is none. */
    get(): Promise<AccessPolicy | undefined>;
    /**
     * Checks the policy (roles, grants, the entities and columns its rules name) and stores it.
     * `options.by` names who changes it, for its history (`engine.as(p)` passes it).
     * @throws {@link ValidationError} naming every field that is wrong.
     */
    put(policy: AccessPolicy, options?: DefinitionWriteOptions): Promise<AccessPolicy>;
  };
  /** The append-only audit log: who changed definitions, started and cancelled runs, wrote rows. */
  readonly audit: AuditLog;
  /**
   * API keys for programs: `create` shows a key's secret once (only its SHA-256 is
   * stored), `list`, `revoke`. A request carries it as `Authorization: Bearer sw_...`.
   */
  readonly keys: ApiKeys;
  /**
   * Approvals of `wait` steps: `list()` those waiting, `get(id)`, `decide(id, { approved, comment?,
   * data? })`, `link(id, { email, expires? })` for an outside approver. The plain engine acts as the
   * service (it may decide any); `engine.as(principal).approvals` as an assignee.
   */
  readonly approvals: ApprovalsApi;
  /**
   * Events for `wait` steps of kind `event`: `send(event, payload)` ends every wait for it whose
   * `match` the payload has; when none waits, the event is kept 24 hours for a wait that begins later.
   * @example
   * ```ts
   * await engine.events.send('payment.received', { order_id: 42, amount: 99.5 });
   * ```
   */
  readonly events: {
    /**
     * Sends an event. @throws {@link ValidationError} for a bad event name or a payload JSON cannot
     *   hold (or over 1,000,000 characters).
     */
    send(event: string, payload?: unknown): Promise<EventSent>;
  };
  #approvals: Approvals;
  #waiting: WaitingRuns;
  /** People who sign in with a password (or OpenID Connect): create, roles, passwords, disable. */
  readonly users: Users;
  /** The cookie sessions of signed-in browsers, stored hashed in the storage. @internal */
  readonly sessions: Sessions;
  #control: AccessControl;
  /** What {@link Engine.credentialStores} gives, made once. */
  #credentials: CredentialStores | undefined;
  /** The views {@link Engine.as} made, by principal. */
  #views = new Map<string, EngineView>();
  /** The same views, by frozen principal object. */
  #viewsOf = new WeakMap<Principal, EngineView>();
  /** The options with every default filled in. @internal */
  readonly options: ResolvedOptions;
  #sandbox: ScriptSandbox;
  #runKeys: RunKeys;
  #ready: Promise<void> | undefined;
  /** Whether {@link Engine.ready} has resolved (a run started since then did not fail to open the storage). */
  #opened = false;
  #services: RunServices | undefined;
  /** Durable runs, when the engine has a queue. */
  #durable: DurableRuns | undefined;
  /** Runs executing in this process, to cancel them by id. */
  #live = new Map<string, { abort(): void }>();
  /** The results of the runs executing in this process: `close()` waits for them. */
  #settling = new Set<Promise<unknown>>();
  /** Starts and ticks under way: `close()` waits for them, so no run begins after it resolved. */
  #pending = new Set<Promise<unknown>>();
  /** The `work()` loops running, each stopped by `close()`. */
  #workers = new Set<{ stop(): Promise<void> }>();
  /** Set once `close()` was called: what it is doing. */
  #closing: Promise<void> | undefined;
  /** Set by `close({ cancel: true })`: runs of this process are cancelled, also those about to start. */
  #cancelling = false;

  constructor(options: EngineOptions = {}) {
    this.options = resolveOptions(options);
    const files = this.options.files;
    const builtins = new Map<string, ActionDefinition>(
      [
        getEntityAction,
        writeEntityAction,
        dummyTaskAction,
        sendMessageAction,
        createPdfAction,
        sendEmailAction,
        runWorkflowAction,
      ].map((a) => [`${a.provider}/${a.module}/${a.action}`, a as ActionDefinition]),
    );
    this.actions = new ActionRegistry((provider, module, action, key) => {
      const builtin = builtins.get(key);
      if (builtin) return builtin;
      const store = module === 'files' && action === 'upload_file' ? files[provider] : undefined;
      return store ? (uploadFileAction(provider, store) as unknown as ActionDefinition) : undefined;
    });
    for (const action of options.actions ?? []) this.actions.register(action);
    const ready = () => this.ready();
    this.catalog = new Catalog({
      storage: this.options.storage,
      spreadsheets: this.options.spreadsheets,
      limits: this.options.limits,
      ready,
    });
    this.workflows = new WorkflowRegistry(
      this.options.storage,
      (p, m, a) => this.actions.has(p, m, a),
      ready,
      async (name) => ({
        triggers: (await this.triggers.list()).filter((t) => t.workflow_name === name).map((t) => t.name),
        forms: await this.applications.formsRunning(name),
      }),
    );
    this.scripts = new ScriptRegistry(this.options.storage, ready);
    this.#sandbox = options.sandbox ?? new QuickJsSandbox();
    this.#runKeys = new RunKeys(this.options.storage, this.options.limits.runTimeoutMs);
    this.triggers = new TriggerRegistry(
      this.options.storage,
      {
        hasWorkflow: async (name) => (await this.options.storage.get('workflows', name)) !== undefined,
        entity: async (name) => {
          const entity = await this.options.storage.get<Entity>('entities', name);
          return entity && { columns: entity.columns.map((c) => c.name), primary_key: entity.primary_key };
        },
        checkInput: (name, input) => this.checkInput(name, input),
      },
      ready,
    );
    this.applications = new Applications(this, ready);
    this.#control = new AccessControl(this.options.storage, options.access);
    this.access = {
      get: async () => {
        await this.ready();
        return this.#control.policy();
      },
      put: async (policy, options) => {
        await this.ready();
        return this.#control.put(policy, await this.catalog.listEntities(), options);
      },
    };
    this.audit = new AuditLog(this.options.storage, ready);
    this.keys = new ApiKeys(this.options.storage, ready);
    this.users = new Users(this.options.storage, ready);
    this.sessions = new Sessions(this.options.storage, ready);
    if (this.options.queue)
      this.#durable = new DurableRuns(this.options.queue, {
        services: (initiator, workflow) => this.#servicesFor(initiator, workflow),
        planOf: (definition) => this.workflows.planOf(definition),
      });
    const book = waitBookOf(this.options.storage);
    this.#waiting = new WaitingRuns({
      storage: this.options.storage,
      book,
      durable: this.#durable,
      planAt: (name, version) => this.workflows.planAt(name, version),
      services: (initiator, workflow) => this.#servicesFor(initiator, workflow),
      launch: (execution) => this.#launch(execution),
      onError: () => undefined,
    });
    this.#approvals = new Approvals({
      storage: this.options.storage,
      book,
      audit: this.audit,
      grants: (principal) => this.#control.grants(principal),
      resume: (id, step) => this.#waiting.resume(id, step),
      noted: async (wait, decision, outcome) => {
        const run = await this.options.storage.get<RunRecord>('runs', wait.run_id);
        traceDecision(
          wait.workflow,
          wait.run_id,
          run?.traceparent,
          wait.step,
          decision.by,
          decision.approved,
          outcome,
        );
        const event: RunEvent = {
          type: 'approval.decided',
          run_id: wait.run_id,
          step: wait.step,
          approval_id: wait.id,
          by: decision.by,
          approved: decision.approved,
          at: decision.at,
        };
        await this.#durable?.note(wait.run_id, [event]);
      },
    });
    this.approvals = this.#approvalsOf(SERVICE_PRINCIPAL);
    this.events = { send: (event, payload) => this.#openThen(() => this.#approvals.send(event, payload)) };
    preloadTracing();
  }

  /**
   * Opens the storage: without a queue, runs left `running` by an engine that stopped are marked
   * `interrupted` (with a queue they go on: their steps are delivered again). Every other method
   * waits for this on its own; call it to do the work up front.
   */
  ready(): Promise<void> {
    // With a queue, runs found running may be running in another process, unless none can use the
    // storage (an embedded directory): then its runs not on the queue are stopped for good.
    // A storage that could not be opened (a database not up yet) is tried again by the next call.
    return (this.#ready ??= this.#control
      .open()
      .then(() => (this.#durable && !this.options.storage.exclusive ? undefined : this.#recoverInterrupted()))
      .then(() => this.#waiting.recover())
      .catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      }));
  }

  /**
   * The engine as `principal` may use it: the same catalog, registries and runs, every
   * call checked against the access policy and changes written to the audit log; runs started
   * through it carry the principal as their initiator, and their steps read and write as it.
   * Without an access policy every check passes (an embedded engine trusts its host).
   * @example
   * ```ts
   * const alice = engine.as({ id: 'u1', kind: 'user', roles: ['sales'], email: 'alice@example.com' });
   * const mine = await alice.catalog.getEntity({ entity_name: 'customers', operation: {} });
   * ```
   * @throws a `TypeError` naming the field of `principal` that is wrong.
   */
  as(principal: Principal): EngineView {
    // A frozen principal (an API key's, while remembered) cannot change: its view is found by it.
    const frozen = Object.isFrozen(principal) && Object.isFrozen(principal.roles);
    const seen = frozen ? this.#viewsOf.get(principal) : undefined;
    if (seen) return seen;
    const checked = checkPrincipal(principal);
    // A view holds nothing but its principal: one per principal is kept, so a server does not build
    // one per request.
    const key = JSON.stringify([checked.id, checked.kind, checked.roles, checked.email, checked.name]);
    let view = this.#views.get(key);
    if (!view) {
      if (this.#views.size >= MAX_VIEWS) this.#views.clear();
      this.#views.set(key, (view = this.#newView(checked)));
    }
    if (frozen) this.#viewsOf.set(principal, view);
    return view;
  }

  #newView(checked: Principal): EngineView {
    return new EngineView(
      {
        engine: this,
        // Once the storage is open, a check does not wait a turn for it.
        grants: (p) =>
          this.#opened ? this.#control.grants(p) : this.#openThen(() => this.#control.grants(p)),
        audit: this.audit,
        catalog: (p, audited) => this.catalogOf(p, audited),
        run: (p, name, input, options) => this.run(name, input as never, { ...options, [INITIATOR]: p }),
        start: (p, name, input, options) => this.start(name, input as never, { ...options, [INITIATOR]: p }),
        openApplication: (p, name) => this.applications.openAs(name, this.#appHost(p)),
        approvals: (p) => this.#approvalsOf(p),
        retry: (p, id, options) => this.retryAs(p, id, options),
        sendEvent: (event, payload) => this.events.send(event, payload),
      },
      checked,
    );
  }

  /** Whether the engine enforces an access policy (once its storage is open). @internal */
  accessControlled(): boolean | Promise<boolean> {
    // Once the storage is open, the answer comes at once unless the storage is asked.
    if (this.#opened) return this.#control.enabledNow();
    return this.#openThen(async () => this.#control.enabledNow());
  }

  /**
   * Where the HTTP handler checks credentials: API keys, and sessions whose user still exists, is
   * not disabled, and acts with the roles it has now. @internal
   */
  credentialStores(): CredentialStores {
    return (this.#credentials ??= {
      verifyKey: (secret) => this.keys.remembered(secret) ?? this.keys.verify(secret),
      session: async (token) => {
        const session = await this.sessions.get(token);
        if (!session) return undefined;
        if (session.user_id === undefined) return { principal: session.principal, csrf: session.csrf };
        const user = await this.users.get(session.user_id);
        if (!user || user.disabled) return undefined;
        return { principal: { ...session.principal, roles: user.roles }, csrf: session.csrf };
      },
    });
  }

  /** Approvals opened with an outside approver's link, for the HTTP pages. @internal */
  approvalLinks(): Pick<Approvals, 'withLink' | 'decideWithLink'> {
    return {
      withLink: (id, token) => this.#openThen(() => this.#approvals.withLink(id, token)),
      decideWithLink: (id, token, decision) =>
        this.#openThen(() => this.#approvals.decideWithLink(id, token, decision)),
    };
  }

  /** Approvals as `principal` sees and decides them, once the storage is open. */
  #approvalsOf(principal: Principal): ApprovalsApi {
    const approvals = this.#approvals.as(principal);
    return {
      list: () => this.#openThen(() => approvals.list()),
      get: (id) => this.#openThen(() => approvals.get(id)),
      decide: (id, decision) => this.#openThen(() => approvals.decide(id, decision)),
      link: (id, input) => this.#openThen(() => approvals.link(id, input)),
    };
  }

  /** Opens the storage, notes that it is open, then does `work`. */
  async #openThen<T>(work: () => Promise<T>): Promise<T> {
    await this.ready();
    this.#opened = true;
    return work();
  }

  /** The catalog as `principal` sees it; with `audited`, its row writes go to the audit log. @internal */
  catalogOf(principal: Principal, audited = false): Catalog {
    return this.catalog.as(
      () =>
        this.#opened
          ? this.#control.grants(principal)
          : this.#openThen(() => this.#control.grants(principal)),
      audited ? { principal, audit: this.audit } : undefined,
    );
  }

  /** What an application opened by `principal` acts through: its catalog and runs as it. */
  #appHost(principal: Principal): AppHost {
    return {
      catalog: this.catalogOf(principal, true),
      workflows: this.workflows,
      options: this.options,
      run: (name, input, options) => this.run(name, input as never, { ...options, [INITIATOR]: principal }),
    };
  }

  /**
   * Runs a workflow to its end and resolves with its run record, succeeded or failed. `workflow` is
   * its name, or its definition (what `workflow(...).build()` returns), which types `input`.
   * @throws {@link ValidationError} when the input is invalid (no step runs, no record is kept);
   *   {@link NotFoundError} when there is no such workflow; a `StepwireError` with code `closed`
   *   after {@link Engine.close}; a `TypeError` naming the workflow name, `timeoutMs`, `concurrency`,
   *   `signal`, `onEvent` or `traceparent` when one is not valid.
   */
  async run<const W extends WorkflowRef>(
    workflow: W,
    input?: RunInput<W>,
    options: RunOptions = {},
  ): Promise<RunRecord> {
    this.#open('run');
    const name = workflowName(workflow);
    requireString(name, 'engine.run: the workflow name');
    checkRunOptions(options);
    if (options.key !== undefined || this.#durable) return (await this.start(name, input, options)).result;
    // The launch is part of what close() waits for, so no run begins once close() has resolved.
    const launched = this.#admit(
      this.#prepare(name, input, options).then((execution) => ({ result: this.#launch(execution) })),
    );
    return (await launched).result;
  }

  /**
   * Cancels a run: no further step starts and the steps running are told to stop; the run ends
   * `cancelled`. With a queue this works from any process; without one, for runs of this engine.
   * Resolves with false when the run had already ended (or runs in another engine without a queue).
   * A child run (`run_workflow`) is cancelled by its id in the process executing it; its step then fails
   * with the child's `cancelled`.
   * @throws {@link NotFoundError} when there is no such run; a `StepwireError` with code `conflict` for
   *   a child run of a durable run executing in another process (cancel its parent, which cancels it);
   *   a `TypeError` when `id` is no string.
   */
  async cancel(id: string): Promise<boolean> {
    requireString(id, 'engine.cancel: the run id');
    await this.ready();
    // Runs executing in this process, child runs of a durable run's steps included.
    const live = this.#live.get(id);
    if (live) {
      live.abort();
      return true;
    }
    if (!this.#durable) {
      const record = await this.getRun(id);
      // A waiting run holds no execution here: its record is ended where it is kept.
      return record.status === 'waiting' ? this.#waiting.cancel(id) : false;
    }
    try {
      return await this.#durable.cancel(id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      // A child run is executed inside its parent's step, on whichever worker took that step.
      const record = await this.getRun(id);
      if (record.status === 'waiting') return this.#waiting.cancel(id);
      if (record.status !== 'running' || record.parent_run_id === undefined) return false;
      throw new StepwireError(
        'conflict',
        `run "${id}" is a child run executing in another process; cancel its parent run "${record.parent_run_id}", which cancels it with the step`,
      );
    }
  }

  /**
   * Retries a run that has ended, as a new run (`retry_of` names the old one) of the workflow as
   * the old run had it: the steps before `from_step` keep what they did (they do not run again),
   * `from_step` and every step after it run. Without `from_step`, from the step the run failed at
   * (else the whole run again). Resolves once the new run started, with its handle.
   * @example
   * ```ts
   * const retry = await engine.retry(failed.id, { from_step: 'send' });
   * const record = await retry.result; // record.retry_of === failed.id
   * ```
   * @throws {@link NotFoundError} when there is no such run; {@link ValidationError} naming
   *   `from_step` or the input; a `StepwireError` `conflict` for a run that has not ended or is a
   *   child run.
   */
  async retry(id: string, options: RetryOptions = {}): Promise<RunHandle> {
    this.#open('retry');
    requireString(id, 'engine.retry: the run id');
    return this.#admit(this.#retry(id, options, undefined));
  }

  /**
   * Cancels or retries every run a filter selects (or exactly the runs listed): the runs are
   * counted first and the action is done on exactly those, so runs started meanwhile are not
   * touched; `dry_run` only counts them.
   * @example
   * ```ts
   * const { count } = await engine.bulk({ action: 'retry', filter: { workflow: 'invoice', status: 'failed' }, dry_run: true });
   * ```
   * @throws {@link ValidationError} naming each bad field; a `LimitError` past 10,000 runs.
   */
  async bulk(input: BulkInput): Promise<BulkResult> {
    this.#open('bulk');
    const checked = checkBulk(input);
    await this.ready();
    return runBulk(checked, {
      list: (query) => this.listRuns(query),
      cancel: (id) => this.cancel(id),
      retry: (id) => this.retry(id),
    });
  }

  /** A retry started by `principal` (a view's), or by the host (the old run's initiator goes on). */
  async #retry(id: string, options: RetryOptions, principal: Principal | undefined): Promise<RunHandle> {
    await this.ready();
    const original = await this.getRun(id);
    const plan = await this.workflows.planAt(original.workflow, original.workflow_version);
    const kept = keptSteps(plan, original, options.from_step);
    const input =
      options.input === undefined ? original.input : await this.checkInput(original.workflow, options.input);
    const newId = globalThis.crypto.randomUUID();
    const starter = principal ?? (original.initiator && principalOf(original.initiator));
    if (this.#durable) {
      const runOptions: RunOptions = starter ? { [INITIATOR]: starter } : {};
      const retry = { of: id, kept, version: original.workflow_version };
      const started = await this.#durable.start(plan, input, runOptions, newId, retry);
      return { ...started, replayed: false };
    }
    const events = new EventFeed(undefined);
    const record = retryRecord(original, newId, input, kept, Date.now());
    const services = this.#servicesFor(starter && initiatorOf(starter), plan.workflow);
    const execution = Execution.retrying(plan, record, services, { onEvent: (event) => events.push(event) });
    const result = this.#launch(execution).finally(() => events.end());
    return { id: newId, events, result, replayed: false };
  }

  /** A retry as `principal` (the view's `retry`). @internal */
  retryAs(principal: Principal, id: string, options: RetryOptions): Promise<RunHandle> {
    this.#open('retry');
    requireString(id, 'retry: the run id');
    return this.#admit(this.#retry(id, options, principal));
  }

  /**
   * Starts a workflow and hands back its events as they happen, e.g. for a progress bar.
   * @example
   * ```ts
   * const handle = await engine.start('invoice', { customer_id: 1 });
   * for await (const event of handle.events) console.log(event.type, 'step' in event ? event.step : '');
   * const record = await handle.result;
   * ```
   * @throws a `StepwireError` with code `closed` after {@link Engine.close}; a `TypeError` naming
   *   the workflow name, `timeoutMs`, `concurrency`, `signal`, `onEvent` or `traceparent` when one is
   *   not valid.
   */
  async start<const W extends WorkflowRef>(
    workflow: W,
    input?: RunInput<W>,
    options: RunOptions = {},
  ): Promise<RunHandle> {
    this.#open('start');
    const name = workflowName(workflow);
    requireString(name, 'engine.start: the workflow name');
    checkRunOptions(options);
    return this.#admit(this.#start(name, input, options));
  }

  async #start(name: string, input: unknown, options: RunOptions): Promise<RunHandle> {
    if (this.#durable) return this.#startDurable(this.#durable, name, input, options);
    const events = new EventFeed(options.onEvent);
    const execution = await this.#prepare(name, input, {
      ...options,
      onEvent: (event) => events.push(event),
    });
    if (options.key !== undefined) {
      const timeoutMs = options.timeoutMs ?? this.options.limits.runTimeoutMs;
      const earlier = await this.#runKeys.claim(name, options.key, execution.id, timeoutMs, options.trigger);
      if (earlier !== undefined) return { ...this.#runKeys.replay(earlier), replayed: true };
    }
    const result = this.#launch(execution).finally(() => events.end());
    if (options.key !== undefined) this.#runKeys.track(execution.id, result);
    return { id: execution.id, events, result, replayed: false };
  }

  /** Stores a durable run and enqueues its first steps; the handle follows it wherever it runs. */
  async #startDurable(
    durable: DurableRuns,
    name: string,
    input: unknown,
    options: RunOptions,
  ): Promise<RunHandle> {
    const { plan, input: value } = await this.#prepareRun(name, input);
    const id = globalThis.crypto.randomUUID();
    if (options.key !== undefined) {
      const timeoutMs = options.timeoutMs ?? this.options.limits.runTimeoutMs;
      const earlier = await this.#runKeys.claim(name, options.key, id, timeoutMs, options.trigger);
      if (earlier !== undefined)
        return { ...this.#runKeys.replay(earlier, (runId) => durable.follow(runId)), replayed: true };
    }
    const started = await durable.start(plan, value, options, id);
    if (options.key !== undefined) this.#runKeys.track(id, started.result);
    return { ...started, replayed: false };
  }

  /** Runs an execution of this process, cancellable by id while it runs. */
  #launch(execution: Execution): Promise<RunRecord> {
    this.#live.set(execution.id, execution.canceller);
    const result = execution.run().finally(() => {
      this.#live.delete(execution.id);
      this.#settling.delete(result);
    });
    // A run that waits for a time is woken by a timer of this process.
    void result.then(
      (record) => this.#waiting.watch(record),
      () => undefined,
    );
    this.#settling.add(result);
    // `close({ cancel: true })` may have come while the run was being prepared.
    if (this.#cancelling) execution.canceller.abort();
    return result;
  }

  /**
   * Fires every schedule and entity trigger due at `now`: a schedule's latest slot since it last fired
   * (one catch-up run after downtime), an entity's changed rows once its interval has passed. Hosts
   * that bring their own clock (a Workers `scheduled` handler) call it; {@link Engine.work} calls it
   * by itself. Each slot and row state starts one run, whatever the number of engines on one storage.
   * `now` is a `Date` or a number of milliseconds since 1970 (a Workers `scheduled` event's
   * `scheduledTime`); it defaults to the current time.
   * @throws a `StepwireError` with code `closed` after {@link Engine.close}; a `TypeError` naming
   *   `now` when it is neither a valid `Date` nor a finite number in the range of `Date`.
   */
  async tick(now: Date | number = new Date()): Promise<TriggerFiring[]> {
    this.#open('tick');
    const at = tickTime(now);
    return this.#admit(this.ready().then(() => fireDue(this.#fireHost, at)));
  }

  /**
   * Does the engine's background work until `stop()`: ticks the triggers every `tickMs` (default 1 s)
   * and, with a queue, executes queued steps, at most `concurrency` (default 4) at once. `stop()` is
   * graceful: it takes no further step and resolves once the steps and the tick in flight are done.
   * @example
   * ```ts
   * const worker = engine.work({ concurrency: 8 });
   * process.on('SIGTERM', () => void worker.stop());
   * ```
   * @throws a `StepwireError` with code `closed` after {@link Engine.close} (at once: `work` returns
   *   no promise); {@link Engine.close} stops every loop `work` started. A `TypeError` naming the
   *   option when `concurrency`, `tickMs`, `triggers` or `onError` is not one `work` can use.
   */
  work(options: WorkOptions = {}): { stop(): Promise<void> } {
    this.#open('work');
    checkWorkOptions(options);
    const tickMs = options.tickMs ?? 1000;
    const onError = (error: unknown) => options.onError?.(error);
    let running: Promise<unknown> = Promise.resolve();
    const timer =
      options.triggers === false
        ? undefined
        : setInterval(() => {
            running = running.then(() => (this.#closing ? undefined : this.tick())).catch(onError);
          }, tickMs);
    const concurrency = options.concurrency ?? 4;
    const worker: Promise<QueueWorker | undefined> = this.#durable
      ? this.ready().then(() => this.#durable!.work(concurrency, onError))
      : Promise.resolve(undefined);
    worker.catch(onError);
    let stopping: Promise<void> | undefined;
    const loop = {
      stop: () =>
        (stopping ??= (async () => {
          clearInterval(timer);
          await (await worker.catch(() => undefined))?.stop();
          await running;
          this.#workers.delete(loop);
        })()),
    };
    this.#workers.add(loop);
    return loop;
  }

  /**
   * Shuts the engine down: stops what it started itself and waits for it, so the process can exit.
   * - Every `work()` loop stops as its `stop()` does: no further tick or step is taken, and the tick
   *   and the steps in flight finish (a step's result is committed).
   * - Runs executing in this process (without a queue) finish: `close()` resolves once each has
   *   ended, as it would have (each is bounded by its time limit). With `{ cancel: true }` they are
   *   cancelled instead and end `cancelled`, each step told to stop, as {@link Engine.cancel} does;
   *   calling `close({ cancel: true })` while an earlier `close()` waits cancels them too.
   * - With a queue, runs are not this process's to end: steps not yet taken stay on the queue for
   *   other workers (or for this storage's next engine), and runs go on there.
   *
   * Afterwards `run`, `start`, `tick` and `work` throw a `StepwireError` with code `closed` naming
   * the call (an HTTP handler on the engine answers them 503). Reads (`getRun`, `listRuns`, the
   * catalog and definitions) still work. The adapters are not closed: the caller made them and owns
   * them, so close a database (`openPostgres(...).close()`) after the engine. Calling `close()` again
   * resolves when the first call does.
   * @example
   * ```ts
   * process.once('SIGTERM', async () => {
   *   await engine.close({ cancel: true });
   *   await db.close();
   * });
   * ```
   */
  close(options: { cancel?: boolean } = {}): Promise<void> {
    if (options.cancel === true && !this.#cancelling) {
      this.#cancelling = true;
      for (const live of this.#live.values()) live.abort();
    }
    return (this.#closing ??= this.#shutDown());
  }

  async #shutDown(): Promise<void> {
    await Promise.allSettled([...this.#workers].map((loop) => loop.stop()));
    // Starts admitted before close may still launch runs: wait until nothing is left.
    while (this.#pending.size > 0 || this.#settling.size > 0)
      await Promise.allSettled([...this.#pending, ...this.#settling]);
    this.#durable?.close();
    this.#waiting.close();
    this.#runKeys.close();
  }

  /** Throws when the engine is closed, naming the call. */
  #open(call: string): void {
    if (this.#closing)
      throw new StepwireError(
        'closed',
        `engine.${call}() was called after engine.close(): the engine is closed`,
      );
  }

  /** Tracks a start or tick under way, so `close()` waits for it. */
  #admit<T>(work: Promise<T>): Promise<T> {
    this.#pending.add(work);
    // Not a named function: under tsx (the benchmarks) naming one costs a defineProperty a run.
    work.then(
      () => this.#pending.delete(work),
      () => this.#pending.delete(work),
    );
    return work;
  }

  /** What trigger firing needs, the engine seen through a narrow window. */
  get #fireHost(): FireHost {
    return {
      triggers: this.triggers,
      catalog: this.catalog,
      storage: this.options.storage,
      start: (name, input, options) => this.start(name, input, options),
    };
  }

  /** A run record by id. @throws {@link NotFoundError}; a `TypeError` when `id` is no string. */
  async getRun(id: string): Promise<RunRecord> {
    requireString(id, 'engine.getRun: the run id');
    await this.ready();
    const record = await this.options.storage.get<RunRecord>('runs', id);
    if (!record) throw new NotFoundError('run', id);
    return record;
  }

  /**
   * The JSON text of a run record: the stored text where the storage gives it (see
   * `StorageAdapter.getText`), else the record serialized. The HTTP API answers with it, so a record
   * holding large outputs is not parsed and serialized again. @internal
   * @throws {@link NotFoundError} when there is no such run.
   */
  async getRunText(id: string): Promise<string> {
    await this.ready();
    const storage = this.options.storage;
    // Not a subclass of a storage that takes JSON text: its getText would bypass an overridden get.
    const direct = takesJsonText(storage) || !(TAKES_JSON_TEXT in storage.constructor);
    const text = direct ? await storage.getText?.('runs', id) : undefined;
    return text ?? JSON.stringify(await this.getRun(id));
  }

  /**
   * Runs newest first, a page at a time, optionally of one workflow or status and started in a window
   * (`started_after` included, `started_before` not), as summaries: id,
   * workflow, status, times and the error's code and message, without input, output or steps (read
   * a whole record with {@link Engine.getRun}). Pass a page's `next` as `after` for the page after it.
   * @example
   * ```ts
   * const { runs, next } = await engine.listRuns({ workflow: 'invoice', status: 'failed', limit: 20 });
   * ```
   * @throws {@link ValidationError} naming `status` (a run status), `limit` (1 to 1000), `after` or a
   *   time that is no date when they are wrong.
   */
  async listRuns(query: RunListQuery = {}): Promise<RunPage<RunSummary>> {
    await this.ready();
    if (typeof query !== 'object' || query === null)
      throw new TypeError(`listRuns: the query must be an object, got ${describeValue(query)}`);
    const { workflow, status, limit = 50, after, started_after, started_before } = query;
    // A misspelled status would read as "no runs" (GET /runs answers 400 for it too).
    if (typeof status === 'string' && !(RUN_STATUSES as readonly string[]).includes(status))
      throw new ValidationError([
        {
          code: 'invalid_value',
          path: 'status',
          message: `status must be one of ${RUN_STATUSES.map((s) => JSON.stringify(s)).join(', ')}, got ${describeValue(status)}`,
        },
      ]);
    return this.#listRuns({
      limit,
      ...(workflow === undefined ? {} : { workflow }),
      ...(status === undefined ? {} : { status }),
      ...(started_after === undefined ? {} : { started_after }),
      ...(started_before === undefined ? {} : { started_before }),
      ...(after === undefined ? {} : { after }),
    });
  }

  /**
   * Fills `default_data` into the input and validates it against `input_schema`.
   * @throws {@link ValidationError} listing every problem with its path.
   */
  async checkInput(name: string, input: unknown): Promise<unknown> {
    await this.ready();
    const prepared = await this.workflows.prepared(name);
    return applyInput(prepared, input);
  }

  async #prepare(name: string, input: unknown, options: RunOptions): Promise<Execution> {
    const { plan, input: value } = await this.#prepareRun(name, input);
    const principal = options[INITIATOR];
    const services = this.#servicesFor(principal && initiatorOf(principal), plan.workflow);
    return new Execution(plan, value, services, options);
  }

  /**
   * The services a run's steps use: the engine's, or for a run with an initiator, with the catalog
   * as the initiator sees it (unless the workflow runs as the service) and the initiator recorded.
   */
  #servicesFor(initiator: RunInitiator | undefined, workflow: Workflow | undefined): RunServices {
    const services = (this.#services ??= this.#runServices());
    if (initiator === undefined) return services;
    const asService = workflow?.run_as === 'service' || initiator.kind === 'service';
    return {
      ...services,
      initiator,
      catalog: asService ? services.catalog : this.catalogOf(principalOf(initiator)),
    };
  }

  /** The plan of a workflow and its input with defaults, checked. */
  async #prepareRun(name: string, input: unknown) {
    // Once the storage is open, a run does not wait a turn for it.
    if (!this.#opened) {
      await this.ready();
      this.#opened = true;
    }
    const prepared = await this.workflows.prepared(name);
    return { plan: prepared.plan, input: applyInput(prepared, input) };
  }

  #runServices(): RunServices {
    return {
      options: this.options,
      actions: this.actions,
      catalog: this.catalog,
      scripts: this.scripts,
      sandbox: this.#sandbox,
      storage: this.options.storage,
      live: this.#live,
      prepareRun: (name, input) => this.#prepareRun(name, input),
      onWaiting: (record) => this.#waiting.watch(record),
    };
  }

  async #listRuns(query: RunQuery): Promise<RunPage<RunSummary>> {
    const storage = this.options.storage;
    // Summaries whatever the storage gives (one written before listRuns answered them gives records).
    if (storage.listRuns) {
      const page = await storage.listRuns(query);
      const runs = page.runs.map((run) => runSummary(run.id, run));
      // A storage written before the time bounds lists every run: its pages keep those in the window.
      const inWindow = runWindow(query);
      return { ...page, runs: inWindow ? runs.filter(inWindow) : runs };
    }
    const all = await storage.list('runs');
    return pageOfRuns(
      all.map(({ key, value }) => ({ key, value: runSummary(key, value) })),
      query,
    );
  }

  async #recoverInterrupted(): Promise<void> {
    const running: string[] = [];
    for (let after: string | undefined, first = true; first || after !== undefined; first = false) {
      const page = await this.#listRuns({ status: 'running', limit: 1000, ...(after ? { after } : {}) });
      running.push(...page.runs.map((run) => run.id));
      after = page.next;
    }
    // A durable run (started by an engine with a queue on this storage) goes on in its queue: the
    // storage keeps its record for the queue and refuses this put (`PostgresStorage.put`).
    for (const id of running) {
      const record = await this.options.storage.get<RunRecord>('runs', id);
      if (record?.status !== 'running') continue;
      await this.options.storage.put('runs', id, interruptedRecord(record, 'the engine running this run'));
    }
  }
}

/** The principal a run's initiator acts as. */
function principalOf(initiator: RunInitiator): Principal {
  return { id: initiator.id, kind: initiator.kind, roles: initiator.roles, email: initiator.email };
}

function applyInput(
  prepared: {
    plan: {
      workflow: { workflow_input?: { default_data?: Record<string, unknown> | undefined } | undefined };
    };
    input: { validate(value: unknown): { path: string; message: string; code: string }[] } | undefined;
  },
  input: unknown,
): unknown {
  const declared = prepared.plan.workflow.workflow_input;
  let value = input === undefined || input === null ? {} : input;
  // The run record holds the input too: it may take the whole record's room, no more.
  const unstorable = jsonProblem(value, 'invalid_input', MAX_RECORD_JSON_CHARS);
  if (unstorable) throw new ValidationError([unstorable], `Invalid input: ${formatIssues([unstorable])}`);
  if (declared?.default_data && typeof value === 'object' && !Array.isArray(value)) {
    const filled: Record<string, unknown> = copyJson(declared.default_data);
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (item !== undefined) setOwn(filled, key, item);
    }
    value = filled;
  }
  if (prepared.input) {
    const issues = prepared.input.validate(value);
    if (issues.length > 0) {
      throw new ValidationError(issues, `Invalid input: ${formatIssues(issues)}`);
    }
  }
  return value;
}

/** Most views {@link Engine.as} keeps (one per principal seen). */
const MAX_VIEWS = 1000;

/** Most steps one `work()` loop executes at once: one queue worker (and its polling) per slot. */
const MAX_WORK_CONCURRENCY = 256;

/** @throws a `TypeError` naming the first option of `work()` that is not valid. */
function checkWorkOptions(options: WorkOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`work options must be an object, got ${String(options)}`);
  const { concurrency, tickMs, triggers, onError } = options as Record<keyof WorkOptions, unknown>;
  const got = (value: unknown) => (typeof value === 'string' ? `"${value}"` : String(value));
  if (
    concurrency !== undefined &&
    !(
      Number.isInteger(concurrency) &&
      (concurrency as number) >= 1 &&
      (concurrency as number) <= MAX_WORK_CONCURRENCY
    )
  )
    throw new TypeError(
      `concurrency must be a whole number from 1 to ${MAX_WORK_CONCURRENCY}, got ${got(concurrency)}`,
    );
  if (tickMs !== undefined && !(typeof tickMs === 'number' && tickMs >= 1 && tickMs <= MAX_TIMER_MS))
    throw new TypeError(
      `tickMs must be a number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${got(tickMs)}`,
    );
  if (triggers !== undefined && typeof triggers !== 'boolean')
    throw new TypeError(`triggers must be true or false, got ${got(triggers)}`);
  if (onError !== undefined && typeof onError !== 'function')
    throw new TypeError(`onError must be a function, got ${got(onError)}`);
}

/** A TypeError naming `what` when `value` is no string (what TypeScript stops, a JavaScript caller may pass). */
function requireString(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string') throw new TypeError(`${what} must be a string, got ${describeValue(value)}`);
}
