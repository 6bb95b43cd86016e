import { createOrReplace } from '../adapters/create-or-replace.js';
import {
  ConflictError,
  NotFoundError,
  StepwireError,
  ValidationError,
  formatIssues,
  type Issue,
} from '../errors/index.js';
import type { StorageAdapter } from '../adapters/types.js';
import { WorkflowSchema, check, type Workflow, type WorkflowBody } from '../schema/index.js';
import { compileSchema, type CompiledSchema } from '../json-schema/index.js';
import { planWorkflow, type Plan } from './plan.js';
import { depthProblem } from './json-value.js';
import { selfCallIssues, selfReachIssues } from './child-runs.js';
import { KeyedLock } from '../locks/keyed-lock.js';
import { listNames, quoteName } from '../schema/issues.js';
import {
  DefinitionHistory,
  type DefinitionWriteOptions,
  type VersionPage,
  type VersionQuery,
} from '../adapters/definition-history.js';

/** A stored workflow ready to run: its plan and its compiled input schema. @internal */
export interface PreparedWorkflow {
  json: string;
  /** When the stored definition was last compared with this one (ms). */
  checkedAt: number;
  plan: Plan;
  input: CompiledSchema | undefined;
}

/** What refers to a workflow by name and so keeps it from being deleted. @internal */
export interface WorkflowUsers {
  /** Names of the triggers that start it. */
  triggers: string[];
  /** The application forms that run it. */
  forms: { application: string; form: string }[];
}

function describeForm(use: { application: string; form: string }): string {
  return `${quoteName(use.form)} of application ${quoteName(use.application)}`;
}

/** How long a cached definition is trusted before it is compared with storage again, in ms. @internal */
export const DEFINITION_RECHECK_MS = 1000;

/**
 * Workflow definitions, reached as `engine.workflows`. A definition is validated when stored:
 * its shape, references, wires, actions, cycles and input schema; every problem names the step and field.
 */
export class WorkflowRegistry {
  #storage: StorageAdapter;
  #hasAction: (provider: string, module: string, action: string) => boolean;
  #ready: () => Promise<void>;
  /** Whether `#ready` has resolved once: a run's look-up then does not wait a turn for it. */
  #opened = false;
  #usedBy: (name: string) => Promise<WorkflowUsers>;
  #prepared = new Map<string, PreparedWorkflow>();
  /** Plans of definition snapshots, by their JSON. */
  #snapshots = new Map<string, Plan>();
  /**
   * Serializes creates and replaces: each checks that no workflow can reach itself against the
   * stored definitions, so two made at once (`a` running `b`, `b` running `a`) must not both pass.
   */
  #writes = new KeyedLock();
  #history: DefinitionHistory;

  /** @internal */
  constructor(
    storage: StorageAdapter,
    hasAction: (provider: string, module: string, action: string) => boolean,
    ready: () => Promise<void>,
    usedBy: (name: string) => Promise<WorkflowUsers> = () => Promise.resolve({ triggers: [], forms: [] }),
  ) {
    this.#storage = storage;
    this.#hasAction = hasAction;
    this.#ready = ready;
    this.#usedBy = usedBy;
    this.#history = new DefinitionHistory(storage);
  }

  /**
   * Creates a workflow. A workflow that can reach itself through `run_workflow` steps is refused.
   * @throws {@link ValidationError}; {@link ConflictError} when the name is taken.
   */
  async create(definition: WorkflowBody, options: DefinitionWriteOptions = {}): Promise<Workflow> {
    await this.#ready();
    const prepared = this.#prepare(definition, true);
    const workflow = prepared.plan.workflow;
    return this.#writes.run(['workflows'], async () => {
      await this.#checkReach(workflow);
      if (!(await this.#storage.put('workflows', workflow.name, workflow, { ifAbsent: true })))
        throw new ConflictError('workflow', workflow.name);
      const { version } = await this.#history.record(
        'workflow',
        workflow.name,
        'create',
        workflow,
        options.by,
      );
      prepared.plan.version = version;
      this.#prepared.set(workflow.name, prepared);
      return workflow;
    });
  }

  /**
   * Creates or replaces a workflow; resolves with whether it was created. `put` is the verb every
   * registry uses for this (`engine.catalog.putEntity`, `engine.applications.put`, `engine.scripts.put`);
   * `replace` is the same.
   * @throws {@link ValidationError}
   */
  put(
    definition: WorkflowBody,
    options: DefinitionWriteOptions = {},
  ): Promise<{ workflow: Workflow; created: boolean }> {
    return this.replace(definition, options);
  }

  /** Creates or replaces a workflow; resolves with whether it was created. The same as {@link WorkflowRegistry.put}. */
  async replace(
    definition: WorkflowBody,
    options: DefinitionWriteOptions = {},
  ): Promise<{ workflow: Workflow; created: boolean }> {
    await this.#ready();
    const prepared = this.#prepare(definition, true);
    const workflow = prepared.plan.workflow;
    return this.#writes.run(['workflows'], async () => {
      await this.#checkReach(workflow);
      // Created or replaced as one storage call decides, also between engines of several processes.
      const created = await createOrReplace(this.#storage, 'workflows', workflow.name, workflow);
      const action = created ? 'create' : 'replace';
      const { version } = await this.#history.record('workflow', workflow.name, action, workflow, options.by);
      prepared.plan.version = version;
      this.#prepared.set(workflow.name, prepared);
      return { workflow, created };
    });
  }

  /** A workflow definition. @throws {@link NotFoundError} */
  async get(name: string): Promise<Workflow> {
    await this.#ready();
    const workflow = await this.#storage.get<Workflow>('workflows', name);
    if (!workflow) throw new NotFoundError('workflow', name);
    return workflow;
  }

  /** Every workflow definition, ordered by name. */
  async list(): Promise<Workflow[]> {
    await this.#ready();
    return (await this.#storage.list<Workflow>('workflows')).map((entry) => entry.value);
  }

  /**
   * Deletes a workflow; resolves with whether it existed.
   * @throws {@link StepwireError} `conflict` when triggers start it or application forms run it
   *   (delete or change them first), naming them.
   */
  async delete(name: string, options: DefinitionWriteOptions = {}): Promise<boolean> {
    await this.#ready();
    const { triggers, forms } = await this.#usedBy(name);
    if (triggers.length + forms.length > 0) {
      const uses = [
        ...(triggers.length > 0
          ? [
              `started by ${triggers.length === 1 ? 'trigger' : 'triggers'} ${listNames(triggers.map(quoteName))}`,
            ]
          : []),
        ...(forms.length > 0
          ? [`run by ${forms.length === 1 ? 'form' : 'forms'} ${listNames(forms.map(describeForm))}`]
          : []),
      ];
      const them = triggers.length + forms.length === 1 ? 'it' : 'them';
      throw new StepwireError(
        'conflict',
        `workflow ${quoteName(name)} is ${uses.join(' and ')}: ${forms.length > 0 ? 'change or delete' : 'delete'} ${them} first`,
      );
    }
    return this.#writes.run(['workflows'], async () => {
      this.#prepared.delete(name);
      const existed = await this.#storage.delete('workflows', name);
      if (existed) await this.#history.record('workflow', name, 'delete', null, options.by);
      return existed;
    });
  }

  /**
   * The versions of a workflow, oldest first, a page at a time: one per create, replace and delete,
   * each with who made it (when known), when, and the definition after it.
   * @throws {@link NotFoundError} when no workflow of that name ever existed; {@link ValidationError}
   *   for a bad `after` or `limit`.
   */
  async versions(name: string, query: VersionQuery = {}): Promise<VersionPage<Workflow>> {
    await this.#ready();
    return this.#history.list('workflow', name, query, () => this.#storage.get('workflows', name));
  }

  /**
   * Validates a definition without storing it and returns it as it would be stored; a problem
   * throws, listing every one, each naming the step and field.
   * @throws {@link ValidationError}
   */
  validate(definition: WorkflowBody): Workflow {
    return this.#prepare(definition, true).plan.workflow;
  }

  /**
   * The plan of a definition snapshot kept in a durable run (validated when it was stored), planned
   * once per distinct definition. @internal
   */
  planOf(definition: unknown): Plan {
    const json = JSON.stringify(definition);
    let plan = this.#snapshots.get(json);
    if (!plan) {
      plan = this.#prepare(definition).plan;
      if (this.#snapshots.size >= 64) this.#snapshots.delete(this.#snapshots.keys().next().value!);
      this.#snapshots.set(json, plan);
    }
    return plan;
  }

  /**
   * The plan of a workflow as it was at `version` (a run record's `workflow_version`), or as it is
   * now when the version is not known. @internal
   */
  async planAt(name: string, version: number | undefined): Promise<Plan> {
    await this.#ready();
    const kept =
      version === undefined ? undefined : await this.#history.get<Workflow>('workflow', name, version);
    if (kept?.definition) return this.planOf(kept.definition);
    return (await this.prepared(name)).plan;
  }

  /** Refuses a workflow that can reach itself through the stored workflows it runs. */
  async #checkReach(workflow: Workflow): Promise<void> {
    const issues = await selfReachIssues(workflow, async (name) =>
      this.#storage.get<Workflow>('workflows', name),
    );
    if (issues.length > 0)
      throw new ValidationError(issues, `Invalid workflow "${workflow.name}": ${formatIssues(issues)}`);
  }

  /**
   * Validates a definition, plans it and compiles its input schema. A new definition (`fresh`) also
   * has its `default_data` checked; one stored before that check is taken as it is.
   */
  #prepare(definition: unknown, fresh = false): PreparedWorkflow {
    const deep = depthProblem(definition);
    if (deep) throw new ValidationError([deep], `Invalid workflow: ${formatIssues([deep])}`);
    const shape = check(WorkflowSchema, definition);
    if (!shape.ok) throw new ValidationError(shape.issues, `Invalid workflow: ${formatIssues(shape.issues)}`);
    const workflow = shape.value;
    const issues: Issue[] = [];
    let input: CompiledSchema | undefined;
    let properties: Set<string> | undefined;
    if (workflow.workflow_input) {
      try {
        input = compileSchema(workflow.workflow_input.input_schema, { path: 'workflow_input.input_schema' });
      } catch (error) {
        if (error instanceof ValidationError) issues.push(...error.issues);
        else throw error;
      }
      properties = declaredProperties(workflow.workflow_input.input_schema);
      const defaults = workflow.workflow_input.default_data;
      if (fresh && input && defaults) issues.push(...defaultIssues(input, defaults));
    }
    const { plan, issues: planIssues } = planWorkflow(workflow, {
      hasAction: this.#hasAction,
      inputProperties: properties,
    });
    issues.push(...planIssues, ...selfCallIssues(workflow));
    if (issues.length > 0)
      throw new ValidationError(issues, `Invalid workflow "${workflow.name}": ${formatIssues(issues)}`);
    return { json: JSON.stringify(workflow), checkedAt: Date.now(), plan, input };
  }

  /**
   * The stored workflow, planned and compiled. Definitions this engine stored are used from memory;
   * others are re-read from storage at most every {@link DEFINITION_RECHECK_MS}, in case another engine
   * sharing the storage changed them. @internal
   */
  async prepared(name: string): Promise<PreparedWorkflow> {
    if (!this.#opened) {
      await this.#ready();
      this.#opened = true;
    }
    const cached = this.#prepared.get(name);
    const now = Date.now();
    if (cached && now - cached.checkedAt < DEFINITION_RECHECK_MS) return cached;
    const workflow = await this.get(name);
    const json = JSON.stringify(workflow);
    if (cached && cached.json === json) {
      cached.checkedAt = now;
      return cached;
    }
    const prepared = this.#prepare(workflow);
    // The stored definition's version: the latest, when it holds this definition (another engine
    // may have changed it since it was read; one stored before history has none).
    const latest = await this.#history.latest('workflow', name);
    if (latest && JSON.stringify(latest.definition) === json) prepared.plan.version = latest.version;
    this.#prepared.set(name, prepared);
    return prepared;
  }
}

/** The top-level properties an input schema declares; undefined when it allows any. */
function declaredProperties(schema: Record<string, unknown>): Set<string> | undefined {
  const properties = schema['properties'];
  if (typeof properties !== 'object' || properties === null) return undefined;
  if (schema['additionalProperties'] !== false && schema['additionalProperties'] !== undefined)
    return undefined;
  return new Set(Object.keys(properties));
}

/**
 * The problems of a workflow's `default_data` against its input schema: what the defaults hold that
 * the schema refuses. What an empty input lacks too (a required property the defaults do not give)
 * is the caller's to give, not a problem of the defaults.
 */
function defaultIssues(input: CompiledSchema, defaults: Record<string, unknown>): Issue[] {
  const lacking = new Set(input.validate({}).map((issue) => `${issue.code} ${issue.path}`));
  return input
    .validate(defaults)
    .filter((issue) => !lacking.has(`${issue.code} ${issue.path}`))
    .map((issue) => ({
      ...issue,
      path: `workflow_input.default_data${issue.path.startsWith('[') || issue.path === '' ? '' : '.'}${issue.path}`,
      message: `default_data: ${issue.message}`,
    }));
}
