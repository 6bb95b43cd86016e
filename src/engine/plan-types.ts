/**
 * The shapes the planner, the runner and the step types share, apart from their code, so that none
 * of them imports another in a circle.
 * @module
 */
import type { RunInitiator, RunRecord } from '../schema/run-record-types.js';
import type { ActionRegistry } from '../actions/registry.js';
import type { StorageAdapter } from '../adapters/types.js';
import type { Catalog } from '../catalog/catalog.js';
import type { RetryPolicy } from '../retry/index.js';
import type { OnError, PathSegment, Step, Workflow } from '../schema/index.js';
import type { ScriptSandbox } from '../script/index.js';
import type { ResolvedOptions } from './options.js';
import type { Reference, Resolver } from './references.js';
import type { ConditionExpression } from '../computed/condition.js';
import type { ScriptRegistry } from './scripts.js';

/** A wire ready to apply. @internal */
export interface PlannedWire {
  source: string;
  sourcePath: PathSegment[];
  targetPath: PathSegment[];
  /**
   * From the input: how many leading segments of `sourcePath` the input schema declares; one of
   * them that the input leaves out reads as null. 0 from a step.
   */
  declared: number;
}

/** A condition ready to evaluate. @internal */
export interface PlannedCondition {
  reference: Reference;
  value: unknown;
  /** A condition written as an expression: it holds when true over the roots it reads. */
  expression?: ConditionExpression;
  /** The references of an expression's roots, one per root it reads. */
  references?: Reference[];
}

/** The `for_each` of a step, ready to run. @internal */
export interface PlannedForEach {
  /** Resolves the list (an array or a data table). */
  list: Resolver;
  /** The list's reference, e.g. `{{orders.body.table}}`; when its root step is skipped, so is this step. */
  reference: Reference;
  /** Items that may run at once. */
  concurrency: number;
  /** The step's conditions that read the item: checked per item, an item failing them is skipped. */
  conditions: PlannedCondition[];
}

/** One step of a plan. @internal */
export interface PlannedStep<S extends Step = Step> {
  index: number;
  step: S;
  /** Resolves the step's own data (the part its step type names) with references filled in. */
  data: Resolver;
  wires: PlannedWire[];
  conditions: PlannedCondition[];
  /** Indexes of the steps this one waits for. */
  dependsOn: number[];
  /** The runner's retry policy; undefined: one attempt (also when the step type retries itself). */
  retry: RetryPolicy | undefined;
  /** Whether the step type applies the step's `retry` itself (a request step), reporting its tries. */
  retriesItself: boolean;
  /** The step's `for_each`; undefined for a step that runs once. */
  forEach: PlannedForEach | undefined;
  /** What a failure does (per item in a `for_each` step). */
  onError: OnError;
  /**
   * The secrets the step's data names (`{{secrets.NAME}}`), resolved when an attempt starts;
   * undefined for a step that names none (most), which then pays nothing for them.
   */
  secrets: readonly string[] | undefined;
  /**
   * What the step's type keeps from one run of the plan to the next, made at its first run (the
   * `l2` type: its action's key), so a run does not look it up again; undefined until then.
   */
  typeState: unknown;
}

/** A workflow turned into what the runner needs: pure data, computed once per definition. @internal */
export interface Plan {
  workflow: Workflow;
  /** The version of the stored definition planned (its history's number); undefined when not known. */
  version?: number | undefined;
  inputName: string;
  steps: PlannedStep[];
  /** Step indexes in the order they start: dependencies first, otherwise definition order. */
  order: number[];
  output: Resolver | undefined;
  /** Step index by name. */
  indexByName: ReadonlyMap<string, number>;
  /** For each step, the indexes of the steps that wait for it. */
  dependents: number[][];
  /**
   * The same, packed for a run's scheduler: the steps waiting for step `i` are
   * `waiters[waitersFrom[i]]` up to `waiters[waitersFrom[i + 1]]`; and how many steps each step
   * waits for. Two small arrays a long run reads in order, not one list per step.
   */
  waiters: Int32Array;
  waitersFrom: Int32Array;
  waitCounts: Int32Array;
}

/** Inputs of {@link planWorkflow}. @internal */
export interface PlanContext {
  /** True when an l2 action exists. */
  hasAction(provider: string, module: string, action: string): boolean;
  /** Names of the input's declared top-level properties, or undefined when any property may exist. */
  inputProperties: ReadonlySet<string> | undefined;
}

/** What an execution needs from the engine. @internal */
export interface RunServices {
  /** The plan and the checked input of a workflow run as a child. @throws as `engine.run` does. */
  prepareRun(name: string, input: unknown): Promise<{ plan: Plan; input: unknown }>;
  options: ResolvedOptions;
  actions: ActionRegistry;
  catalog: Catalog;
  scripts: ScriptRegistry;
  sandbox: ScriptSandbox;
  storage: StorageAdapter;
  /** Runs executing in this process by id, child runs included: what `engine.cancel` aborts. */
  live: Map<string, { abort(): void }>;
  /**
   * Who started the run, kept in its record (and its child runs'); `catalog` is then the catalog as
   * it sees it, unless the workflow runs as the service.
   */
  initiator?: RunInitiator | undefined;
  /** Called with the record of a run of this process that waits (a child run): its timers are armed. */
  onWaiting?: ((record: RunRecord) => void) | undefined;
}
