/**
 * What a durable run does next, decided from its committed record alone: which steps are ready,
 * which are skipped, when the run ends. It runs inside the queue's commit, with the run locked, so
 * two branches finishing at once on two workers still start their join exactly once.
 * @module
 */
import type { EnqueuedJob, RunChange, StepJob } from '../adapters/queue.js';
import type { Workflow } from '../schema/index.js';
import type { Plan, PlannedStep, RunServices } from './plan-types.js';
import type { RunError, RunEvent, RunRecord, StepRecord } from './record.js';
import { Execution, type DeliveredStep } from './run.js';
import { ITEMS_LOST } from './for-each.js';

/** What the engine keeps beside a durable run's record. @internal */
export interface DurableState {
  /** The workflow as it was when the run started: replacing it never changes this run. */
  definition: Workflow;
  /** Steps enqueued or skipped so far: each is enqueued once. */
  enqueued: string[];
  /** Workflows from the top run down to this one, for the depth of child runs. */
  chain: string[];
}

/** What happened to a durable run. @internal */
export type Happening =
  | { kind: 'start' }
  | { kind: 'running' }
  | { kind: 'step'; job: StepJob; delivered: DeliveredStep; events: RunEvent[] }
  | { kind: 'lost'; job: StepJob; deliveries: number }
  | { kind: 'timeout' }
  | { kind: 'cancel' };

const FINAL_STEP = new Set(['succeeded', 'failed', 'skipped']);

/** Whether a run status is final. @internal */
export function isFinal(status: string): boolean {
  return status !== 'queued' && status !== 'running';
}

/**
 * The change a happening makes to a run, or undefined when it changes nothing (the run has ended,
 * or the step's result was committed by an earlier delivery).
 * @internal
 */
export function advance(
  plan: Plan,
  services: RunServices,
  record: RunRecord,
  state: DurableState,
  happening: Happening,
): RunChange | undefined {
  if (isFinal(record.status)) return undefined;
  const events: RunEvent[] = [];
  const jobs: EnqueuedJob[] = [];
  const at = new Date().toISOString();
  const finish = (status: 'succeeded' | 'failed' | 'cancelled', error: RunError | null, output: unknown) => {
    record.status = status;
    record.error = error;
    record.output = output;
    record.finished_at = at;
    for (const step of record.steps)
      if (step.status === 'running') {
        step.status = 'failed';
        step.finished_at = at;
        step.error = {
          code: 'stopped',
          message: `the run ${status === 'cancelled' ? 'was cancelled' : 'ended'} before this step finished`,
        };
      }
    events.push({ type: 'run.finished', run_id: record.id, status, error, at });
  };
  switch (happening.kind) {
    case 'start':
      break;
    case 'running':
      if (record.status !== 'queued') return undefined;
      record.status = 'running';
      return { record, state, events, jobs };
    case 'cancel':
      finish('cancelled', { code: 'cancelled', message: 'the run was cancelled' }, null);
      return { record, state, events, jobs };
    case 'timeout':
      finish(
        'failed',
        { code: 'limit_exceeded', message: 'the run took longer than its time limit (limits.runTimeoutMs)' },
        null,
      );
      return { record, state, events, jobs };
    case 'lost': {
      const { step } = happening.job;
      if (stepRecord(record, step) && FINAL_STEP.has(stepRecord(record, step)!.status)) return undefined;
      const error: RunError = {
        code: 'step_lost',
        step,
        message: `step "${step}" failed: it was delivered ${happening.deliveries} times and its worker stopped each time`,
      };
      put(plan, record, { ...emptyStep(step), status: 'failed', finished_at: at, error });
      events.push({ type: 'step.failed', run_id: record.id, step, error, duration_ms: 0, at });
      finish('failed', error, null);
      return { record, state, events, jobs };
    }
    case 'step':
      if (!applyStep(plan, record, happening, events, jobs, finish)) return undefined;
      break;
  }
  record.status = isFinal(record.status) ? record.status : 'running';
  if (!isFinal(record.status)) schedule(plan, services, record, state, events, jobs, finish, at);
  return { record, state, events, jobs };
}

/** Applies a delivered step's outcome; false when it is stale (committed before, or superseded). */
function applyStep(
  plan: Plan,
  record: RunRecord,
  happening: Extract<Happening, { kind: 'step' }>,
  events: RunEvent[],
  jobs: EnqueuedJob[],
  finish: (status: 'failed', error: RunError, output: null) => void,
): boolean {
  const { job, delivered } = happening;
  const existing = stepRecord(record, job.step);
  if (existing && (FINAL_STEP.has(existing.status) || existing.attempts >= job.attempt)) return false;
  const planned = plan.steps[plan.indexByName.get(job.step) ?? -1];
  if (!planned) return false;
  const step: StepRecord = {
    ...delivered.record,
    started_at: existing?.started_at ?? delivered.record.started_at,
  };
  const { outcome } = delivered;
  events.push(...happening.events);
  const at = step.finished_at ?? new Date().toISOString();
  const duration_ms = Math.max(0, Date.parse(at) - Date.parse(step.started_at ?? at));
  if (outcome.error === null) {
    Object.assign(step, { status: 'succeeded', output: outcome.output, error: null });
    events.push({ type: 'step.succeeded', run_id: record.id, step: job.step, duration_ms, at });
  } else if (delivered.retryDelay !== undefined) {
    Object.assign(step, { status: 'running', output: null, error: null, finished_at: null });
    jobs.push({ job: { ...job, attempt: job.attempt + 1 }, delayMs: delivered.retryDelay });
  } else {
    const { code, message } = outcome.error;
    const error = { ...outcome.error, step: job.step, message: `step "${job.step}" failed: ${message}` };
    Object.assign(step, { status: 'failed', error, output: null });
    events.push({ type: 'step.failed', run_id: record.id, step: job.step, error, duration_ms, at });
    if (planned.onError === 'fail' || code === ITEMS_LOST) {
      put(plan, record, step);
      finish('failed', error, null);
      return true;
    }
    step.output = { error: { code, message } };
  }
  put(plan, record, step);
  return true;
}

/** Enqueues every step whose dependencies have finished, skipping those whose conditions fail. */
function schedule(
  plan: Plan,
  services: RunServices,
  record: RunRecord,
  state: DurableState,
  events: RunEvent[],
  jobs: EnqueuedJob[],
  finish: (status: 'succeeded' | 'failed', error: RunError | null, output: unknown) => void,
  at: string,
): void {
  const enqueued = new Set(state.enqueued);
  for (let changed = true; changed;) {
    changed = false;
    const execution = Execution.resume(plan, record, services, {}, state.chain);
    for (const index of plan.order) {
      const planned = plan.steps[index]!;
      const name = planned.step.name;
      if (enqueued.has(name) || !ready(plan, record, planned)) continue;
      enqueued.add(name);
      state.enqueued.push(name);
      if (execution.skips(planned)) {
        put(plan, record, { ...emptyStep(name), status: 'skipped', finished_at: at });
        events.push({ type: 'step.skipped', run_id: record.id, step: name, at });
        changed = true;
        break;
      }
      jobs.push({ job: { run: record.id, step: name, attempt: 1 } });
    }
  }
  const done = record.steps.filter((s) => FINAL_STEP.has(s.status)).length;
  if (done < plan.steps.length) return;
  try {
    const output = Execution.resume(plan, record, services, {}, state.chain).output();
    finish('succeeded', null, output);
  } catch (error) {
    const message = `workflow_output: ${error instanceof Error ? error.message : String(error)}`;
    const code =
      typeof (error as { code?: unknown }).code === 'string'
        ? (error as { code: string }).code
        : 'invalid_output';
    finish('failed', { code, message }, null);
  }
}

function ready(plan: Plan, record: RunRecord, planned: PlannedStep): boolean {
  return planned.dependsOn.every((d) => {
    const status = stepRecord(record, plan.steps[d]!.step.name)?.status;
    return status !== undefined && FINAL_STEP.has(status);
  });
}

function stepRecord(record: RunRecord, name: string): StepRecord | undefined {
  return record.steps.find((s) => s.name === name);
}

/** Puts a step's record in place, keeping the steps in definition order. */
function put(plan: Plan, record: RunRecord, step: StepRecord): void {
  const at = record.steps.findIndex((s) => s.name === step.name);
  if (at >= 0) record.steps[at] = step;
  else {
    record.steps.push(step);
    const order = (s: StepRecord) => plan.indexByName.get(s.name) ?? Number.MAX_SAFE_INTEGER;
    record.steps.sort((a, b) => order(a) - order(b));
  }
}

function emptyStep(name: string): StepRecord {
  return {
    name,
    status: 'pending',
    attempts: 0,
    started_at: null,
    finished_at: null,
    output: null,
    error: null,
  };
}
