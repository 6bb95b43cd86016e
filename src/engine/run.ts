/**
 * A run of a workflow, from start to record: {@link Execution} starts it, runs its steps and saves
 * its last record; it also executes a durable run's deliveries and a step's child runs. Its phases
 * sit in layers below it: what a run is prepared with (`run-prepare.ts`), its record, saves and
 * events (`run-record.ts`), a step's attempts (`run-attempts.ts`), the steps' schedule
 * (`run-steps.ts`).
 * @module
 */
import type { Plan, PlannedStep, RunServices } from './plan-types.js';
import type { RunError, RunRecord, StepRecord } from './record.js';
import { MAX_TIMER_MS } from '../retry/index.js';
import { itemScope, itemsOf, type Attempted, type ItemOutcome } from './for-each.js';
import { childChain, childFailure, type RunLineage } from './child-runs.js';
import { traceJoin, traceRun } from './tracing.js';
import { interruptedRecord } from './interrupted.js';
import { derivedUuid } from '../bytes/derived-uuid.js';
import { Waiting, isWaiting } from './waits/waiting.js';
import { setOwn } from '../schema/own.js';
import type { RunOptions } from './run-prepare.js';
import { isStarted, iso } from './run-record.js';
import { ScheduledRun } from './run-steps.js';
import { errorMessage, toRunError } from './run-errors.js';

export type { RunOptions } from './run-prepare.js';
/** @internal */
export { checkRunOptions, INITIATOR } from './run-prepare.js';
/** @internal */
export { RUN_DEADLINE } from './run-attempts.js';

/** One delivery of a step of a durable run, executed: its record, output or error, and events. @internal */
export interface DeliveredStep {
  /** The step's record after the delivery (attempts, times, logs, items). */
  record: StepRecord;
  /** The step's output, or its error. */
  outcome: Attempted;
  /** Set when the attempt failed and may be retried: the delay before the next attempt, in ms. */
  retryDelay: number | undefined;
}

/** One run of one workflow: owns its steps' state, retries, timeouts, events and record. @internal */
export class Execution extends ScheduledRun {
  /** The timer of the run's time limit, armed once a step awaits, and the time it still has to wait. */
  #limitTimer: ReturnType<typeof setTimeout> | undefined;
  #limitLeft = 0;
  #timeoutMs: number;
  /** Workflows from the run started directly down to this one. */
  #chain: readonly string[];
  /** A durable run's execution in a worker: its steps may be delivered again after a worker died. */
  #resumed = false;
  /** Per idempotency key, the number the next child run of this execution tries (durable runs only). */
  #childNumbers: Map<string, Promise<number>> | undefined;
  #parentTrace: string | undefined;
  /** A waiting run that goes on in this process (see {@link Execution.goOn}). */
  #goingOn = false;
  /** The steps that wait, of a run picked up again: their items' ended child runs are theirs, not retried. */
  #waited: ReadonlySet<string> = new Set();

  constructor(
    plan: Plan,
    input: unknown,
    services: RunServices,
    options: RunOptions,
    lineage?: RunLineage,
    id: string = globalThis.crypto.randomUUID(),
  ) {
    super(plan, input, services, options, lineage?.parentId, id);
    this.#chain = lineage?.chain ?? [plan.workflow.name];
    this.#timeoutMs = options.timeoutMs ?? services.options.limits.runTimeoutMs;
    this.runDeadline = this.startedAt + this.#timeoutMs;
    this.#parentTrace = options.traceparent;
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
    if (record.parent_run_id === undefined) execution.parentId = undefined;
    execution.startedAt = Date.parse(record.started_at);
    execution.workflowVersion = record.workflow_version;
    // A durable run's time limit is the queue's timer: its length is not in the record.
    execution.runDeadline = undefined;
    execution.#resumed = true;
    execution.#waited = new Set(record.steps.filter((s) => s.status === 'waiting').map((s) => s.name));
    for (const step of record.steps) {
      const index = execution.indexOf(step.name);
      if (index < 0) continue;
      execution.records[index] = { ...step };
      if (step.status === 'skipped') execution.skipped[index] = true;
      else if (step.status === 'succeeded' || step.status === 'failed')
        execution.outputs[index] = step.output;
    }
    execution.trace = traceJoin(plan.workflow.name, record.id, record.traceparent);
    return execution;
  }

  /**
   * A run that waited, to go on in this process now that a wait of its ended: the steps that
   * finished keep their outputs, the waiting ones run again (and find how their wait ended), and
   * the rest run as they would have. Its time limit starts again now.
   * @internal
   */
  static goOn(plan: Plan, record: RunRecord, services: RunServices, options: RunOptions): Execution {
    const execution = Execution.resume(plan, record, services, options);
    execution.#goingOn = true;
    execution.runDeadline = Date.now() + execution.#timeoutMs;
    return execution;
  }

  /**
   * A new run retrying another from a step (see `retry-run.ts`): `record` is the new run's record
   * with the steps it keeps; those are not executed again, the others run as in a new run.
   * @internal
   */
  static retrying(plan: Plan, record: RunRecord, services: RunServices, options: RunOptions): Execution {
    const execution = Execution.resume(plan, record, services, options);
    execution.parentId = undefined;
    execution.retryOf = record.retry_of;
    execution.startedAt = Date.parse(record.started_at);
    execution.runDeadline = execution.startedAt + execution.#timeoutMs;
    // Its own trace, below the caller's when one is given.
    execution.trace = undefined;
    return execution;
  }

  /**
   * Executes one delivery of a step of a durable run: one attempt of a plain step (numbered
   * `attempt`, with the delay before the next one when it may be retried), or every item of a
   * `for_each` step. Writes nothing; the caller commits the outcome. @internal
   */
  async runDelivered(planned: PlannedStep, attempt: number): Promise<DeliveredStep> {
    const onCancel = () => this.abort();
    this.userSignal?.addEventListener('abort', onCancel, { once: true });
    if (this.userSignal?.aborted) this.abort();
    const record = this.recordOf(planned.index);
    record.status = 'running';
    record.started_at ??= iso(Date.now());
    try {
      const outcome: Attempted & { retryDelay?: number } = planned.forEach
        ? await this.runItems(planned, planned.forEach, record)
        : await this.attempts(planned, this.scopeOnce, record, undefined, attempt, true);
      record.finished_at = iso(Date.now());
      return { record, outcome, retryDelay: outcome.retryDelay };
    } finally {
      this.userSignal?.removeEventListener('abort', onCancel);
    }
  }

  /** The items of a `for_each` step. @throws a `ValidationError` when its list is not a list. @internal */
  itemList(planned: PlannedStep): unknown[] {
    const each = planned.forEach!;
    return itemsOf(each.list(this.scopeOnce), each.reference.text);
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
    const scope = itemScope(this.scopeOnce, items[index], index);
    if (!planned.forEach!.conditions.every((c) => this.holds(c, scope)))
      return { status: 'skipped', output: null, error: null, attempts: 0, retryDelay: undefined };
    const onCancel = () => this.abort();
    this.userSignal?.addEventListener('abort', onCancel, { once: true });
    if (this.userSignal?.aborted) this.abort();
    const record = this.recordOf(planned.index);
    record.logs = [];
    try {
      const { output, error, attempts, retryDelay } = await this.attempts(
        planned,
        scope,
        record,
        index,
        attempt,
        true,
      );
      const logs = record.logs;
      if (error === null && isWaiting(output))
        return {
          status: 'waiting',
          output: null,
          error,
          attempts,
          logs,
          wait: output.wait,
          retryDelay: undefined,
        };
      if (error === null)
        return { status: 'succeeded', output, error, attempts, logs, retryDelay: undefined };
      const entry =
        planned.onError === 'continue' ? { error: { code: error.code, message: error.message } } : null;
      return { status: 'failed', output: entry, error, attempts, logs, retryDelay };
    } finally {
      this.userSignal?.removeEventListener('abort', onCancel);
    }
  }

  /** The workflow's output from the steps' outputs. @throws when `workflow_output` cannot be resolved. @internal */
  output(): unknown {
    return this.#output();
  }

  /** Cancels the run (as its `signal` would): the execution itself. @internal */
  get canceller(): { abort(): void } {
    return this;
  }

  /**
   * Runs every step and resolves to the finished run record, or to the record of a run that waits
   * (status `waiting`: a `wait` step waits and nothing else can run until it ends).
   */
  async run(): Promise<RunRecord> {
    const workflow = this.plan.workflow.name;
    const tracing = this.trace ?? traceRun(workflow, this.id, this.#parentTrace, this.startedAt);
    if (!(tracing instanceof Promise)) this.trace = tracing;
    if (this.emit)
      this.event(
        this.#goingOn
          ? { type: 'run.resumed', run_id: this.id, at: iso(Date.now()) }
          : { type: 'run.started', run_id: this.id, workflow, at: iso(this.startedAt) },
      );
    // The record is written at once; only the first run of a process may wait for the tracer.
    const written = this.persist('running', null, null, true);
    if (tracing instanceof Promise) this.trace = await tracing;
    if (written) await written;
    let failure: RunError | null = null;
    let status: 'succeeded' | 'failed' | 'cancelled' | 'waiting' = 'succeeded';
    // One flag (and signal, when asked for) carries both the caller's cancel and the run's time limit.
    const user = this.userSignal;
    const onCancel = user && (() => this.abort());
    if (user && onCancel) {
      user.addEventListener('abort', onCancel, { once: true });
      if (user.aborted) this.abort();
    }
    try {
      const scheduled = this.schedule();
      // Steps that await are under way: the time limit is armed now (steps that all finished at once
      // left no moment for a timer to fire in).
      if (scheduled instanceof Promise) this.#armTimeLimit(Math.max(0, this.runDeadline! - Date.now()));
      failure = scheduled instanceof Promise ? await scheduled : scheduled;
      // Cancelled only when the run itself was: a step failing with `cancelled` (a child run cancelled
      // by its id, an action's own error) fails the run, as on the queue.
      if (failure)
        status = failure.code === 'cancelled' && this.aborted && !this.timedOut ? 'cancelled' : 'failed';
    } catch (error) {
      failure = toRunError(error);
      status = 'failed';
    } finally {
      clearTimeout(this.#limitTimer);
      if (user && onCancel) user.removeEventListener('abort', onCancel);
    }
    let output: unknown = null;
    if (!failure && this.waitingSteps > 0) status = 'waiting';
    else if (!failure) {
      try {
        output = this.#output();
      } catch (error) {
        failure = { ...toRunError(error), message: `workflow_output: ${errorMessage(error)}` };
        status = 'failed';
      }
    }
    const storable = this.storable(output);
    if ('failure' in storable) {
      failure = storable.failure;
      status = 'failed';
      output = null;
    }
    const finished = Date.now();
    this.finished = true;
    clearTimeout(this.persistLater);
    if (status === 'waiting') {
      const waiting = this.records.filter((s) => s.status === 'waiting').map((s) => s.name);
      if (this.emit) this.event({ type: 'run.waiting', run_id: this.id, waiting, at: iso(finished) });
      this.trace!.end('waiting', null);
      const saved = this.persist(status, null, null, true);
      if (saved) await saved;
      return this.record(status, null, null, undefined, this.input, this.records.filter(isStarted));
    }
    if (this.emit)
      this.event({ type: 'run.finished', run_id: this.id, status, error: failure, at: iso(finished) });
    this.trace!.end(status, failure);
    const saved = this.persist(status, 'text' in storable ? storable.text : output, failure, true, finished);
    if (saved) await saved;
    // The run is over, its step records change no more: the caller gets them as they are.
    const steps = this.records.filter(isStarted);
    return this.record(status, output, failure, finished, this.input, steps);
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
        this.timedOut = true;
        this.abort();
      }
    }, wait);
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
   * The id of the next child run of the step execution `key`: it follows from the key (one number
   * per child). A durable run's step delivered again after its worker died left its child runs
   * `running`: the next delivery finds them, marks each `interrupted` and starts its own after them.
   * A step that waited for its child run (the child waited) finds that child again, as `earlier`.
   */
  async #childId(key: string): Promise<{ id: string; earlier?: RunRecord }> {
    const numbers = (this.#childNumbers ??= new Map<string, Promise<number>>());
    // One number per call, taken in call order even when an action starts children at once.
    const earlier: { record?: RunRecord } = {};
    const taken = (numbers.get(key) ?? Promise.resolve(0)).then((n) =>
      this.#resumed ? this.#freeChildNumber(key, n, earlier) : n,
    );
    numbers.set(
      key,
      taken.then(
        (n) => n + 1,
        () => 0,
      ),
    );
    const id = await childRunId(key, await taken);
    return earlier.record ? { id, earlier: earlier.record } : { id };
  }

  /**
   * The first child number from `n` on with no stored run, marking runs left `running` interrupted;
   * or the number of a child run this run waited for (it waits still, or has ended since), in `found`.
   */
  async #freeChildNumber(key: string, n: number, found: { record?: RunRecord }): Promise<number> {
    const { storage, live } = this.services;
    // The child runs its steps waited for (a step going on is `running` again, and keeps its `wait`).
    const awaited = new Set(this.records.flatMap((s) => (s.wait?.kind === 'run' ? [s.wait.id] : [])));
    // A step that waited goes on: a child run one of its items started and that has ended since (or
    // ended before the step waited for another item's) gives its outcome again; it does not run twice.
    const going = [...this.#waited].some((step) => key.startsWith(`${this.id}:${step}:`));
    for (; ; n++) {
      const id = await childRunId(key, n);
      const earlier = await storage.get<RunRecord>('runs', id);
      if (!earlier) return n;
      const running = earlier.status === 'running';
      // A child that waited and goes on now (its wait just ended), in this process or in the one that
      // ended its wait, is waited for again: its end makes this step look once more.
      const wentOn = running && earlier.steps.some((s) => s.wait !== undefined);
      const goesOn = running && (live.has(id) || wentOn) && (going || awaited.has(id));
      if (earlier.status === 'waiting' || goesOn || (!running && (going || awaited.has(id)))) {
        found.record = earlier;
        return n;
      }
      // A child this step started and that never waited, left running by a worker that stopped.
      if (running && !live.has(id) && !wentOn)
        await storage.put('runs', id, interruptedRecord(earlier, "the worker executing its parent's step"));
    }
  }

  /**
   * Runs a workflow as a child of this run, cancelled with `signal`, its trace below the calling
   * attempt's; resolves to its output, or to a {@link Waiting} when the child waits (the step then
   * waits for it, and takes its outcome when it has gone on and ended).
   */
  async #runChild(
    name: string,
    input: unknown,
    signal: AbortSignal,
    traceparent: string | undefined,
    key: string,
  ): Promise<unknown> {
    const chain = childChain(this.#chain, name);
    const { id, earlier } = await this.#childId(key);
    // A child going on is waited for (its end makes the step look again, even if it ended since it was read).
    if (earlier) return earlier.status === 'running' ? Waiting.forRun(earlier.id) : outcomeOf(earlier);
    const { plan, input: value } = await this.services.prepareRun(name, input);
    const options = { signal, traceparent };
    const lineage = { parentId: this.id, chain };
    const child = new Execution(plan, value, this.services, options, lineage, id);
    // Cancelled by its own id too, as a run started directly is.
    const live = this.services.live;
    live.set(child.id, child.canceller);
    let record: RunRecord;
    try {
      record = await child.run();
    } finally {
      live.delete(child.id);
    }
    if (record.status === 'waiting') this.services.onWaiting?.(record);
    return outcomeOf(record);
  }

  #output(): unknown {
    if (this.plan.output) return this.plan.output(this.scopeOnce);
    const byName: Record<string, unknown> = {};
    this.plan.steps.forEach((s, i) => setOwn(byName, s.step.name, this.outputs[i]));
    return byName;
  }
}

/** What a child run gives its parent's step: its output, its failure, or a wait for it. */
function outcomeOf(record: RunRecord): unknown {
  if (record.status === 'succeeded') return record.output;
  if (record.status === 'waiting') return Waiting.forRun(record.id);
  throw childFailure(record);
}

/** The id of child run number `n` of the step execution `key`: a UUID made from both. */
function childRunId(key: string, n: number): Promise<string> {
  return derivedUuid(`child run ${n} of ${key}`);
}
