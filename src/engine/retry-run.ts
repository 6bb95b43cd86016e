/**
 * Retrying a run from a step: a new run (`retry_of` names the old one) of the workflow as the old
 * run had it, which keeps what the steps before `from_step` did (their records and outputs, not
 * executed again) and runs `from_step` and every step after it.
 * @module
 */
import { StepwireError, ValidationError } from '../errors/index.js';
import { describeValue } from '../schema/issues.js';
import type { Plan } from './plan-types.js';
import type { RunRecord, StepRecord } from './record.js';

/** Options of `engine.retry`. */
export interface RetryOptions {
  /**
   * The step to run again from: it and every step after it run; the steps before it keep what they
   * did. @default the step the run failed at, else the first step (the whole run again)
   */
  from_step?: string;
  /** A new input (checked against the workflow's input schema). @default the old run's input */
  input?: unknown;
}

/** The statuses of a run that may be retried: it has ended. */
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

/**
 * The records of the steps a retry keeps: those before `from_step` in the run's order that ended
 * (succeeded, skipped, or failed under `on_error: continue`), as the old run recorded them. @internal
 * @throws {@link ValidationError} naming `from_step` when the workflow has no such step;
 *   a `StepwireError` `conflict` when the run has not ended or is a child run.
 */
export function keptSteps(plan: Plan, record: RunRecord, fromStep: string | undefined): StepRecord[] {
  if (!ENDED.has(record.status))
    throw new StepwireError(
      'conflict',
      `run ${record.id} is ${record.status}: only a run that has ended can be retried (cancel it first)`,
    );
  if (record.parent_run_id !== undefined)
    throw new StepwireError(
      'conflict',
      `run ${record.id} is a child run of ${record.parent_run_id}: retry its parent run`,
    );
  const from = fromStep ?? record.error?.step;
  if (fromStep !== undefined && (typeof fromStep !== 'string' || !plan.indexByName.has(fromStep)))
    throw new ValidationError([
      {
        code: 'invalid_value',
        path: 'from_step',
        message: `from_step must name a step of workflow "${plan.workflow.name}" (${plan.steps.map((s) => s.step.name).join(', ')}), got ${describeValue(fromStep)}`,
      },
    ]);
  if (from === undefined || !plan.indexByName.has(from)) return [];
  const position = plan.order.indexOf(plan.indexByName.get(from)!);
  const before = new Set(plan.order.slice(0, position).map((index) => plan.steps[index]!.step.name));
  const failedAt = record.error?.step;
  return record.steps
    .filter(
      (step) =>
        before.has(step.name) &&
        (step.status === 'succeeded' ||
          step.status === 'skipped' ||
          (step.status === 'failed' && step.name !== failedAt && step.output !== null)),
    )
    .map((step) => ({ ...step }));
}

/** The record a retry starts from: the old run's identity replaced, its kept steps in place. @internal */
export function retryRecord(
  original: RunRecord,
  id: string,
  input: unknown,
  kept: StepRecord[],
  startedAt: number,
): RunRecord {
  return {
    id,
    workflow: original.workflow,
    status: 'running',
    input,
    output: null,
    error: null,
    started_at: new Date(startedAt).toISOString(),
    finished_at: null,
    steps: kept,
    retry_of: original.id,
    ...(original.workflow_version === undefined ? {} : { workflow_version: original.workflow_version }),
  };
}
