/**
 * The schedule of a run's steps: each starts once the steps it waits for have finished and the
 * steps before it in `order` have started; a step is skipped when its conditions do not hold; a
 * step's outcome goes into its record, and its error fails the run or, with `on_error: continue`,
 * becomes its output.
 * @module
 */
import type { Plan, PlannedStep, RunServices } from './plan-types.js';
import type { RunError, StepRecord } from './record.js';
import { ITEMS_LOST, type Attempted } from './for-each.js';
import type { RunOptions } from './run-prepare.js';
import { STEPS_PER_TEXT, iso } from './run-record.js';
import { AttemptedRun } from './run-attempts.js';
import { isWaiting, type Waiting } from './waits/waiting.js';

/** What a step that began to wait settles with: the steps after it do not start. */
const WAITS: RunError = Object.freeze({ code: 'waiting', message: 'the step waits' });

/**
 * The layer of a run's execution that schedules its steps (see {@link AttemptedRun} below it). @internal
 */
export abstract class ScheduledRun extends AttemptedRun {
  /** The scheduler's state: the steps each step still waits for, the next in order, those running. */
  #waiting: Int32Array = EMPTY_COUNTS;
  #next = 0;
  #running = 0;
  /** Steps waiting (`wait` steps whose wait has not ended): the run waits once nothing runs. */
  protected waitingSteps = 0;
  /** Resolves the schedule once its last step settles (when some step awaited). */
  #scheduled: ((failure: RunError | null) => void) | undefined;
  #concurrency: number;

  constructor(
    plan: Plan,
    input: unknown,
    services: RunServices,
    options: RunOptions,
    parentId: string | undefined,
    id: string,
  ) {
    super(plan, input, services, options, parentId, id);
    this.#concurrency = Math.max(
      1,
      Math.floor(options.concurrency ?? services.options.limits.stepConcurrency),
    );
  }

  /** True when the step would be skipped: its conditions do not hold, or its list's step was skipped. @internal */
  skips(planned: PlannedStep): boolean {
    return this.#skips(planned);
  }

  /**
   * Starts the steps, each once the steps it waits for have finished and every step before it in
   * `order` has started. Returns the run's failure (or null) at once when every step finished
   * without an await (a chain of synchronous actions), else a promise of it.
   */
  protected schedule(): RunError | null | Promise<RunError | null> {
    this.#waiting = this.plan.waitCounts.slice();
    this.settingOff = true;
    this.#pump();
    this.settingOff = false;
    if (this.#running === 0) return this.failure;
    if (this.persistDue) this.maybePersist(Date.now());
    return new Promise<RunError | null>((resolve) => (this.#scheduled = resolve));
  }

  /**
   * Starts every step that may start. A step whose work finished without an await settles inside
   * the loop, so a chain of them runs on without a promise per step; the loop never calls itself.
   */
  #pump(): void {
    const { order, steps } = this.plan;
    for (;;) {
      if (this.failure === null && this.aborted) this.failure = this.abortError();
      if (this.failure !== null || this.#next >= order.length || this.#running >= this.#concurrency) break;
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
    if (this.#running === 0) this.#scheduled?.(this.failure);
  }

  /** A step is done: the steps waiting for it wait for one fewer; its error (the first) stops the run. */
  #settle(planned: PlannedStep, error: RunError | null): void {
    this.#running -= 1;
    if (error === WAITS) {
      // The steps after a waiting step wait with it: they start when the run goes on.
      this.waitingSteps += 1;
      return;
    }
    const { waiters, waitersFrom } = this.plan;
    const waiting = this.#waiting;
    for (let i = waitersFrom[planned.index]!; i < waitersFrom[planned.index + 1]!; i++)
      waiting[waiters[i]!]! -= 1;
    if (error && this.failure === null) this.failure = error;
  }

  /** Runs one step: its record and events; the step's error when it fails the run. At once when its work has no await. */
  #runStep(planned: PlannedStep): RunError | null | Promise<RunError | null> {
    const record = this.recordOf(planned.index);
    // A run that goes on after a wait ended keeps what its steps did before it.
    if (FINISHED.has(record.status)) return null;
    if (this.#skips(planned)) {
      this.skipped[planned.index] = true;
      record.status = 'skipped';
      record.finished_at = iso(Date.now());
      if (this.emit)
        this.event({
          type: 'step.skipped',
          run_id: this.id,
          step: planned.step.name,
          at: record.finished_at,
        });
      return null;
    }
    const started = Date.now();
    record.status = 'running';
    record.started_at ??= iso(started);
    this.maybePersist(started);
    const outcome = planned.forEach
      ? this.runItems(planned, planned.forEach, record)
      : this.attempts(planned, this.scopeOnce, record, undefined);
    return outcome instanceof Promise
      ? outcome.then((o) => this.#stepDone(planned, record, started, o))
      : this.#stepDone(planned, record, started, outcome);
  }

  /** Records a step's outcome and emits its event; the step's error when it fails the run. */
  #stepDone(planned: PlannedStep, record: StepRecord, started: number, outcome: Attempted): RunError | null {
    const step = planned.step;
    const finished = Date.now();
    if (outcome.error === null && isWaiting(outcome.output))
      return this.#waits(planned, record, outcome.output);
    record.finished_at = iso(finished);
    if (outcome.error === null) {
      this.outputs[planned.index] = outcome.output;
      record.output = outcome.output;
      record.status = 'succeeded';
      if (planned.index - this.textFrom >= STEPS_PER_TEXT - 1) this.textBlock();
      if (this.emit)
        this.event({
          type: 'step.succeeded',
          run_id: this.id,
          step: step.name,
          duration_ms: finished - started,
          at: record.finished_at,
        });
      this.maybePersist(finished);
      return null;
    }
    const { code, message } = outcome.error;
    const runError = { ...outcome.error, step: step.name, message: `step "${step.name}" failed: ${message}` };
    record.status = 'failed';
    record.error = runError;
    if (this.emit)
      this.event({
        type: 'step.failed',
        run_id: this.id,
        step: step.name,
        error: runError,
        duration_ms: finished - started,
        at: record.finished_at,
      });
    // A lost item is the engine's fault, not the step's, and a step the run's stop cut short did not
    // fail on its own: either fails the run whatever on_error says (the run's error names the step).
    if (planned.onError === 'fail' || code === ITEMS_LOST || this.aborted) return runError;
    const output = { error: { code, message } };
    this.outputs[planned.index] = output;
    record.output = output;
    this.maybePersist(finished);
    return null;
  }

  /** A step began to wait: recorded `waiting`, with its `step.waiting` event. */
  #waits(planned: PlannedStep, record: StepRecord, waiting: Waiting): RunError {
    record.status = 'waiting';
    record.wait = waiting.wait;
    record.output = null;
    if (this.emit)
      this.event({
        type: 'step.waiting',
        run_id: this.id,
        step: planned.step.name,
        wait: waiting.wait,
        at: iso(Date.now()),
      });
    this.unsave(planned.index);
    return WAITS;
  }

  /** True when the step's conditions do not hold, or its for_each list comes from a skipped step. */
  #skips(planned: PlannedStep): boolean {
    const root = planned.forEach?.reference.root;
    if (root !== undefined && root !== this.plan.inputName && this.skipped[this.indexOf(root)]) return true;
    const conditions = planned.conditions;
    for (let i = 0; i < conditions.length; i++) if (!this.holds(conditions[i]!, this.scopeOnce)) return true;
    return false;
  }
}

/** Statuses of a step that a run going on after a wait does not run again. */
const FINISHED = new Set(['succeeded', 'failed', 'skipped']);

/** The wait counts of an execution whose schedule has not started. */
const EMPTY_COUNTS = new Int32Array(0);
