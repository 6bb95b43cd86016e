import { LimitError, ValidationError, isStepwireError } from '../errors/index.js';
import { setOwn } from '../schema/own.js';
import type { Plan, PlannedCondition, PlannedForEach, PlannedStep, RunServices } from './plan-types.js';
import { readPath, type Scope } from './references.js';
import type { RunError, RunEvent, RunRecord, StepRecord } from './record.js';
import {
  MAX_TIMER_MS,
  NO_RETRY,
  backoffDelay,
  isRetryableError,
  retryAfterOf,
  sleep,
} from '../retry/index.js';
import { conditionHolds, missingWire, placeAt, unmergeableWire } from './step-data.js';
import { StepContext, type ContextHost } from './step-context.js';
import { stepType } from './steps/index.js';
import { ITEMS_LOST, itemScope, itemsOf, runForEach, type Attempted, type ItemOutcome } from './for-each.js';
import { childChain, childFailure, type RunLineage } from './child-runs.js';
import { NO_ATTEMPT, traceJoin, traceRun, type AttemptTrace, type RunTrace } from './tracing.js';
import { JsonText, takesJsonText } from '../adapters/json-text.js';
import { interruptedRecord } from './interrupted.js';
import { isThenable } from './thenable.js';
import { finalOutputProblem, recordTooLarge, stepsTooLarge } from './record-size.js';
import { hexOf, sha256 } from '../bytes/hex.js';

/** One delivery of a step of a durable run, executed: its record, output or error, and events. @internal */
export interface DeliveredStep {
  /** The step's record after the delivery (attempts, times, logs, items). */
  record: StepRecord;
  /** The step's output, or its error. */
  outcome: Attempted;
  /** Set when the attempt failed and may be retried: the delay before the next attempt, in ms. */
  retryDelay: number | undefined;
}

/** Options of one run. */
export interface RunOptions {
  /** Cancels the run: no further step starts, and running steps are told to stop. */
  signal?: AbortSignal;
  /**
   * Called with every event of the run, in order, while it runs. An error it throws is ignored:
   * the run and `handle.events` go on with every event.
   */
  onEvent?: (event: RunEvent) => void;
  /** Time the whole run may take, in ms. @default limits.runTimeoutMs */
  timeoutMs?: number;
  /** Independent steps that may run at once. @default limits.stepConcurrency */
  concurrency?: number;
  /**
   * A run key: the first start with a key runs the workflow; every later start of the same workflow
   * with that key gets that run (its record), whatever the input, also across engines on one storage.
   */
  key?: string;
  /**
   * The trigger that starts the run: its keys (`key`) are kept apart from callers' keys, so a key a
   * caller picks can never match one a webhook delivery or a schedule slot uses. @internal
   */
  trigger?: string;
  /**
   * W3C `traceparent` of the request that started the run: the run's OpenTelemetry span becomes its
   * child. Without it the span is a child of the active context.
   */
  traceparent?: string | undefined;
}

const PERSIST_EVERY_MS = 250;

/**
 * Most finished steps serialized in one `JSON.stringify`: V8 takes about half as long a record in
 * texts of 50 or 100 records as in one text of 1,000 (0.56 against 1.0 us a record of a no-op step).
 */
const STEPS_PER_TEXT = 50;

/**
 * The reason a durable run's worker aborts a step's signal with when the run's time limit ends: the
 * step's span then ends as a timed-out step in process does (`limit_exceeded`, not `cancelled`). @internal
 */
export const RUN_DEADLINE: unique symbol = Symbol('the run time limit');

/** One run of one workflow: owns its steps' state, retries, timeouts, events and record. @internal */
export class Execution implements ContextHost {
  readonly id: string;
  #plan: Plan;
  #services: RunServices;
  #input: unknown;
  #emit: ((event: RunEvent) => void) | undefined;
  /** Made when the run's signal is first asked for: most runs never do (see {@link Execution.signal}). */
  #controller: AbortController | undefined;
  /** The run was cancelled or reached its time limit: no further step starts. */
  #aborted = false;
  #timedOut = false;
  /** The timer of the run's time limit, armed once a step awaits, and the time it still has to wait. */
  #limitTimer: ReturnType<typeof setTimeout> | undefined;
  #limitLeft = 0;
  /** The scheduler's state: the steps each step still waits for, the next in order, those running. */
  #waiting: Int32Array = EMPTY_COUNTS;
  #next = 0;
  #running = 0;
  /** Resolves the schedule once its last step settles (when some step awaited). */
  #scheduled: ((failure: RunError | null) => void) | undefined;
  #timeoutMs: number;
  #userSignal: AbortSignal | undefined;
  #concurrency: number;
  #outputs: unknown[];
  #skipped: boolean[];
  #records: StepRecord[];
  #startedAt = Date.now();
  #lastPersist = Date.now();
  /** The save in flight, which the next one waits for; undefined when none is. */
  #persisting: Promise<unknown> | undefined;
  /**
   * True while the steps that start at once are started (the first turn of the scheduler): a save
   * due then is made after it, when a step awaits (no one can read the record before), else at the end.
   */
  #settingOff = false;
  #persistDue = false;
  /** The first failure of the run; no step or item starts after it. */
  #failure: RunError | null = null;
  #parentId: string | undefined;
  /** Workflows from the run started directly down to this one. */
  #chain: readonly string[];
  #persistLater: ReturnType<typeof setTimeout> | undefined;
  /** When the run's time limit ends, when this execution knows it (not when it resumes a durable run). */
  #runDeadline: number | undefined;
  /** A durable run's execution in a worker: its steps may be delivered again after a worker died. */
  #resumed = false;
  /** Per idempotency key, the number the next child run of this execution tries (durable runs only). */
  #childNumbers: Map<string, Promise<number>> | undefined;
  /** Whether records are saved with finished steps as {@link JsonText} (see `takesJsonText`). */
  #asText: boolean;
  /** The input's JSON text, made at the first save. */
  #inputText: JsonText | undefined;
  /**
   * Finished steps' records as JSON text, made at the first save after they finished: runs of steps
   * by the index of their first step, to the index after their last.
   */
  #savedSteps = new Map<number, { end: number; text: JsonText }>();
  /** Characters of the finished steps' JSON text made so far (see {@link stepsTooLarge}). */
  #savedChars = 0;
  /** The first step of the next block of steps {@link Execution.#textBlock} makes text of. */
  #textFrom = 0;
  #finished = false;
  #parentTrace: string | undefined;
  #trace: RunTrace | undefined;

  constructor(
    plan: Plan,
    input: unknown,
    services: RunServices,
    options: RunOptions,
    lineage?: RunLineage,
    id: string = globalThis.crypto.randomUUID(),
  ) {
    this.id = id;
    this.#parentId = lineage?.parentId;
    this.#chain = lineage?.chain ?? [plan.workflow.name];
    this.#plan = plan;
    this.#services = services;
    // Only storages that write JsonText themselves (not their subclasses, which may read records).
    this.#asText = takesJsonText(services.storage);
    this.#input = input;
    this.#emit = options.onEvent;
    this.#timeoutMs = options.timeoutMs ?? services.options.limits.runTimeoutMs;
    this.#runDeadline = this.#startedAt + this.#timeoutMs;
    this.#userSignal = options.signal;
    this.#parentTrace = options.traceparent;
    this.#concurrency = Math.max(
      1,
      Math.floor(options.concurrency ?? services.options.limits.stepConcurrency),
    );
    const count = plan.steps.length;
    this.#outputs = new Array<unknown>(count).fill(null);
    this.#skipped = new Array<boolean>(count).fill(false);
    // A step's record is made when it starts (see #recordOf): in a long run, it is then at hand.
    this.#records = new Array<StepRecord>(count).fill(PENDING);
    this.#scopeOnce = new RunScope(plan, input, this.#outputs, this.#skipped);
  }

  /**
   * A durable run picked up from its stored record, to execute one step delivered by the queue (see
   * {@link Execution.runDelivered}) or to evaluate what the finished steps make of the rest. Its
   * spans join the run's trace through the record's `traceparent`. @internal
   */
  static resume(
    plan: Plan,
    record: RunRecord,
    services: RunServices,
    options: RunOptions,
    chain?: readonly string[],
  ): Execution {
    const lineage = { parentId: record.parent_run_id ?? '', chain: chain ?? [plan.workflow.name] };
    const execution = new Execution(plan, record.input, services, options, lineage, record.id);
    if (record.parent_run_id === undefined) execution.#parentId = undefined;
    execution.#startedAt = Date.parse(record.started_at);
    // A durable run's time limit is the queue's timer: its length is not in the record.
    execution.#runDeadline = undefined;
    execution.#resumed = true;
    for (const step of record.steps) {
      const index = execution.#indexOf(step.name);
      if (index < 0) continue;
      execution.#records[index] = { ...step };
      if (step.status === 'skipped') execution.#skipped[index] = true;
      else if (step.status === 'succeeded' || step.status === 'failed')
        execution.#outputs[index] = step.output;
    }
    execution.#trace = traceJoin(plan.workflow.name, record.id, record.traceparent);
    return execution;
  }

  /**
   * Executes one delivery of a step of a durable run: one attempt of a plain step (numbered
   * `attempt`, with the delay before the next one when it may be retried), or every item of a
   * `for_each` step. Writes nothing; the caller commits the outcome. @internal
   */
  async runDelivered(planned: PlannedStep, attempt: number): Promise<DeliveredStep> {
    const onCancel = () => this.abort();
    this.#userSignal?.addEventListener('abort', onCancel, { once: true });
    if (this.#userSignal?.aborted) this.abort();
    const record = this.#recordOf(planned.index);
    record.status = 'running';
    record.started_at ??= iso(Date.now());
    try {
      const outcome: Attempted & { retryDelay?: number } = planned.forEach
        ? await this.#runItems(planned, planned.forEach, record)
        : await this.#attempts(planned, this.#scopeOnce, record, undefined, attempt, true);
      record.finished_at = iso(Date.now());
      return { record, outcome, retryDelay: outcome.retryDelay };
    } finally {
      this.#userSignal?.removeEventListener('abort', onCancel);
    }
  }

  /** The items of a `for_each` step. @throws a `ValidationError` when its list is not a list. @internal */
  itemList(planned: PlannedStep): unknown[] {
    const each = planned.forEach!;
    return itemsOf(each.list(this.#scopeOnce), each.reference.text);
  }

  /**
   * Executes one delivery of one item of a durable `for_each` step: attempt `attempt` (the delay
   * before the next one when it may be retried), or nothing when the item's conditions do not hold.
   * Writes nothing; the caller commits the outcome. @internal
   */
  async runItem(
    planned: PlannedStep,
    items: readonly unknown[],
    index: number,
    attempt: number,
  ): Promise<ItemOutcome & { retryDelay: number | undefined }> {
    const scope = itemScope(this.#scopeOnce, items[index], index);
    if (!planned.forEach!.conditions.every((c) => this.#holds(c, scope)))
      return { status: 'skipped', output: null, error: null, attempts: 0, retryDelay: undefined };
    const onCancel = () => this.abort();
    this.#userSignal?.addEventListener('abort', onCancel, { once: true });
    if (this.#userSignal?.aborted) this.abort();
    const record = this.#recordOf(planned.index);
    record.logs = [];
    try {
      const { output, error, attempts, retryDelay } = await this.#attempts(
        planned,
        scope,
        record,
        index,
        attempt,
        true,
      );
      const logs = record.logs;
      if (error === null)
        return { status: 'succeeded', output, error, attempts, logs, retryDelay: undefined };
      const entry =
        planned.onError === 'continue' ? { error: { code: error.code, message: error.message } } : null;
      return { status: 'failed', output: entry, error, attempts, logs, retryDelay };
    } finally {
      this.#userSignal?.removeEventListener('abort', onCancel);
    }
  }

  /** True when the step would be skipped: its conditions do not hold, or its list's step was skipped. @internal */
  skips(planned: PlannedStep): boolean {
    return this.#skips(planned);
  }

  /** The workflow's output from the steps' outputs. @throws when `workflow_output` cannot be resolved. @internal */
  output(): unknown {
    return this.#output();
  }

  /** Cancels the run (as its `signal` would): the execution itself. @internal */
  get canceller(): { abort(): void } {
    return this;
  }

  /** Cancels the run: no further step starts, and running steps are told to stop. @internal */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#controller?.abort();
  }

  /** The run's signal: aborted when the run is cancelled or reaches its time limit. @internal */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /** The run's workflow. @internal */
  get workflowName(): string {
    return this.#plan.workflow.name;
  }

  /** The engine's services. @internal */
  get services(): RunServices {
    return this.#services;
  }

  /** Runs every step and resolves to the finished run record. */
  async run(): Promise<RunRecord> {
    const workflow = this.#plan.workflow.name;
    const tracing = traceRun(workflow, this.id, this.#parentTrace, this.#startedAt);
    if (!(tracing instanceof Promise)) this.#trace = tracing;
    if (this.#emit) this.#event({ type: 'run.started', run_id: this.id, workflow, at: iso(this.#startedAt) });
    // The record is written at once; only the first run of a process may wait for the tracer.
    const written = this.#persist('running', null, null, true);
    if (tracing instanceof Promise) this.#trace = await tracing;
    if (written) await written;
    let failure: RunError | null = null;
    let status: 'succeeded' | 'failed' | 'cancelled' = 'succeeded';
    // One flag (and signal, when asked for) carries both the caller's cancel and the run's time limit.
    const user = this.#userSignal;
    const onCancel = user && (() => this.abort());
    if (user && onCancel) {
      user.addEventListener('abort', onCancel, { once: true });
      if (user.aborted) this.abort();
    }
    try {
      const scheduled = this.#schedule();
      // Steps that await are under way: the time limit is armed now (steps that all finished at once
      // left no moment for a timer to fire in).
      if (scheduled instanceof Promise) this.#armTimeLimit(Math.max(0, this.#runDeadline! - Date.now()));
      failure = scheduled instanceof Promise ? await scheduled : scheduled;
      // Cancelled only when the run itself was: a step failing with `cancelled` (a child run cancelled
      // by its id, an action's own error) fails the run, as on the queue.
      if (failure)
        status = failure.code === 'cancelled' && this.#aborted && !this.#timedOut ? 'cancelled' : 'failed';
    } catch (error) {
      failure = toRunError(error);
      status = 'failed';
    } finally {
      clearTimeout(this.#limitTimer);
      if (user && onCancel) user.removeEventListener('abort', onCancel);
    }
    let output: unknown = null;
    if (!failure) {
      try {
        output = this.#output();
      } catch (error) {
        failure = { ...toRunError(error), message: `workflow_output: ${errorMessage(error)}` };
        status = 'failed';
      }
    }
    const storable = this.#storable(output);
    if ('failure' in storable) {
      failure = storable.failure;
      status = 'failed';
      output = null;
    }
    const finished = Date.now();
    this.#finished = true;
    clearTimeout(this.#persistLater);
    if (this.#emit)
      this.#event({ type: 'run.finished', run_id: this.id, status, error: failure, at: iso(finished) });
    this.#trace!.end(status, failure);
    const saved = this.#persist(status, 'text' in storable ? storable.text : output, failure, true, finished);
    if (saved) await saved;
    // The run is over, its step records change no more: the caller gets them as they are.
    const steps = this.#records.filter(isStarted);
    return this.#record(status, output, failure, finished, this.#input, steps);
  }

  /**
   * Arms the run's time limit to fire in `left` ms. A timer waits at most 2^31 - 1 ms (24.8 days):
   * a longer limit is armed again as often as it takes.
   */
  #armTimeLimit(left: number): void {
    const wait = Math.min(left, MAX_TIMER_MS);
    this.#limitLeft = left - wait;
    this.#limitTimer = setTimeout(() => {
      if (this.#limitLeft > 0) this.#armTimeLimit(this.#limitLeft);
      else {
        this.#timedOut = true;
        this.abort();
      }
    }, wait);
  }

  /**
   * Starts the steps, each once the steps it waits for have finished and every step before it in
   * `order` has started. Returns the run's failure (or null) at once when every step finished
   * without an await (a chain of synchronous actions), else a promise of it.
   */
  #schedule(): RunError | null | Promise<RunError | null> {
    this.#waiting = this.#plan.waitCounts.slice();
    this.#settingOff = true;
    this.#pump();
    this.#settingOff = false;
    if (this.#running === 0) return this.#failure;
    if (this.#persistDue) this.#maybePersist(Date.now());
    return new Promise<RunError | null>((resolve) => (this.#scheduled = resolve));
  }

  /**
   * Starts every step that may start. A step whose work finished without an await settles inside
   * the loop, so a chain of them runs on without a promise per step; the loop never calls itself.
   */
  #pump(): void {
    const { order, steps } = this.#plan;
    for (;;) {
      if (this.#failure === null && this.#aborted) this.#failure = this.#abortError();
      if (this.#failure !== null || this.#next >= order.length || this.#running >= this.#concurrency) break;
      const planned = steps[order[this.#next]!]!;
      if (this.#waiting[planned.index] !== 0) break;
      this.#next += 1;
      this.#running += 1;
      const error = this.#runStep(planned);
      if (error instanceof Promise)
        void error.then((e) => {
          this.#settle(planned, e);
          this.#pump();
        });
      else this.#settle(planned, error);
    }
    if (this.#running === 0) this.#scheduled?.(this.#failure);
  }

  /** A step is done: the steps waiting for it wait for one fewer; its error (the first) stops the run. */
  #settle(planned: PlannedStep, error: RunError | null): void {
    this.#running -= 1;
    const { waiters, waitersFrom } = this.#plan;
    const waiting = this.#waiting;
    for (let i = waitersFrom[planned.index]!; i < waitersFrom[planned.index + 1]!; i++)
      waiting[waiters[i]!]! -= 1;
    if (error && this.#failure === null) this.#failure = error;
  }

  /** Runs one step: its record and events; the step's error when it fails the run. At once when its work has no await. */
  #runStep(planned: PlannedStep): RunError | null | Promise<RunError | null> {
    const record = this.#recordOf(planned.index);
    if (this.#skips(planned)) {
      this.#skipped[planned.index] = true;
      record.status = 'skipped';
      record.finished_at = iso(Date.now());
      if (this.#emit)
        this.#event({
          type: 'step.skipped',
          run_id: this.id,
          step: planned.step.name,
          at: record.finished_at,
        });
      return null;
    }
    const started = Date.now();
    record.status = 'running';
    record.started_at = iso(started);
    this.#maybePersist(started);
    const outcome = planned.forEach
      ? this.#runItems(planned, planned.forEach, record)
      : this.#attempts(planned, this.#scopeOnce, record, undefined);
    return outcome instanceof Promise
      ? outcome.then((o) => this.#stepDone(planned, record, started, o))
      : this.#stepDone(planned, record, started, outcome);
  }

  /** Records a step's outcome and emits its event; the step's error when it fails the run. */
  #stepDone(planned: PlannedStep, record: StepRecord, started: number, outcome: Attempted): RunError | null {
    const step = planned.step;
    const finished = Date.now();
    record.finished_at = iso(finished);
    if (outcome.error === null) {
      this.#outputs[planned.index] = outcome.output;
      record.output = outcome.output;
      record.status = 'succeeded';
      if (planned.index - this.#textFrom >= STEPS_PER_TEXT - 1) this.#textBlock();
      if (this.#emit)
        this.#event({
          type: 'step.succeeded',
          run_id: this.id,
          step: step.name,
          duration_ms: finished - started,
          at: record.finished_at,
        });
      this.#maybePersist(finished);
      return null;
    }
    const { code, message } = outcome.error;
    const runError = { ...outcome.error, step: step.name, message: `step "${step.name}" failed: ${message}` };
    record.status = 'failed';
    record.error = runError;
    if (this.#emit)
      this.#event({
        type: 'step.failed',
        run_id: this.id,
        step: step.name,
        error: runError,
        duration_ms: finished - started,
        at: record.finished_at,
      });
    // A lost item is the engine's fault, not the step's, and a step the run's stop cut short did not
    // fail on its own: either fails the run whatever on_error says (the run's error names the step).
    if (planned.onError === 'fail' || code === ITEMS_LOST || this.#aborted) return runError;
    const output = { error: { code, message } };
    this.#outputs[planned.index] = output;
    record.output = output;
    this.#maybePersist(finished);
    return null;
  }

  /** True when the step's conditions do not hold, or its for_each list comes from a skipped step. */
  #skips(planned: PlannedStep): boolean {
    const root = planned.forEach?.reference.root;
    if (root !== undefined && root !== this.#plan.inputName && this.#skipped[this.#indexOf(root)])
      return true;
    const conditions = planned.conditions;
    for (let i = 0; i < conditions.length; i++)
      if (!this.#holds(conditions[i]!, this.#scopeOnce)) return true;
    return false;
  }

  #holds(condition: PlannedCondition, scope: Scope): boolean {
    const { root, path } = condition.reference;
    return conditionHolds(scope.value(root), path, condition.value);
  }

  /**
   * Runs the step's work with its retries, once (no item) or for one item of a for_each step; never
   * throws. A plain step's attempts are counted in its record, an item's by the caller. Returns the
   * outcome at once when the work returned a value rather than a promise.
   */
  #attempts(
    planned: PlannedStep,
    scope: Scope,
    record: StepRecord,
    item: number | undefined,
    first = 1,
    single = false,
  ): Retried | Promise<Retried> {
    const step = planned.step;
    const attempt = first;
    const span = this.#trace!.attempt(step.name, step.type, attempt, item);
    if (item === undefined) {
      record.attempts = attempt;
      if (this.#emit)
        this.#event({
          type: 'step.started',
          run_id: this.id,
          step: step.name,
          attempt,
          at: attempt === 1 ? record.started_at! : iso(Date.now()),
        });
    }
    let output: unknown;
    try {
      if (this.#aborted) throw this.#abortError();
      const data = this.#stepData(planned, scope);
      output =
        span === NO_ATTEMPT
          ? this.#invoke(planned, data, attempt, record, item, undefined)
          : span.within(() => this.#invoke(planned, data, attempt, record, item, span.traceparent));
    } catch (error) {
      return this.#attemptFailed(planned, scope, record, item, attempt, single, span, error);
    }
    // Work that returned a value (no promise) is done at once: no await, no microtask.
    if (!isThenable(output)) {
      span.end('succeeded');
      return { output: output ?? null, error: null, attempts: attempt };
    }
    return Promise.resolve(output).then(
      (value) => {
        span.end('succeeded');
        return { output: value ?? null, error: null, attempts: attempt };
      },
      (error: unknown) => this.#attemptFailed(planned, scope, record, item, attempt, single, span, error),
    );
  }

  /** After a failed attempt: the step's error, or (after the backoff) the next attempt when it may be retried. */
  #attemptFailed(
    planned: PlannedStep,
    scope: Scope,
    record: StepRecord,
    item: number | undefined,
    attempt: number,
    single: boolean,
    span: AttemptTrace,
    error: unknown,
  ): Retried | Promise<Retried> {
    const step = planned.step;
    const retry = planned.retry ?? NO_RETRY;
    const runError = toRunError(error, this.#aborted ? this.#abortError() : undefined);
    const delay =
      attempt < retry.attempts && !this.#aborted && isRetryableError(error)
        ? backoffDelay(attempt, retry, retryAfterOf(error))
        : undefined;
    span.end(delay === undefined ? 'failed' : 'retried', runError);
    if (delay === undefined) return { output: null, error: runError, attempts: attempt };
    this.#event({
      type: 'step.retrying',
      run_id: this.id,
      step: step.name,
      attempt,
      delay_ms: delay,
      error: { ...runError, step: step.name },
      at: iso(Date.now()),
      ...(item === undefined ? {} : { item }),
    });
    if (single) return { output: null, error: runError, attempts: attempt, retryDelay: delay };
    return sleep(delay, this.signal).then(
      () => this.#attempts(planned, scope, record, item, attempt + 1, single),
      () => ({ output: null, error: runError, attempts: attempt }),
    );
  }

  /** Runs the items of a for_each step; `step.started` comes once, `item.finished` per item. */
  #runItems(planned: PlannedStep, each: PlannedForEach, record: StepRecord): Promise<Attempted> {
    const step = planned.step.name;
    this.#event({ type: 'step.started', run_id: this.id, step, attempt: 1, at: record.started_at! });
    return runForEach(each, planned.onError, record, {
      scope: this.#scopeOnce,
      attempt: (scope, index) => this.#attempts(planned, scope, record, index),
      holds: (condition, scope) => this.#holds(condition, scope),
      finished: (item, status, error, attempts) => {
        if (this.#emit) {
          const at = iso(Date.now());
          this.#event({ type: 'item.finished', run_id: this.id, step, item, status, attempts, error, at });
        }
        this.#maybePersist(Date.now());
      },
      stopReason: () =>
        this.#aborted ? this.#abortError() : this.#failure && this.#stoppedError(this.#failure),
      toError: (error) => toRunError(error),
    });
  }

  #stoppedError(failure: RunError): RunError {
    const at = failure.step === undefined ? '' : ` at step "${failure.step}"`;
    return { code: 'stopped', message: `the run failed${at}, so no further item started` };
  }

  #stepData(planned: PlannedStep, scope: Scope): unknown {
    let data = planned.data(scope);
    const wires = planned.wires;
    for (let i = 0; i < wires.length; i++) {
      const wire = wires[i]!;
      const source =
        wire.source === this.#plan.inputName ? this.#input : this.#outputs[this.#indexOf(wire.source)];
      const found = readPath(source, wire.sourcePath);
      const value = found.ok
        ? (found.value ?? null)
        : this.#skipped[this.#indexOf(wire.source)] || (found.missing && found.at < wire.declared)
          ? null
          : missingWire(wire.source, wire.sourcePath);
      if (wire.targetPath.length === 0) {
        // Merged into the step's data: null (a skipped step's output) brings nothing.
        if (value === null) continue;
        if (typeof value !== 'object' || Array.isArray(value)) unmergeableWire(wire.source, value);
      }
      data = placeAt(data, wire.targetPath, value);
    }
    return data;
  }

  /** Runs the step's work once, within its timeout when it has one. */
  #invoke(
    planned: PlannedStep,
    data: unknown,
    attempt: number,
    record: StepRecord,
    item: number | undefined,
    traceparent: string | undefined,
  ): unknown {
    const step = planned.step;
    const type = stepType(step);
    const runDeadline = this.#runDeadline;
    if (!step.timeout_ms) {
      const context = new StepContext(
        this,
        planned,
        attempt,
        undefined,
        record,
        item,
        traceparent,
        runDeadline,
      );
      const work = type.run(planned, data, context, this.#services);
      return isThenable(work) ? this.#raceStop(work) : work;
    }
    const stepDeadline = Date.now() + step.timeout_ms;
    const deadline = runDeadline === undefined ? stepDeadline : Math.min(runDeadline, stepDeadline);
    return this.#raceTimeout(step.timeout_ms, (signal) =>
      type.run(
        planned,
        data,
        new StepContext(this, planned, attempt, signal, record, item, traceparent, deadline),
        this.#services,
      ),
    );
  }

  /**
   * The step's work, or the run's stop (a cancel, the time limit) if that comes first: a step whose work
   * does not heed its signal does not hold the run past its end (its late result is dropped).
   */
  async #raceStop<T>(work: PromiseLike<T>): Promise<T> {
    const signal = this.signal;
    if (signal.aborted) throw this.#abortError();
    let onAbort!: () => void;
    const stopped = new Promise<never>((_, reject) => {
      onAbort = () => reject(this.#abortError());
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, stopped]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async #raceTimeout<T>(timeoutMs: number, work: (signal: AbortSignal) => T): Promise<Awaited<T>> {
    const timer = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([this.signal, timer]);
    let onAbort!: () => void;
    const timedOut = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(
          timer.aborted && !this.#aborted
            ? new LimitError(
                'timeout_ms',
                `the step took longer than its timeout of ${timeoutMs} ms (timeout_ms)`,
              )
            : this.#abortError(),
        );
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work(signal), timedOut]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Appends a line to a step's (an item's) log and emits `step.log`: a context's `log`. @internal */
  logLine(planned: PlannedStep, record: StepRecord, item: number | undefined, message: string): void {
    const step = planned.step.name;
    (record.logs ??= []).push(item === undefined ? message : `item ${item}: ${message}`);
    // A line logged after the step finished goes into the next save, like any other change.
    this.#unsave(planned.index);
    if (this.#emit)
      this.#event({
        type: 'step.log',
        run_id: this.id,
        step,
        message,
        at: iso(Date.now()),
        ...(item === undefined ? {} : { item }),
      });
  }

  /**
   * Work that retries itself (a request step) is about to make try `next` after `delayMs`: the
   * step's attempts and a `step.retrying` event show it. A context's `retrying`. @internal
   */
  retryingNow(
    planned: PlannedStep,
    record: StepRecord,
    item: number | undefined,
    next: number,
    delayMs: number,
    reason: string,
  ): void {
    const step = planned.step.name;
    if (item === undefined) record.attempts = next;
    if (this.#emit)
      this.#event({
        type: 'step.retrying',
        run_id: this.id,
        step,
        attempt: next - 1,
        delay_ms: delayMs,
        error: { code: 'upstream_error', message: reason, step },
        at: iso(Date.now()),
        ...(item === undefined ? {} : { item }),
      });
  }

  /**
   * Runs a workflow as a child of this run, cancelled with `signal`, its trace below the calling
   * attempt's; resolves to its output. A context's `runWorkflow`. @internal
   */
  runChild(
    name: string,
    input: unknown,
    signal: AbortSignal,
    traceparent: string | undefined,
    key: string,
  ): Promise<unknown> {
    return this.#runChild(name, input, signal, traceparent, key);
  }

  /**
   * The id of the next child run of the step execution `key`. A durable run's step delivered again
   * after its worker died left its child runs `running`: their ids follow from the key (one number per
   * child), so the next delivery finds them, marks each `interrupted` and starts its own after them.
   */
  async #childId(key: string): Promise<string> {
    if (!this.#resumed) return globalThis.crypto.randomUUID();
    const numbers = (this.#childNumbers ??= new Map<string, Promise<number>>());
    // One number per call, taken in call order even when an action starts children at once.
    const taken = (numbers.get(key) ?? Promise.resolve(0)).then((n) => this.#freeChildNumber(key, n));
    numbers.set(
      key,
      taken.then(
        (n) => n + 1,
        () => 0,
      ),
    );
    return childRunId(key, await taken);
  }

  /** The first child number from `n` on with no stored run, marking runs left `running` interrupted. */
  async #freeChildNumber(key: string, n: number): Promise<number> {
    const { storage, live } = this.#services;
    for (; ; n++) {
      const id = await childRunId(key, n);
      const earlier = await storage.get<RunRecord>('runs', id);
      if (!earlier) return n;
      if (earlier.status === 'running' && !live.has(id))
        await storage.put('runs', id, interruptedRecord(earlier, "the worker executing its parent's step"));
    }
  }

  /**
   * Runs a workflow as a child of this run, cancelled with `signal`, its trace below the calling
   * attempt's; resolves to its output.
   */
  async #runChild(
    name: string,
    input: unknown,
    signal: AbortSignal,
    traceparent: string | undefined,
    key: string,
  ): Promise<unknown> {
    const chain = childChain(this.#chain, name);
    const { plan, input: value } = await this.#services.prepareRun(name, input);
    const options = { signal, traceparent };
    const lineage = { parentId: this.id, chain };
    const child = new Execution(plan, value, this.#services, options, lineage, await this.#childId(key));
    // Cancelled by its own id too, as a run started directly is.
    const live = this.#services.live;
    live.set(child.id, child.canceller);
    let record: RunRecord;
    try {
      record = await child.run();
    } finally {
      live.delete(child.id);
    }
    if (record.status === 'succeeded') return record.output;
    throw childFailure(record);
  }

  /** Looks up step outputs and the input for references; one per run. */
  readonly #scopeOnce: Scope;

  /** The record of the step at `index`, made now when the step has none yet (it had not started). */
  #recordOf(index: number): StepRecord {
    let record = this.#records[index]!;
    if (record === PENDING)
      this.#records[index] = record = {
        name: this.#plan.steps[index]!.step.name,
        status: 'pending',
        attempts: 0,
        started_at: null,
        finished_at: null,
        output: null,
        error: null,
      };
    return record;
  }

  #indexOf(name: string): number {
    return this.#plan.indexByName.get(name) ?? -1;
  }

  #output(): unknown {
    if (this.#plan.output) return this.#plan.output(this.#scopeOnce);
    const byName: Record<string, unknown> = {};
    this.#plan.steps.forEach((s, i) => setOwn(byName, s.step.name, this.#outputs[i]));
    return byName;
  }

  #abortError(): RunError {
    const user = this.#userSignal;
    if ((this.#timedOut && !user?.aborted) || (user?.aborted && user.reason === RUN_DEADLINE)) {
      return {
        code: 'limit_exceeded',
        message: 'the run took longer than its time limit (its timeoutMs, else limits.runTimeoutMs)',
      };
    }
    return { code: 'cancelled', message: 'the run was cancelled' };
  }

  #event(event: RunEvent): void {
    if (!this.#emit) return;
    try {
      this.#emit(event);
    } catch {
      // A listener's error must not break the run.
    }
  }

  #maybePersist(now: number): void {
    if (this.#finished) return;
    if (this.#settingOff) {
      this.#persistDue = true;
      return;
    }
    const since = now - this.#lastPersist;
    if (since < PERSIST_EVERY_MS) {
      // A change inside the interval is written at its end: the stored record (and the pictures of
      // it) is never more than the interval behind the run.
      this.#persistLater ??= setTimeout(() => {
        this.#persistLater = undefined;
        this.#maybePersist(Date.now());
      }, PERSIST_EVERY_MS - since);
      return;
    }
    this.#lastPersist = now;
    this.#persist('running', null, null, false);
  }

  /**
   * Saves the run record. On storage that takes JSON text (in memory, Postgres) each finished step's record, and the input, go as
   * {@link JsonText} made at their first save and written as they are by every later one, so a save
   * serializes only the running steps, and a large output once (see `json-text.ts`).
   */
  #persist(
    status: RunRecord['status'],
    output: unknown,
    error: RunError | null,
    wait: boolean,
    finished?: number,
  ): Promise<unknown> | undefined {
    let stored: RunRecord | undefined;
    let failed: unknown;
    try {
      stored = this.#asText
        ? this.#record(
            status,
            output,
            error,
            finished,
            (this.#inputText ??= JsonText.of(this.#input)),
            this.#stepsAsText(),
          )
        : this.#record(status, output, error, finished, this.#input, this.#steps());
    } catch (error) {
      // A value JSON cannot hold (a BigInt, a cycle) fails the save, as the storage's own would.
      failed = error;
    }
    const storage = this.#services.storage;
    const previous = this.#persisting;
    if (previous === undefined) {
      // No save in flight: this one is made now, and a storage that writes at once (in memory) is
      // done here, with no promise to wait for.
      let result: unknown;
      try {
        if (stored === undefined) throw failed;
        result = storage.put('runs', this.id, stored);
      } catch (error) {
        return wait ? Promise.reject(error as Error) : undefined;
      }
      return isThenable(result) ? this.#inFlight(Promise.resolve(result), wait) : undefined;
    }
    const write = previous.then(() =>
      stored ? storage.put('runs', this.id, stored) : Promise.reject(failed as Error),
    );
    return this.#inFlight(write, wait);
  }

  /** Keeps the next save behind `write`; returns `write` to a caller that waits for it. */
  #inFlight(write: Promise<unknown>, wait: boolean): Promise<unknown> | undefined {
    const settled = write.then(noop, noop);
    this.#persisting = settled;
    void settled.then(() => {
      if (this.#persisting === settled) this.#persisting = undefined;
    });
    return wait ? write : undefined;
  }

  /**
   * Checks that the run record can be saved before its last save: on storage that takes JSON text,
   * the finished steps and the workflow's output are serialized here, once, and the save then writes
   * that text (`text`). When JSON cannot hold a step's output (a BigInt, a value that holds itself: a
   * custom action may return one), that step is marked failed with code `invalid_output`, its output
   * dropped, and the run's error is returned (`failure`). Storage of other kinds serializes records
   * itself and is not checked here.
   */
  #storable(output: unknown): { text: JsonText } | { failure: RunError } | Record<string, never> {
    if (!this.#asText) return {};
    try {
      this.#stepsAsText();
      // Without workflow_output the output is the map of the steps' outputs, about as large again as
      // their saved records: only a workflow_output (its references may repeat a value) is walked.
      const problem = finalOutputProblem(output, this.#savedChars, this.#plan.output !== undefined);
      if (problem?.code !== 'too_large') {
        if (problem)
          return { failure: { code: problem.code, message: `workflow_output: ${problem.message}` } };
        return { text: JsonText.of(output) };
      }
      // Too large as a whole: the record keeps the steps without their outputs.
      this.#records.forEach((record, index) => {
        if (record.output === null) return;
        record.output = null;
        this.#unsave(index);
      });
      this.#savedChars = 0;
      return { failure: recordTooLarge() };
    } catch {
      // Found below, step by step.
    }
    let first: RunError | undefined;
    this.#records.forEach((record, index) => {
      try {
        JSON.stringify(record);
      } catch (error) {
        const problem: RunError = {
          code: 'invalid_output',
          message: `step "${record.name}" failed: its output cannot be stored as JSON (${thrownText(error).split('\n')[0]})`,
          step: record.name,
        };
        record.status = 'failed';
        record.output = null;
        record.error = problem;
        this.#unsave(index);
        first ??= problem;
      }
    });
    return {
      failure: first ?? {
        code: 'invalid_output',
        message: 'workflow_output: the workflow output cannot be stored as JSON',
      },
    };
  }

  /** A run record of the run as it is; `steps` may hold JsonText standing for steps' records, when saved. */
  #record(
    status: RunRecord['status'],
    output: unknown,
    error: RunError | null,
    finished: number | undefined,
    input: unknown,
    steps: (StepRecord | JsonText)[],
  ): RunRecord {
    return {
      id: this.id,
      workflow: this.#plan.workflow.name,
      status,
      input,
      output,
      error,
      started_at: iso(this.#startedAt),
      finished_at: finished === undefined ? null : iso(finished),
      steps: steps as StepRecord[],
      ...(this.#parentId === undefined ? {} : { parent_run_id: this.#parentId }),
      ...(this.#trace?.traceparent ? { traceparent: this.#trace.traceparent } : {}),
    };
  }

  /** Copies of the records of the steps that ran or were skipped: steps that never started are left out. */
  #steps(): StepRecord[] {
    return this.#records.filter((s) => s.status !== 'pending').map(copyStep);
  }

  /**
   * {@link Execution.#steps} with the finished steps' records as {@link JsonText}: each run of
   * finished steps not saved before is serialized in one go, and kept for every later save.
   */
  #stepsAsText(): (StepRecord | JsonText)[] {
    const steps: (StepRecord | JsonText)[] = [];
    const records = this.#records;
    const saved = this.#savedSteps;
    for (let i = 0; i < records.length;) {
      const done = saved.get(i);
      if (done) {
        steps.push(done.text);
        i = done.end;
        continue;
      }
      const status = records[i]!.status;
      if (status === 'running') steps.push(copyStep(records[i]!));
      if (status === 'pending' || status === 'running') {
        i += 1;
        continue;
      }
      let end = i + 1;
      while (end < records.length && end - i < STEPS_PER_TEXT && !saved.has(end) && isFinished(records[end]!))
        end += 1;
      const text = new JsonText(records.slice(i, end));
      saved.set(i, { end, text });
      this.#savedChars += text.text.length;
      // A record past what JSON text can hold could never be saved: no further step starts.
      if (stepsTooLarge(this.#savedChars) && this.#failure === null) this.#failure = recordTooLarge();
      steps.push(text);
      i = end;
    }
    return steps;
  }

  /**
   * The records of the {@link STEPS_PER_TEXT} steps from `#textFrom` as JSON text, made when the
   * last of them finishes, while they are at hand (in a long run, by the next save they are out of
   * the processor's caches), and kept for every save (see {@link Execution.#stepsAsText}). Left to
   * the save when one of them has not finished, or JSON cannot hold one.
   */
  #textBlock(): void {
    const from = this.#textFrom;
    const end = from + STEPS_PER_TEXT;
    this.#textFrom = end;
    const records = this.#records;
    if (!this.#asText) return;
    for (let i = from; i < end; i++) if (!isFinished(records[i]!)) return;
    // A save may have made text of some of them already.
    for (const [start, saved] of this.#savedSteps) if (start < end && saved.end > from) return;
    let text: JsonText;
    try {
      text = new JsonText(records.slice(from, end));
    } catch {
      return;
    }
    this.#savedSteps.set(from, { end, text });
    this.#savedChars += text.text.length;
    if (stepsTooLarge(this.#savedChars) && this.#failure === null) this.#failure = recordTooLarge();
  }

  /** Forgets the saved text holding the step at `index` (its record changed after it finished). */
  #unsave(index: number): void {
    for (const [start, { end }] of this.#savedSteps)
      if (start <= index && index < end) this.#savedSteps.delete(start);
  }
}

/** An attempt's outcome; `retryDelay` when a single attempt (see `runDelivered`) failed and may be retried. */
type Retried = Attempted & { retryDelay?: number };

/** Checks the options of a run; a `TypeError` names the one that is wrong. @internal */
export function checkRunOptions(options: RunOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`run options must be an object, got ${options === null ? 'null' : typeof options}`);
  const { timeoutMs, concurrency, signal, onEvent, traceparent } = options;
  if (onEvent !== undefined && typeof onEvent !== 'function')
    throw new TypeError(`onEvent must be a function, got ${describeOption(onEvent)}`);
  if (traceparent !== undefined && typeof traceparent !== 'string')
    throw new TypeError(
      `traceparent must be a string (a W3C traceparent header), got ${describeOption(traceparent)}`,
    );
  // Checked before anything is stored: a run that could not listen to its signal would stay `running`.
  if (
    signal !== undefined &&
    !(
      typeof signal === 'object' &&
      signal !== null &&
      typeof (signal as Partial<AbortSignal>).aborted === 'boolean' &&
      typeof (signal as Partial<AbortSignal>).addEventListener === 'function'
    )
  )
    throw new TypeError(
      `signal must be an AbortSignal (an AbortController's .signal), got ${describeOption(signal)}`,
    );
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))
  )
    throw new TypeError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1))
    throw new TypeError(`concurrency must be a whole number from 1 on, got ${String(concurrency)}`);
}

/** An option's value as an error names it: `null`, `an AbortController`, `a string`. */
function describeOption(value: unknown): string {
  if (value === null) return 'null';
  const name =
    typeof value !== 'object'
      ? typeof value
      : (value as { constructor?: { name?: unknown } }).constructor?.name;
  if (typeof name !== 'string' || name === '' || name === 'Object') return 'an object';
  return `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`;
}

/** The id of child run number `n` of the step execution `key`: a UUID (version 8) made from both. */
async function childRunId(key: string, n: number): Promise<string> {
  const bytes = (await sha256(`child run ${n} of ${key}`)).subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = hexOf(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Looks up step outputs and the input for references: one per run. */
class RunScope implements Scope {
  readonly #plan: Plan;
  readonly #input: unknown;
  readonly #outputs: readonly unknown[];
  readonly #skipped: readonly boolean[];

  constructor(plan: Plan, input: unknown, outputs: readonly unknown[], skipped: readonly boolean[]) {
    this.#plan = plan;
    this.#input = input;
    this.#outputs = outputs;
    this.#skipped = skipped;
  }

  value(root: string, step?: number): unknown {
    if (step !== undefined) return this.#outputs[step];
    return root === this.#plan.inputName
      ? this.#input
      : this.#outputs[this.#plan.indexByName.get(root) ?? -1];
  }

  skipped(root: string): boolean {
    return root !== this.#plan.inputName && this.#skipped[this.#plan.indexByName.get(root) ?? -1] === true;
  }
}

function noop(): void {}

/** What the record of every step that has not started holds: only its status is ever read. */
const PENDING: StepRecord = Object.freeze({
  name: '',
  status: 'pending',
  attempts: 0,
  started_at: null,
  finished_at: null,
  output: null,
  error: null,
}) as StepRecord;

/** The wait counts of an execution whose schedule has not started. */
const EMPTY_COUNTS = new Int32Array(0);

/** Whether a step started or was skipped: the record lists only those. */
function isStarted(step: StepRecord): boolean {
  return step.status !== 'pending';
}

function isFinished(step: StepRecord): boolean {
  return step.status === 'succeeded' || step.status === 'failed' || step.status === 'skipped';
}

/** A copy of a step record that its later changes (status, times, item counts) do not reach. */
function copyStep(step: StepRecord): StepRecord {
  return step.items ? { ...step, items: { ...step.items, failures: [...step.items.failures] } } : { ...step };
}

function toRunError(error: unknown, abort?: RunError): RunError {
  if (abort) return abort;
  try {
    if (error instanceof ValidationError)
      return { code: error.code, message: error.message, issues: error.issues };
    if (isStepwireError(error)) return { code: error.code, message: error.message };
    if (
      typeof error === 'object' &&
      error !== null &&
      'code' in error &&
      'message' in error &&
      typeof (error as RunError).code === 'string'
    ) {
      return { code: (error as RunError).code, message: thrownText((error as RunError).message) };
    }
  } catch {
    // A thrown value whose properties throw when read: told as a value that cannot be read.
  }
  return { code: 'step_failed', message: errorMessage(error) };
}

function errorMessage(error: unknown): string {
  try {
    return error instanceof Error ? thrownText(error.message) : thrownText(error);
  } catch {
    return thrownText(undefined);
  }
}

/** A thrown value as text, whatever it is: one that cannot be made a string is said to be so. */
function thrownText(value: unknown): string {
  try {
    return String(value);
  } catch {
    return 'a thrown value that cannot be shown as text';
  }
}

let lastMs = -1;
let lastIso = '';

/** ISO time of `ms`; steps finishing within the same millisecond share one string. */
function iso(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
