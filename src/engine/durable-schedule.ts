/**
 * What a durable run does next, decided from its committed record alone: which steps are ready,
 * which are skipped, when the run ends. It runs inside the queue's commit, with the run locked, so
 * two branches finishing at once on two workers still start their join exactly once.
 * @module
 */
import type {
  EnqueuedJob,
  ItemResult,
  RunChange,
  RunState,
  StateChange,
  StepJob,
} from '../adapters/queue.js';
import { LISTED_ITEM_FAILURES, type StepItems, type Workflow } from '../schema/index.js';
import type { Plan, PlannedStep, RunServices } from './plan-types.js';
import type { RunError, RunEvent, RunRecord, StepRecord } from './record.js';
import { Execution, type DeliveredStep } from './run.js';
import { ITEMS_LOST, type ItemOutcome } from './for-each.js';
import { isWaiting, type StepWait, type Waiting } from './waits/waiting.js';
import {
  RECORD_TOO_LARGE,
  finalOutputProblem,
  recordTooLarge,
  stepChars,
  stepsTooLarge,
} from './record-size.js';

/** What the engine keeps beside a durable run's record. @internal */
export interface DurableState {
  /** The workflow as it was when the run started: replacing it never changes this run. */
  definition: Workflow;
  /** Steps enqueued or skipped so far: each is enqueued once. */
  enqueued: string[];
  /** Workflows from the top run down to this one, for the depth of child runs. */
  chain: string[];
  /** The `for_each` steps whose items are on the queue, by step name. */
  items?: Record<string, ItemsState>;
  /**
   * When the run's time limit ends it (ISO): a worker executing a step past it ends the run there,
   * as the timer job would once a slot is free (missing in runs started before it was kept).
   */
  deadline?: string;
  /** The run's time limit in ms: it starts again when a waiting run goes on (missing in older runs). */
  timeoutMs?: number;
  /**
   * Characters of JSON the records of the steps committed so far take, counted once as each step's
   * result commits: past the run-record limit the run fails (see `record-size.ts`).
   */
  recordChars?: number;
}

/**
 * The items of one `for_each` step on the queue: at most `concurrency` are enqueued at a time, each
 * item's outcome is kept beside the run, and once none is left the step's own job comes again to
 * collect them into its output.
 * @internal
 */
export interface ItemsState {
  /** Items in the list. */
  total: number;
  /** The next index to enqueue. */
  next: number;
  /** Items enqueued without an outcome yet: `[index, attempt]`. */
  running: [number, number][];
  /** The first failed item under `on_error: "fail"`: no further item starts. */
  failure?: RunError;
  /** The live summary (failures in the order they came). */
  summary: StepItems;
  /** Attempts made by every item so far. */
  attempts: number;
  /** Set when the step's job was enqueued again to collect the items. */
  collecting?: boolean;
  /** Items that wait, with what for and the attempt that began to: `[index, wait, attempt]`. */
  waiting?: [number, StepWait, number][];
  /** Items to run again (their wait ended), before the next new one: `[index, attempt]`. */
  again?: [number, number][];
  /**
   * Set when a wait ended while items ran: an item that reports it waits may have looked before
   * that end, so it runs once more (those listed have) before it counts as waiting.
   */
  looked?: number[];
}

/** What happened to one item of a `for_each` step on the queue. @internal */
export type ItemHappening =
  | { kind: 'item'; job: StepJob; outcome: ItemOutcome; retryDelay: number | undefined; events: RunEvent[] }
  | { kind: 'lost'; job: StepJob; deliveries: number };

/** What happened to a durable run. @internal */
export type Happening =
  | { kind: 'start' }
  | { kind: 'step'; job: StepJob; delivered: DeliveredStep; events: RunEvent[] }
  | { kind: 'lost'; job: StepJob; deliveries: number }
  | { kind: 'fanout'; job: StepJob; total: number; startedAt: string }
  | { kind: 'timeout' }
  | { kind: 'cancel' }
  /** A wait of the step ended: it runs again (and finds how). */
  | { kind: 'resume'; step: string };

const FINAL_STEP = new Set(['succeeded', 'failed', 'skipped']);

/** Whether a run status is final. @internal */
export function isFinal(status: string): boolean {
  return status !== 'queued' && status !== 'running' && status !== 'waiting';
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
  const change = advanceRun(plan, services, record, state, happening);
  if (change) change.progress = progressOf(state);
  return change;
}

function advanceRun(
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
    const ended = `the run ${status === 'cancelled' ? 'was cancelled' : 'ended'}`;
    // The counts of a for_each still going add up to its total: its items without an outcome (on a
    // worker, waiting for one or for a retry) failed, stopped; those never enqueued are skipped.
    for (const [name, items] of Object.entries(state.items ?? {})) {
      const step = stepRecord(record, name);
      if (!step) continue;
      const { summary } = items;
      const error = { code: 'stopped', message: `${ended} before this item finished` };
      for (const [index, attempt] of items.running) {
        // Its attempts count in the step's, as its entry in `failures` says.
        items.attempts += attempt;
        summary.failed += 1;
        if (summary.failures.length < LISTED_ITEM_FAILURES)
          summary.failures.push({ index, attempts: attempt, error });
      }
      summary.skipped += items.total - items.next;
      Object.assign(step, { attempts: items.attempts, items: summary });
    }
    delete state.items;
    // Steps handed to the queue without an outcome (on a worker, waiting for one, or for a retry) are
    // stopped: listed as failed with code `stopped`, each with its `step.failed` event.
    const stopped: string[] = [];
    const stop = { code: 'stopped', message: `${ended} before this step finished` };
    const unfinished = [...state.enqueued, ...record.steps.map((step) => step.name)];
    for (const name of new Set(unfinished)) {
      const existing = stepRecord(record, name);
      if (!plan.indexByName.has(name) || (existing && FINAL_STEP.has(existing.status))) continue;
      const step = existing ?? emptyStep(name);
      Object.assign(step, { status: 'failed', finished_at: at, error: stop });
      if (!existing) put(plan, record, step);
      stopped.push(name);
      const duration_ms = step.started_at ? Math.max(0, Date.parse(at) - Date.parse(step.started_at)) : 0;
      events.push({ type: 'step.failed', run_id: record.id, step: name, error: stop, duration_ms, at });
    }
    // A cancelled or timed-out run names the step it stopped, as a run in process does (a record
    // too large is no step's doing, as in process).
    if (error && error.step === undefined && error.code !== RECORD_TOO_LARGE && stopped[0] !== undefined)
      record.error = { ...error, step: stopped[0] };
    events.push({ type: 'run.finished', run_id: record.id, status, error: record.error, at });
  };
  switch (happening.kind) {
    case 'start':
      break;
    case 'cancel':
      finish('cancelled', { code: 'cancelled', message: 'the run was cancelled' }, null);
      return { record, state, events, jobs };
    case 'timeout':
      // Time spent waiting does not count: the limit starts again when the run goes on.
      if (record.status === 'waiting') return undefined;
      if (state.deadline !== undefined && Date.parse(state.deadline) > Date.now() + 1000) return undefined;
      finish(
        'failed',
        {
          code: 'limit_exceeded',
          message: 'the run took longer than its time limit (its timeoutMs, else limits.runTimeoutMs)',
        },
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
    case 'step': {
      const waited = record.status === 'waiting';
      if (!applyStep(plan, record, state, happening, events, jobs, finish)) return undefined;
      // A wait that ended at its time (a timer, a timeout) was delivered as its step: the run goes
      // on, and its time limit starts again, as when a decision or an event resumes it.
      if (waited && !isFinal(record.status)) restartLimit(record, state, events, jobs);
      break;
    }
    case 'fanout':
      if (!fanOut(plan, record, state, happening, jobs)) return undefined;
      break;
    case 'resume': {
      const step = stepRecord(record, happening.step);
      if (step?.status !== 'waiting') return undefined;
      const planned = plan.steps[plan.indexByName.get(happening.step) ?? -1];
      const items = state.items?.[happening.step];
      if (planned?.forEach) {
        // The items that wait run again, and find how their waits ended (or wait again); those
        // running now may have looked before this end, so each looks once more (see `looked`).
        if (!items || (items.collecting && !items.waiting?.length)) return undefined;
        const waiting = items.waiting ?? [];
        items.looked = waiting.map(([index]) => index);
        if (waiting.length === 0) return { record, state, events, jobs };
        items.again = [
          ...(items.again ?? []),
          ...waiting.map(([index, , n]): [number, number] => [index, n + 1]),
        ];
        items.waiting = [];
        // A collect under way is stale now: it is dropped, and the items are collected again after.
        items.collecting = false;
        const job = { run: record.id, step: happening.step, attempt: step.attempts + 1 };
        enqueueItems(items, planned.forEach.concurrency, job, jobs);
      } else jobs.push({ job: { run: record.id, step: happening.step, attempt: step.attempts + 1 } });
      if (record.status === 'waiting') restartLimit(record, state, events, jobs);
      record.status = 'running';
      return { record, state, events, jobs };
    }
  }
  const was = record.status;
  record.status = isFinal(record.status) ? record.status : 'running';
  if (!isFinal(record.status)) schedule(plan, services, record, state, events, jobs, finish, at);
  if (!isFinal(record.status) && onlyWaiting(plan, record, state)) {
    record.status = 'waiting';
    if (was !== 'waiting') {
      const waiting = record.steps.filter((s) => s.status === 'waiting').map((s) => s.name);
      events.push({ type: 'run.waiting', run_id: record.id, waiting, at });
    }
  }
  return { record, state, events, jobs };
}

/** A waiting run goes on: `run.resumed`, and its time limit starts again (waiting does not count). */
function restartLimit(record: RunRecord, state: DurableState, events: RunEvent[], jobs: EnqueuedJob[]): void {
  events.push({ type: 'run.resumed', run_id: record.id, at: new Date().toISOString() });
  if (state.timeoutMs === undefined) return;
  state.deadline = new Date(Date.now() + state.timeoutMs).toISOString();
  jobs.push({ job: { run: record.id, step: '', attempt: 1 }, delayMs: state.timeoutMs });
}

/** True when some step waits and no step is on the queue: the run waits for its waits. */
function onlyWaiting(plan: Plan, record: RunRecord, state: DurableState): boolean {
  let waits = false;
  for (const name of state.enqueued) {
    const step = stepRecord(record, name);
    if (!plan.indexByName.has(name)) continue;
    if (step?.status === 'waiting') waits = true;
    else if (!step || !FINAL_STEP.has(step.status)) return false;
  }
  return waits;
}

/** Applies a delivered step's outcome; false when it is stale (committed before, or superseded). */
function applyStep(
  plan: Plan,
  record: RunRecord,
  state: DurableState,
  happening: Extract<Happening, { kind: 'step' }>,
  events: RunEvent[],
  jobs: EnqueuedJob[],
  finish: (status: 'failed', error: RunError, output: null) => void,
): boolean {
  const { job, delivered } = happening;
  const existing = stepRecord(record, job.step);
  const planned = plan.steps[plan.indexByName.get(job.step) ?? -1];
  if (!planned || (existing && FINAL_STEP.has(existing.status))) return false;
  const waiting = happening.delivered.outcome.error === null && isWaiting(happening.delivered.outcome.output);
  if (planned.forEach) {
    // A for_each step commits when its list failed to resolve, or its items were collected; while
    // some of them wait, their state is kept for when they run again.
    const items = state.items?.[job.step];
    if (items && !items.collecting) return false;
    if (items && waiting) items.collecting = false;
    else if (state.items) delete state.items[job.step];
  } else if (existing?.status === 'waiting') {
    // Delivered again (its wait ended, or its time came): only an end changes anything.
    if (waiting) return false;
  } else if (existing && existing.attempts >= job.attempt) return false;
  const step: StepRecord = {
    ...delivered.record,
    started_at: existing?.started_at ?? delivered.record.started_at,
  };
  const { outcome } = delivered;
  events.push(...happening.events);
  if (waiting) {
    const wait = (outcome.output as Waiting).wait;
    Object.assign(step, { status: 'waiting', output: null, error: null, finished_at: null, wait });
    events.push({
      type: 'step.waiting',
      run_id: record.id,
      step: job.step,
      wait,
      at: new Date().toISOString(),
    });
    put(plan, record, step);
    // Its time: the step comes again then, and times out (or ends its timer) unless answered first.
    if (wait.due_at !== undefined)
      jobs.push({
        job: { run: record.id, step: job.step, attempt: job.attempt + 1 },
        delayMs: Math.max(1, Date.parse(wait.due_at) - Date.now()),
      });
    return true;
  }
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
  if (step.status === 'running') return true;
  state.recordChars = (state.recordChars ?? 0) + stepChars(step);
  if (stepsTooLarge(state.recordChars)) tooLarge(record, finish);
  return true;
}

/** Ends a run whose record would pass the limit: failed with `record_too_large`, no step output kept. */
function tooLarge(
  record: RunRecord,
  finish: (status: 'failed', error: RunError, output: null) => void,
): void {
  finish('failed', recordTooLarge(), null);
  for (const step of record.steps) step.output = null;
}

/** Starts the items of a `for_each` step: the first `concurrency` are enqueued. */
function fanOut(
  plan: Plan,
  record: RunRecord,
  state: DurableState,
  happening: Extract<Happening, { kind: 'fanout' }>,
  jobs: EnqueuedJob[],
): boolean {
  const { job, total, startedAt } = happening;
  const planned = plan.steps[plan.indexByName.get(job.step) ?? -1];
  const existing = stepRecord(record, job.step);
  if (!planned?.forEach || state.items?.[job.step] || (existing && existing.status !== 'running'))
    return false;
  const items: ItemsState = {
    total,
    next: 0,
    running: [],
    summary: { total, succeeded: 0, failed: 0, skipped: 0, failures: [] },
    attempts: 0,
  };
  (state.items ??= {})[job.step] = items;
  put(plan, record, {
    ...emptyStep(job.step),
    status: 'running',
    started_at: existing?.started_at ?? startedAt,
    items: { ...items.summary, failures: [] },
  });
  enqueueItems(items, planned.forEach.concurrency, job, jobs);
  return true;
}

/** Enqueues items up to `concurrency` running, or the step's own job once no item is left. */
function enqueueItems(items: ItemsState, concurrency: number, job: StepJob, jobs: EnqueuedJob[]): void {
  while (!items.failure && items.running.length < concurrency && items.again?.length) {
    const [index, attempt] = items.again.shift()!;
    items.running.push([index, attempt]);
    jobs.push({ job: { run: job.run, step: job.step, attempt, item: index } });
  }
  while (!items.failure && items.running.length < concurrency && items.next < items.total) {
    items.running.push([items.next, 1]);
    jobs.push({ job: { run: job.run, step: job.step, attempt: 1, item: items.next } });
    items.next += 1;
  }
  const left = items.next < items.total || (items.again?.length ?? 0) > 0;
  if (items.running.length === 0 && (items.failure || !left)) {
    delete items.looked;
    items.collecting = true;
    jobs.push({ job: { run: job.run, step: job.step, attempt: 1, collect: true } });
  }
}

/**
 * The change one item's outcome makes, decided on the run's status and state alone (its record may
 * be large and is not read): the item's result is kept, the next item enqueued, and when none is
 * left the step's job comes again to collect them. Undefined when the item's outcome is stale.
 * @internal
 */
export function advanceItem(plan: Plan, run: RunState, happening: ItemHappening): StateChange | undefined {
  if (isFinal(run.status)) return undefined;
  const state = run.state as DurableState;
  const { job } = happening;
  const items = state.items?.[job.step];
  const planned = plan.steps[plan.indexByName.get(job.step) ?? -1];
  if (!items || items.collecting || !planned?.forEach) return undefined;
  const at = items.running.findIndex(([index]) => index === job.item);
  if (at < 0 || items.running[at]![1] !== job.attempt) return undefined;
  const index = job.item!;
  const events: RunEvent[] = [];
  const jobs: EnqueuedJob[] = [];
  let outcome: ItemOutcome;
  if (happening.kind === 'item') {
    events.push(...happening.events);
    if (happening.retryDelay !== undefined) {
      items.running[at]![1] = job.attempt + 1;
      jobs.push({ job: { ...job, attempt: job.attempt + 1 }, delayMs: happening.retryDelay });
      return { state, progress: progressOf(state), events, jobs, results: [] };
    }
    outcome = happening.outcome;
    if (outcome.status === 'waiting') {
      // It waits: no outcome yet; once no item is left to run the step waits (see the collect).
      items.running.splice(at, 1);
      items.attempts += outcome.attempts;
      if (items.looked && !items.looked.includes(index)) {
        items.looked.push(index);
        (items.again ??= []).push([index, job.attempt + 1]);
      } else (items.waiting ??= []).push([index, outcome.wait!, job.attempt]);
      enqueueItems(items, planned.forEach.concurrency, job, jobs);
      return { state, progress: progressOf(state), events, jobs, results: [] };
    }
  } else {
    const error: RunError = {
      code: 'step_lost',
      message: `item ${index} was delivered ${happening.deliveries} times and its worker stopped each time`,
    };
    const output =
      planned.onError === 'continue' ? { error: { code: error.code, message: error.message } } : null;
    outcome = { status: 'failed', output, error, attempts: job.attempt };
    const at = new Date().toISOString();
    const finished = { type: 'item.finished', run_id: job.run, step: job.step, item: index } as const;
    events.push({ ...finished, status: 'failed', attempts: job.attempt, error, at });
  }
  items.running.splice(at, 1);
  items.attempts += outcome.attempts;
  const { summary } = items;
  summary[outcome.status as 'succeeded' | 'failed' | 'skipped'] += 1;
  if (outcome.status === 'failed') {
    const error = outcome.error!;
    if (summary.failures.length < LISTED_ITEM_FAILURES)
      summary.failures.push({ index, attempts: outcome.attempts, error });
    if (planned.onError === 'fail')
      items.failure ??= { ...error, message: `item ${index}: ${error.message}` };
  }
  const result: ItemResult = {
    step: job.step,
    item: index,
    status: outcome.status,
    attempts: outcome.attempts,
    output: outcome.output,
    error: outcome.error,
    ...(outcome.logs && outcome.logs.length > 0 ? { logs: outcome.logs } : {}),
  };
  enqueueItems(items, planned.forEach.concurrency, job, jobs);
  return { state, progress: progressOf(state), events, jobs, results: [result] };
}

/** What a run's record does not show yet: the live counts of `for_each` steps whose items run. */
function progressOf(state: DurableState): Record<string, object> | null {
  const entries = Object.entries(state.items ?? {});
  if (entries.length === 0) return null;
  const progress: Record<string, object> = {};
  for (const [name, items] of entries) progress[name] = { attempts: items.attempts, items: items.summary };
  return progress;
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
    const problem = finalOutputProblem(output, state.recordChars ?? 0, plan.output !== undefined);
    if (problem?.code === 'too_large') tooLarge(record, finish);
    else if (problem)
      finish('failed', { code: problem.code, message: `workflow_output: ${problem.message}` }, null);
    else finish('succeeded', null, output);
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
