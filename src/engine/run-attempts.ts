/**
 * A step's work, run: its attempts and retries, its data from references and wires, its timeout,
 * the items of a `for_each` step, the run's stop (a cancel, the time limit), and what a step's
 * context calls back (its log, a retry it makes itself).
 * @module
 */
import { LimitError, StepwireError } from '../errors/index.js';
import type { Plan, PlannedCondition, PlannedForEach, PlannedStep, RunServices } from './plan-types.js';
import { readPath, type Scope } from './references.js';
import type { RunError, StepRecord } from './record.js';
import { NO_RETRY, backoffDelay, isRetryableError, retryAfterOf, sleep } from '../retry/index.js';
import { conditionHolds, expressionHolds, missingWire, placeAt, unmergeableWire } from './step-data.js';
import { StepContext, type ContextHost } from './step-context.js';
import { stepType } from './steps/index.js';
import { runForEach, type Attempted } from './for-each.js';
import { NO_ATTEMPT, type AttemptTrace } from './tracing.js';
import { isThenable } from './thenable.js';
import { RunScope, type RunOptions } from './run-prepare.js';
import { RecordedRun, iso } from './run-record.js';
import { toRunError } from './run-errors.js';
import { Redaction, SecretScope, resolveSecrets } from './secrets.js';

/**
 * The reason a durable run's worker aborts a step's signal with when the run's time limit ends: the
 * step's span then ends as a timed-out step in process does (`limit_exceeded`, not `cancelled`). @internal
 */
export const RUN_DEADLINE: unique symbol = Symbol('the run time limit');

/** An attempt's outcome; `retryDelay` when a single attempt (see `runDelivered`) failed and may be retried. */
type Retried = Attempted & { retryDelay?: number };

/**
 * The layer of a run's execution that runs a step's work (see {@link RecordedRun} below it). @internal
 */
export abstract class AttemptedRun extends RecordedRun implements ContextHost {
  /** Made when the run's signal is first asked for: most runs never do (see {@link AttemptedRun.signal}). */
  #controller: AbortController | undefined;
  /** The run was cancelled or reached its time limit: no further step starts. */
  protected aborted = false;
  protected timedOut = false;
  protected userSignal: AbortSignal | undefined;
  /** When the run's time limit ends, when this execution knows it (not when it resumes a durable run). */
  protected runDeadline: number | undefined;
  /** Looks up step outputs and the input for references; one per run. */
  protected readonly scopeOnce: Scope;
  /**
   * The secret values this run's steps resolved, shown as `[secret NAME]` in what leaves a step:
   * its output, its error, its log lines and its retries' reasons. Made when a step first names a secret.
   */
  protected redaction: Redaction | undefined;

  constructor(
    plan: Plan,
    input: unknown,
    services: RunServices,
    options: RunOptions,
    parentId: string | undefined,
    id: string,
  ) {
    super(plan, input, services, options, parentId, id);
    this.userSignal = options.signal;
    this.scopeOnce = new RunScope(plan, input, this.outputs, this.skipped);
  }

  /** Cancels the run: no further step starts, and running steps are told to stop. @internal */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#controller?.abort();
  }

  /** The run's signal: aborted when the run is cancelled or reaches its time limit. @internal */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  protected holds(condition: PlannedCondition, scope: Scope): boolean {
    if (condition.expression) return expressionHolds(condition, (ref) => scope.value(ref.root));
    const { root, path } = condition.reference;
    return conditionHolds(scope.value(root), path, condition.value);
  }

  /**
   * Runs the step's work with its retries, once (no item) or for one item of a for_each step; never
   * throws. A plain step's attempts are counted in its record, an item's by the caller. Returns the
   * outcome at once when the work returned a value rather than a promise.
   */
  protected attempts(
    planned: PlannedStep,
    scope: Scope,
    record: StepRecord,
    item: number | undefined,
    first = 1,
    single = false,
  ): Retried | Promise<Retried> {
    const step = planned.step;
    const attempt = first;
    const span = this.trace!.attempt(step.name, step.type, attempt, item);
    if (item === undefined) {
      record.attempts = attempt;
      if (this.emit)
        this.event({
          type: 'step.started',
          run_id: this.id,
          step: step.name,
          attempt,
          at: attempt === 1 ? record.started_at! : iso(Date.now()),
        });
    }
    let output: unknown;
    try {
      if (this.aborted) throw this.abortError();
      output =
        planned.secrets === undefined
          ? this.#work(planned, this.#stepData(planned, scope), attempt, record, item, span)
          : this.#withSecrets(planned, planned.secrets, scope, attempt, record, item, span);
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

  /** Runs the step's work once, within the attempt's span when it has one. */
  #work(
    planned: PlannedStep,
    data: unknown,
    attempt: number,
    record: StepRecord,
    item: number | undefined,
    span: AttemptTrace,
  ): unknown {
    return span === NO_ATTEMPT
      ? this.#invoke(planned, data, attempt, record, item, undefined)
      : span.within(() => this.#invoke(planned, data, attempt, record, item, span.traceparent));
  }

  /**
   * The work of a step whose data names secrets: they are resolved now (a missing one fails the step),
   * only into the data the work is given, and the output comes back with their values redacted.
   */
  async #withSecrets(
    planned: PlannedStep,
    names: readonly string[],
    scope: Scope,
    attempt: number,
    record: StepRecord,
    item: number | undefined,
    span: AttemptTrace,
  ): Promise<unknown> {
    const values = await resolveSecrets(names, this.services.options.secrets);
    const redaction = (this.redaction ??= new Redaction());
    redaction.add(values);
    const data = this.#stepData(planned, new SecretScope(scope, values));
    return redaction.value((await this.#work(planned, data, attempt, record, item, span)) ?? null);
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
    const thrown = toRunError(error, this.aborted ? this.abortError() : undefined);
    const runError = this.redaction ? this.redaction.error(thrown) : thrown;
    const delay =
      attempt < retry.attempts && !this.aborted && isRetryableError(error)
        ? backoffDelay(attempt, retry, retryAfterOf(error))
        : undefined;
    span.end(delay === undefined ? 'failed' : 'retried', runError);
    if (delay === undefined) return { output: null, error: runError, attempts: attempt };
    this.event({
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
      () => this.attempts(planned, scope, record, item, attempt + 1, single),
      () => ({ output: null, error: runError, attempts: attempt }),
    );
  }

  /** Runs the items of a for_each step; `step.started` comes once, `item.finished` per item. */
  protected runItems(planned: PlannedStep, each: PlannedForEach, record: StepRecord): Promise<Attempted> {
    const step = planned.step.name;
    this.event({ type: 'step.started', run_id: this.id, step, attempt: 1, at: record.started_at! });
    return runForEach(each, planned.onError, record, {
      scope: this.scopeOnce,
      attempt: (scope, index) => this.attempts(planned, scope, record, index),
      holds: (condition, scope) => this.holds(condition, scope),
      finished: (item, status, error, attempts) => {
        if (this.emit) {
          const at = iso(Date.now());
          this.event({ type: 'item.finished', run_id: this.id, step, item, status, attempts, error, at });
        }
        this.maybePersist(Date.now());
      },
      stopReason: () => (this.aborted ? this.abortError() : this.failure && this.#stoppedError(this.failure)),
      toError: (error) => (this.redaction ? this.redaction.error(toRunError(error)) : toRunError(error)),
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
        wire.source === this.plan.inputName ? this.input : this.outputs[this.indexOf(wire.source)];
      const found = readPath(source, wire.sourcePath);
      const value = found.ok
        ? (found.value ?? null)
        : this.skipped[this.indexOf(wire.source)] || (found.missing && found.at < wire.declared)
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
    const runDeadline = this.runDeadline;
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
      const work = type.run(planned, data, context, this.services);
      return isThenable(work) ? this.#raceStop(work) : work;
    }
    const stepDeadline = Date.now() + step.timeout_ms;
    const deadline = runDeadline === undefined ? stepDeadline : Math.min(runDeadline, stepDeadline);
    return this.#raceTimeout(step.timeout_ms, (signal) =>
      type.run(
        planned,
        data,
        new StepContext(this, planned, attempt, signal, record, item, traceparent, deadline),
        this.services,
      ),
    );
  }

  /**
   * The step's work, or the run's stop (a cancel, the time limit) if that comes first: a step whose work
   * does not heed its signal does not hold the run past its end (its late result is dropped).
   */
  async #raceStop<T>(work: PromiseLike<T>): Promise<T> {
    const signal = this.signal;
    if (signal.aborted) throw this.abortError();
    let onAbort!: () => void;
    const stopped = new Promise<never>((_, reject) => {
      onAbort = () => reject(this.abortError());
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
          timer.aborted && !this.aborted
            ? new LimitError(
                'timeout_ms',
                `the step took longer than its timeout of ${timeoutMs} ms (timeout_ms)`,
              )
            : this.abortError(),
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
    if (this.redaction) message = this.redaction.text(message);
    (record.logs ??= []).push(item === undefined ? message : `item ${item}: ${message}`);
    // A line logged after the step finished goes into the next save, like any other change.
    this.unsave(planned.index);
    if (this.emit)
      this.event({
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
    if (this.redaction) reason = this.redaction.text(reason);
    if (item === undefined) record.attempts = next;
    if (this.emit)
      this.event({
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

  /** Refuses a child run's input holding a secret value (see `ContextHost.checkChildInput`). @internal */
  checkChildInput(input: unknown): void {
    if (this.redaction?.holds(input))
      throw new StepwireError(
        'secret_in_input',
        "a secret's value may not be passed in a child run's input, which its run record keeps: let the child workflow's steps name {{secrets.NAME}} themselves",
      );
  }

  /** Runs a workflow as a child of this run (see `Execution.runChild`). @internal */
  abstract runChild(
    name: string,
    input: unknown,
    signal: AbortSignal,
    traceparent: string | undefined,
    key: string,
  ): Promise<unknown>;

  protected abortError(): RunError {
    const user = this.userSignal;
    if ((this.timedOut && !user?.aborted) || (user?.aborted && user.reason === RUN_DEADLINE)) {
      return {
        code: 'limit_exceeded',
        message: 'the run took longer than its time limit (its timeoutMs, else limits.runTimeoutMs)',
      };
    }
    return { code: 'cancelled', message: 'the run was cancelled' };
  }
}
