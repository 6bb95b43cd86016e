/**
 * Durable runs: with a queue, a run is stored and its steps become jobs that any process
 * calling `engine.work()` executes, one job per step. A step's result, the jobs it makes ready and the
 * completion of its job commit together; a worker that dies loses only the step it was running.
 * @module
 */
import type { Delivery, QueueWorker, RunQueue, StepJob } from '../adapters/queue.js';
import { NotFoundError } from '../errors/index.js';
import type { Plan, RunServices } from './plan-types.js';
import type { RunEvent, RunRecord } from './record.js';
import { Execution, type RunOptions } from './run.js';
import { advance, isFinal, type DurableState, type Happening } from './durable-schedule.js';
import { traceRun } from './tracing.js';

/** Deliveries of one job after which its step counts as lost (its worker died every time). @internal */
export const MAX_DELIVERIES = 8;

/** The step name of the job that enforces a run's time limit. */
const TIMER = '';

/** How often a process waiting on a run reads its events when no notification came, in ms. */
const FALLBACK_POLL_MS = 1000;

/** What durable runs need from the engine. @internal */
export interface DurableHost {
  /** The services steps run with. */
  services(): RunServices;
  /** The plan of a definition snapshot (validated and planned once per definition). */
  planOf(definition: unknown): Plan;
}

/** A durable run started: its id, its events in order, its final record. @internal */
export interface DurableStart {
  id: string;
  events: AsyncIterable<RunEvent>;
  result: Promise<RunRecord>;
}

/** Starts, follows, executes and cancels durable runs on a queue. @internal */
export class DurableRuns {
  readonly #queue: RunQueue;
  readonly #host: DurableHost;
  readonly #followers = new Map<string, Set<() => void>>();
  /** Stops following a run: what `follow` set up for it. */
  readonly #unfollow = new Map<string, () => void>();
  /** Steps executing in this process, by run: aborted when the run ends elsewhere (a cancel). */
  readonly #inFlight = new Map<string, Set<AbortController>>();
  readonly #plans = new Map<string, Plan>();
  #unwatch: (() => void) | undefined;

  constructor(queue: RunQueue, host: DurableHost) {
    this.#queue = queue;
    this.#host = host;
  }

  /** Stores a run, enqueues its first steps and its time limit, and follows it. */
  async start(plan: Plan, input: unknown, options: RunOptions, id: string): Promise<DurableStart> {
    const services = this.#host.services();
    const startedAt = Date.now();
    const trace = await traceRun(plan.workflow.name, id, options.traceparent, startedAt);
    const record: RunRecord = {
      id,
      workflow: plan.workflow.name,
      status: 'queued',
      input,
      output: null,
      error: null,
      started_at: new Date(startedAt).toISOString(),
      finished_at: null,
      steps: [],
      ...(trace.traceparent ? { traceparent: trace.traceparent } : {}),
    };
    const state: DurableState = { definition: plan.workflow, enqueued: [], chain: [plan.workflow.name] };
    const change = advance(plan, services, record, state, { kind: 'start' })!;
    // `advance` marks a started run `running`; it stays `queued` until a worker takes a step.
    if (!isFinal(record.status)) record.status = 'queued';
    change.events.unshift({
      type: 'run.started',
      run_id: id,
      workflow: plan.workflow.name,
      at: record.started_at,
    });
    const timeoutMs = options.timeoutMs ?? services.options.limits.runTimeoutMs;
    change.jobs.push({ job: { run: id, step: TIMER, attempt: 1 }, delayMs: timeoutMs });
    this.#plans.set(id, plan);
    const events: RunEvent[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const result = this.follow(id, (event) => {
      options.onEvent?.(event);
      events.push(event);
      wake?.();
    }).finally(() => {
      ended = true;
      wake?.();
    });
    try {
      await this.#queue.begin(id, change);
    } catch (error) {
      result.catch(() => undefined);
      this.#stopFollowing(id);
      throw error;
    }
    void result.then(
      (final) => trace.end(final.status, final.error),
      () => trace.end('failed', null),
    );
    if (options.signal) {
      const signal = options.signal;
      const onAbort = () => void this.cancel(id).catch(() => undefined);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      void result.finally(() => signal.removeEventListener('abort', onAbort));
    }
    const iterable: AsyncIterable<RunEvent> = {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (events.length > 0) yield events.shift()!;
          if (ended) return;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      },
    };
    return { id, events: iterable, result };
  }

  /**
   * Follows a run wherever it executes: calls `onEvent` with each event in order and resolves with
   * the final record.
   */
  follow(id: string, onEvent?: (event: RunEvent) => void): Promise<RunRecord> {
    this.#unwatch ??= this.#queue.watch((runId, status) => this.#changed(runId, status));
    return new Promise<RunRecord>((resolve, reject) => {
      let seq = 0;
      let pulling = false;
      let again = false;
      let ended = false;
      const pull = async () => {
        if (pulling) {
          again = true;
          return;
        }
        pulling = true;
        try {
          do {
            again = false;
            if (!ended)
              for (const { seq: at, event } of await this.#queue.events(id, seq)) {
                seq = at;
                onEvent?.(event as RunEvent);
                if ((event as RunEvent).type === 'run.finished') {
                  ended = true;
                  break;
                }
              }
            if (ended) return await finish();
          } while (again);
        } catch {
          // The database may be restarting: the next notification or poll tries again (once the
          // run has ended, to read its final record).
        } finally {
          pulling = false;
        }
      };
      const finish = async () => {
        const run = await this.#queue.load(id);
        stop();
        if (run) resolve(run.record as RunRecord);
        else reject(new NotFoundError('run', id));
      };
      const timer = setInterval(() => void pull(), FALLBACK_POLL_MS);
      const listener = () => void pull();
      const stop = () => {
        clearInterval(timer);
        this.#unfollow.delete(id);
        this.#followers.get(id)?.delete(listener);
        if (this.#followers.get(id)?.size === 0) this.#followers.delete(id);
      };
      this.#unfollow.set(id, () => {
        stop();
        reject(new NotFoundError('run', id));
      });
      let set = this.#followers.get(id);
      if (!set) this.#followers.set(id, (set = new Set()));
      set.add(listener);
      void pull();
    });
  }

  /** Cancels a run: no further step starts, steps in flight are told to stop. False when it had ended. */
  async cancel(id: string): Promise<boolean> {
    const change = await this.#queue.commit(id, undefined, (run) =>
      this.#advance(id, run.record as RunRecord, run.state as DurableState, { kind: 'cancel' }),
    );
    if (change) return true;
    if (!(await this.#queue.load(id))) throw new NotFoundError('run', id);
    return false;
  }

  /** Executes queued steps in this process, at most `concurrency` at once, until stopped. */
  work(concurrency: number, onError?: (error: unknown) => void): Promise<QueueWorker> {
    this.#unwatch ??= this.#queue.watch((runId, status) => this.#changed(runId, status));
    return this.#queue.work((delivery) => this.#execute(delivery), {
      concurrency,
      ...(onError ? { onError } : {}),
    });
  }

  /** Stops listening for commits. */
  close(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
  }

  /** Executes one delivered job and commits its outcome. */
  async #execute(delivery: Delivery): Promise<void> {
    const job = delivery.job as StepJob;
    const run = await this.#queue.load(job.run);
    const record = run?.record as RunRecord | undefined;
    const state = run?.state as DurableState | undefined;
    const nothing = () => this.#queue.commit(job.run, delivery, () => undefined);
    if (!record || !state || isFinal(record.status)) return void (await nothing());
    if (job.step === TIMER) return void (await this.#commit(delivery, { kind: 'timeout' }));
    const plan = this.#planOf(job.run, state);
    const planned = plan.steps[plan.indexByName.get(job.step) ?? -1];
    const done = record.steps.find((s) => s.name === job.step);
    if (!planned || (done && done.status !== 'running') || (done && done.attempts >= job.attempt))
      return void (await nothing());
    if (delivery.redelivered >= MAX_DELIVERIES)
      return void (await this.#commit(delivery, { kind: 'lost', job, deliveries: delivery.redelivered + 1 }));
    if (record.status === 'queued') await this.#commit(undefined, { kind: 'running' }, job.run);
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, delivery.signal]);
    let flights = this.#inFlight.get(job.run);
    if (!flights) this.#inFlight.set(job.run, (flights = new Set()));
    flights.add(controller);
    const events: RunEvent[] = [];
    try {
      // Followers hear that the step started as it starts, not when it is committed.
      const started = { type: 'step.started', run_id: job.run, step: job.step, attempt: job.attempt };
      await this.#queue.log(job.run, [{ ...started, at: new Date().toISOString() }]);
      const execution = Execution.resume(
        plan,
        record,
        this.#host.services(),
        { signal, onEvent: (event) => event.type !== 'step.started' && events.push(event) },
        state.chain,
      );
      const delivered = await execution.runDelivered(planned, job.attempt);
      // A step stopped because this worker is stopping is not an outcome: the job is delivered again.
      if (delivery.signal.aborted && !controller.signal.aborted) throw new Error('the worker stopped');
      await this.#commit(delivery, { kind: 'step', job, delivered, events });
    } finally {
      flights.delete(controller);
      if (flights.size === 0) this.#inFlight.delete(job.run);
    }
  }

  async #commit(delivery: Delivery | undefined, happening: Happening, runId?: string): Promise<void> {
    const id = runId ?? delivery!.job.run;
    await this.#queue.commit(id, delivery, (run) =>
      this.#advance(id, run.record as RunRecord, run.state as DurableState, happening),
    );
  }

  #advance(id: string, record: RunRecord, state: DurableState, happening: Happening) {
    return advance(this.#planOf(id, state), this.#host.services(), record, state, happening);
  }

  #planOf(id: string, state: DurableState): Plan {
    let plan = this.#plans.get(id);
    if (!plan) {
      plan = this.#host.planOf(state.definition);
      if (this.#plans.size >= 256) this.#plans.delete(this.#plans.keys().next().value!);
      this.#plans.set(id, plan);
    }
    return plan;
  }

  /** A commit of `runId` landed somewhere: wake its followers; abort its steps here if it ended. */
  #changed(runId: string, status: string | undefined): void {
    for (const listener of this.#followers.get(runId) ?? []) listener();
    if (status !== undefined && isFinal(status)) {
      for (const controller of this.#inFlight.get(runId) ?? []) controller.abort();
      this.#plans.delete(runId);
    }
  }

  #stopFollowing(id: string): void {
    this.#unfollow.get(id)?.();
  }
}
