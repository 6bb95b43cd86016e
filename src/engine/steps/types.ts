import type { Issue } from '../../errors/index.js';
import type { ActionContext } from '../../actions/registry.js';
import type { Step } from '../../schema/index.js';
import type { PlanContext, PlannedStep, RunServices } from '../plan-types.js';

/** What a step type adds to the plan of one step. @internal */
export interface StepPlan {
  /**
   * The step's own data, whose `{{...}}` references are checked now and resolved before each attempt,
   * and its path under the step (e.g. `l2_data.input_data`), which issues about it name.
   */
  data: { path: string; value: unknown };
  /** Problems found against what the engine knows when the workflow is created, paths under the step. */
  issues?: Issue[];
  /** True when `run` applies the step's `retry` itself; the runner then makes a single attempt. */
  retriesItself?: boolean;
}

/**
 * One step type: how a step of it is planned and run. The runner owns what every step shares
 * (conditions, wires, retry, timeout, events); a step type owns only its data and its work.
 * @internal
 */
export interface StepType<S extends Step = Step> {
  /** Plans one step: its data, and the problems found when the workflow is created. Pure: no I/O. */
  plan(step: S, context: PlanContext): StepPlan;
  /** Runs one attempt with the step's data resolved; returns the output or a promise of it. */
  run(planned: PlannedStep<S>, data: unknown, context: ActionContext, services: RunServices): unknown;
  /** The JSON Schema of the value at `path` in the step's output, when the type knows it. */
  outputSchema?(step: S, path: readonly string[]): Record<string, unknown> | undefined;
}
