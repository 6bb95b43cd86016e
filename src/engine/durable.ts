/**
 * Durable runs: with a queue, a run is stored and its steps become jobs that any process
 * calling `engine.work()` executes, one job per step. A step's result, the jobs it makes ready and the
 * completion of its job commit together; a worker that dies loses only the step it was running.
 * @module
 */
import { EventFeed } from './event-feed.js';
import type {
  Delivery,
  DurableRun,
  LoggedEvents,
  QueueWorker,
  RunQueue,
  StepJob,
} from '../adapters/queue.js';
import { NotFoundError, StepwireError } from '../errors/index.js';
import type { Plan, PlannedStep, RunServices } from './plan-types.js';
import type { RunError, RunEvent, RunRecord, StepRecord } from './record.js';
import { Execution, INITIATOR, RUN_DEADLINE, type DeliveredStep, type RunOptions } from './run.js';
import { initiatorOf } from '../access/principal.js';
import type { RunInitiator } from '../schema/run-record-types.js';
import type { Workflow } from '../schema/index.js';
import {
  advance,
  advanceItem,
  isFinal,
  type DurableState,
  type Happening,
  type ItemHappening,
} from './durable-schedule.js';
import { LISTED_ITEM_FAILURES } from '../schema/index.js';
import { traceRun } from './tracing.js';
import { outputProblem } from './json-value.js';
import { stepChars } from './record-size.js';
import { Waiting, isWaiting } from './waits/waiting.js';
import { firstDue } from './for-each.js';

/** Deliveries of one job after which its step counts as lost (its worker died every time). @internal */
export const MAX_DELIVERIES = 8;

/** The step name of the job that enforces a run's time limit. */
const TIMER = '';
/** The longest delay `setTimeout` keeps (about 24.8 days); a later deadline is left to the timer job. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How often a process waiting on a run reads its events when no notification came, in ms. */
const FALLBACK_POLL_MS = 1000;

/**
 * Polls in a row without an event after which a follower reads the run's stored status, doubling
 * up to the most: a run's record made final without its `run.finished` event still resolves.
 */
const QUIET_POLLS = 3;
const MOST_QUIET_POLLS = 60;

/** The events logged as a job starts: a step's `step.started`; none for the time limit, a collect or an item. */
function startedEvents(job: StepJob): RunEvent[] | undefined {
  if (job.step === TIMER || job.collect || job.item !== undefined) return undefined;
  const at = new Date().toISOString();
  return [{ type: 'step.started', run_id: job.run, step: job.step, attempt: job.attempt, at }];
}

/** What durable runs need from the engine. @internal */
export interface DurableHost {
  /** The services the steps of a run started by `initiator` run with (`workflow` may run as the service). */
  services(initiator?: RunInitiator, workflow?: Workflow): RunServices;
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
  readonly #followers = new Map<string, Set<(logged?: LoggedEvents) => void>>();
  /** The fallback poll of each following here (for a missed notification), with its run. */
  readonly #polls = new Set<{ id: string; poll: (count?: number) => Promise<void> }>();
  /** Runs every followed run's fallback poll while any run is followed. */
  #ticker: ReturnType<typeof setInterval> | undefined;
  /** Stops following a run (what `follow` set up for it), rejecting its result with `error`. */
  readonly #unfollow = new Map<string, (error: Error) => void>();
  /** Steps executing in this process, by run: aborted when the run ends elsewhere (a cancel). */
  readonly #inFlight = new Map<string, Set<AbortController>>();
  readonly #plans = new Map<string, Plan>();
  /**
   * The record and list a `for_each` step's items run with, by `<run>\0<step>`: what an item reads
   * is final before its step starts, so the run is loaded once per process, not once per item.
   */
  readonly #itemRuns = new Map<string, { record: RunRecord; state: DurableState; items: unknown[] }>();
  #unwatch: (() => void) | undefined;

  constructor(queue: RunQueue, host: DurableHost) {
    this.#queue = queue;
    this.#host = host;
  }

  /**
   * Stores a run, enqueues its first steps and its time limit, and follows it. A retry passes the
   * run it retries and the step records it keeps: those steps are not enqueued again.
   */
  async start(
    plan: Plan,
    input: unknown,
    options: RunOptions,
    id: string,
    retry?: { of: string; kept: StepRecord[]; version: number | undefined },
  ): Promise<DurableStart> {
    const principal = options[INITIATOR];
    const initiator = principal && initiatorOf(principal);
    const services = this.#host.services(initiator, plan.workflow);
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
      steps: retry ? retry.kept : [],
      ...(retry ? { retry_of: retry.of } : {}),
      ...((retry?.version ?? plan.version) === undefined
        ? {}
        : { workflow_version: (retry?.version ?? plan.version)! }),
      ...(initiator ? { initiator } : {}),
      ...(trace.traceparent ? { traceparent: trace.traceparent } : {}),
    };
    const timeoutMs = options.timeoutMs ?? services.options.limits.runTimeoutMs;
    const deadline = new Date(startedAt + timeoutMs);
    const state: DurableState = {
      definition: plan.workflow,
      enqueued: retry ? retry.kept.map((step) => step.name) : [],
      ...(retry ? { recordChars: retry.kept.reduce((sum, step) => sum + stepChars(step), 0) } : {}),
      chain: [plan.workflow.name],
      ...(Number.isNaN(deadline.getTime()) ? {} : { deadline: deadline.toISOString(), timeoutMs }),
    };
    const change = advance(plan, services, record, state, { kind: 'start' })!;
    // `advance` marks a started run `running`; it stays `queued` until a worker takes a step.
    if (!isFinal(record.status)) record.status = 'queued';
    change.events.unshift({
      type: 'run.started',
      run_id: id,
      workflow: plan.workflow.name,
      at: record.started_at,
    });
    change.jobs.push({ job: { run: id, step: TIMER, attempt: 1 }, delayMs: timeoutMs });
    this.#plans.set(id, plan);
    const events = new EventFeed(options.onEvent);
    let begun!: () => void;
    const beginning = new Promise<void>((resolve) => (begun = resolve));
    const result = this.follow(id, (event) => events.push(event), beginning).finally(() => events.end());
    try {
      await this.#queue.begin(id, change);
    } catch (error) {
      result.catch(() => undefined);
      this.#stopFollowing(id);
      throw error;
    }
    begun();
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
    return { id, events, result };
  }

  /**
   * Follows a run wherever it executes: calls `onEvent` with each event in order and resolves with
   * the final record. `begin`, for a run this process is storing, resolves once it is stored: its log
   * is read then only if no notification brought its first events (the log is empty before).
   */
  follow(id: string, onEvent?: (event: RunEvent) => void, begin?: Promise<void>): Promise<RunRecord> {
    this.#unwatch ??= this.#queue.watch((runId, status, logged) => this.#changed(runId, status, logged));
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
                // Events a notification carried while this read was on its way are there already.
                if (at <= seq) continue;
                seq = at;
                if (take(event)) break;
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
      /** Passes an event on; true once it ends the following (the run finished or waits). */
      const take = (event: unknown): boolean => {
        onEvent?.(event as RunEvent);
        // A run that waits has its record too: the caller gets it, status `waiting`.
        const type = (event as RunEvent).type;
        if (type === 'run.finished' || type === 'run.waiting') ended = true;
        return ended;
      };
      const settle = (record: RunRecord) => {
        stop();
        resolve(record);
      };
      const finish = async () => {
        const run = await this.#queue.load(id);
        if (run) settle(run.record as RunRecord);
        else {
          stop();
          reject(new NotFoundError('run', id));
        }
      };
      let quiet = 0;
      let quietLimit = QUIET_POLLS;
      /** The fallback poll; `count` is the run's event count when the ticker read it. */
      const poll = async (count?: number) => {
        const before = seq;
        // Ended but not settled: reading the final record failed (the database restarting), and no
        // notification of this run is coming any more, so the poll reads it again.
        if (count === undefined || count > seq || ended) await pull();
        if (ended || seq !== before) return void (quiet = 0);
        if (++quiet < quietLimit) return;
        [quiet, quietLimit] = [0, Math.min(quietLimit * 2, MOST_QUIET_POLLS)];
        // Its record may have been ended with no event (an engine without the queue once marked
        // such runs interrupted), or the run deleted: the log would never say so.
        const run = await this.#queue.load(id).catch(() => null);
        if (ended || run === null || (run && !isFinal((run.record as RunRecord).status))) return;
        ended = true;
        stop();
        if (run) resolve(run.record as RunRecord);
        else reject(new NotFoundError('run', id));
      };
      const polling = { id, poll };
      this.#polls.add(polling);
      this.#tick();
      // A notification carrying the events right after those passed on needs no read.
      const listener = (logged?: LoggedEvents) => {
        if (logged && !ended && !pulling) {
          if (logged.after + logged.events.length <= seq) return;
          if (logged.after === seq) {
            for (const event of logged.events) {
              seq += 1;
              if (take(event)) break;
            }
            // The commit was made here: its record came with it, and needs no read.
            if (ended && logged.record !== undefined) settle(logged.record as RunRecord);
            else if (ended) void pull();
            return;
          }
        }
        void pull();
      };
      const stop = () => {
        this.#polls.delete(polling);
        this.#tick();
        this.#unfollow.delete(id);
        this.#followers.get(id)?.delete(listener);
        if (this.#followers.get(id)?.size === 0) this.#followers.delete(id);
      };
      this.#unfollow.set(id, (error) => {
        stop();
        reject(error);
      });
      let set = this.#followers.get(id);
      if (!set) this.#followers.set(id, (set = new Set()));
      set.add(listener);
      if (!begin) void pull();
      else
        void begin.then(() => {
          if (seq === 0 && !ended) void pull();
        });
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

  /**
   * A wait of a step of a waiting run ended: the step goes on the queue again, and any worker runs
   * it (it finds how its wait ended). `stale` when the run or the step no longer waits,
   * `not_durable` when the run is not on the queue.
   */
  async resume(id: string, step: string): Promise<'resumed' | 'stale' | 'not_durable'> {
    // A child run executed inside a durable run's step is no durable run itself: it goes on in process.
    if (!(await this.#queue.load(id))) return 'not_durable';
    const change = await this.#queue.commit(id, undefined, (run) =>
      this.#advance(id, run.record as RunRecord, run.state as DurableState, { kind: 'resume', step }),
    );
    return change === undefined ? 'stale' : 'resumed';
  }

  /** Appends events to a durable run's log (its followers hear them); nothing for a run not on the queue. */
  async note(id: string, events: RunEvent[]): Promise<void> {
    if (await this.#queue.load(id)) await this.#queue.log(id, events);
  }

  /** Executes queued steps in this process, at most `concurrency` at once, until stopped. */
  work(concurrency: number, onError?: (error: unknown) => void): Promise<QueueWorker> {
    this.#unwatch ??= this.#queue.watch((runId, status, logged) => this.#changed(runId, status, logged));
    return this.#queue.work((delivery) => this.#execute(delivery), {
      concurrency,
      starting: startedEvents,
      ...(onError ? { onError } : {}),
    });
  }

  /**
   * Stops listening for commits and following runs: each run followed here goes on in the queue,
   * and its result here rejects with a `StepwireError` `closed` (read the run with `getRun`).
   */
  close(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
    for (const [id, unfollow] of [...this.#unfollow])
      unfollow(
        new StepwireError(
          'closed',
          `the engine was closed while it followed run ${id}: the run goes on in the queue; read it with getRun`,
        ),
      );
  }

  /** Executes one delivered job and commits its outcome. */
  async #execute(delivery: Delivery): Promise<void> {
    const job = delivery.job as StepJob;
    if (job.item !== undefined) return this.#executeItem(delivery, job);
    // Taking a step logs its `step.started` (followers hear it as it starts) and loads the run in
    // one statement; a queued run becomes running.
    // The queue may have done it already, in the commit that handed this job over.
    const run =
      delivery.loaded === undefined
        ? await this.#queue.load(job.run, startedEvents(job))
        : (delivery.loaded ?? undefined);
    const record = run?.record as RunRecord | undefined;
    const state = run?.state as DurableState | undefined;
    const nothing = () => this.#queue.commit(job.run, delivery, () => undefined);
    if (!record || !state || isFinal(record.status)) return void (await nothing());
    if (job.step === TIMER) return void (await this.#commit(delivery, { kind: 'timeout' }, run));
    const plan = this.#planOf(job.run, state);
    const planned = plan.steps[plan.indexByName.get(job.step) ?? -1];
    const done = record.steps.find((s) => s.name === job.step);
    const waits = done?.status === 'waiting';
    if (!planned || (done && done.status !== 'running' && !waits)) return void (await nothing());
    const items = state.items?.[job.step];
    // The time of a wait of one of its items came: the items that wait run again.
    if (planned.forEach && waits && !job.collect && items?.waiting?.length)
      return void (await this.#commit(delivery, { kind: 'resume', step: job.step }, run));
    if (job.collect) {
      // The step's items are done (or stopped at a failure): their outcomes become its output.
      if (!planned.forEach || !items?.collecting) return void (await nothing());
      const delivered = await this.#collect(job, done!, items);
      return this.#commit(delivery, { kind: 'step', job, delivered, events: [] }, run);
    }
    if (planned.forEach ? items !== undefined : done && !waits && done.attempts >= job.attempt)
      return void (await nothing());
    if (delivery.redelivered >= MAX_DELIVERIES)
      return void (await this.#commit(
        delivery,
        { kind: 'lost', job, deliveries: delivery.redelivered + 1 },
        run,
      ));
    // A waiting step delivered again (its time came, or it was resumed) only finds how its wait
    // ended: the run's time limit, which waiting does not count, restarts when it commits.
    const deadline = waits ? undefined : state.deadline;
    await this.#inFlightDuring(job.run, delivery, deadline, async (signal, events) => {
      const execution = this.#resume(plan, record, state, signal, events);
      if (planned.forEach) return this.#fanOut(delivery, job, planned, execution, run!);
      const delivered = await execution.runDelivered(planned, job.attempt);
      const { output } = delivered.outcome;
      const unstorable = delivered.outcome.error === null && !isWaiting(output) && outputProblem(output);
      if (unstorable) {
        // The commit could not store it (and would be delivered again and again): the step fails.
        delivered.outcome = { output: null, error: unstorable, attempts: delivered.outcome.attempts };
        delivered.retryDelay = undefined;
      }
      return () => this.#commit(delivery, { kind: 'step', job, delivered, events }, run);
    });
  }

  /**
   * Runs `work` as a step in flight in this process: aborted when the run ends elsewhere, or when
   * the worker stops (then the job is delivered again, not committed). `work` returns the commit.
   */
  async #inFlightDuring(
    runId: string,
    delivery: Delivery,
    deadline: string | undefined,
    work: (signal: AbortSignal, events: RunEvent[]) => Promise<() => Promise<unknown>>,
  ): Promise<void> {
    const controller = new AbortController();
    const { signal, release } = eitherSignal(controller.signal, delivery.signal);
    let flights = this.#inFlight.get(runId);
    if (!flights) this.#inFlight.set(runId, (flights = new Set()));
    flights.add(controller);
    // The run's time limit, here too: its timer job waits for a free slot, which this step may hold.
    let timedOut = false;
    const left = deadline === undefined ? Number.NaN : Date.parse(deadline) - Date.now();
    const timer =
      Number.isFinite(left) && left <= MAX_TIMER_MS
        ? setTimeout(
            () => {
              timedOut = true;
              controller.abort(RUN_DEADLINE);
            },
            Math.max(0, left),
          )
        : undefined;
    try {
      let commit: (() => Promise<unknown>) | undefined;
      try {
        commit = await work(signal, []);
      } catch (error) {
        if (!timedOut) throw error;
      }
      if (timedOut) return void (await this.#commit(delivery, { kind: 'timeout' }));
      if (delivery.signal.aborted && !controller.signal.aborted) throw new Error('the worker stopped');
      // The step's work is done: its commit decides on the run as it is then, nothing is left to stop.
      clearTimeout(timer);
      flights.delete(controller);
      await commit!();
    } finally {
      clearTimeout(timer);
      release();
      flights.delete(controller);
      if (flights.size === 0) this.#inFlight.delete(runId);
    }
  }

  #resume(plan: Plan, record: RunRecord, state: DurableState, signal: AbortSignal, events: RunEvent[]) {
    return Execution.resume(
      plan,
      record,
      this.#host.services(record.initiator, plan.workflow),
      { signal, onEvent: (event) => event.type !== 'step.started' && events.push(event) },
      state.chain,
    );
  }

  /** Resolves a `for_each` step's list: its items go on the queue, or the step fails. */
  async #fanOut(
    delivery: Delivery,
    job: StepJob,
    planned: PlannedStep,
    execution: Execution,
    run: DurableRun,
  ): Promise<() => Promise<unknown>> {
    const startedAt = new Date().toISOString();
    let items: unknown[];
    try {
      items = execution.itemList(planned);
    } catch {
      // The list is not a list: the step's own run reports why, as in process.
      const delivered = await execution.runDelivered(planned, job.attempt);
      return () => this.#commit(delivery, { kind: 'step', job, delivered, events: [] }, run);
    }
    // Items read the record as it is now; the commit below changes only this step's entry.
    const [record, state] = [structuredClone(run.record), structuredClone(run.state)];
    this.#cacheItems(`${job.run}\0${job.step}`, {
      record: record as RunRecord,
      state: state as DurableState,
      items,
    });
    return () => this.#commit(delivery, { kind: 'fanout', job, total: items.length, startedAt }, run);
  }

  /** Executes one item of a `for_each` step and commits its outcome (without the run's record). */
  async #executeItem(delivery: Delivery, job: StepJob): Promise<void> {
    const key = `${job.run}\0${job.step}`;
    let run = this.#itemRuns.get(key);
    if (!run) {
      const loaded = await this.#queue.load(job.run);
      const record = loaded?.record as RunRecord | undefined;
      const state = loaded?.state as DurableState | undefined;
      const planned = state && this.#planOf(job.run, state).steps.find((s) => s.step.name === job.step);
      if (!record || !state || isFinal(record.status) || !state.items?.[job.step] || !planned?.forEach)
        return void (await this.#queue.commitState(job.run, delivery, () => undefined));
      const execution = this.#resume(this.#planOf(job.run, state), record, state, delivery.signal, []);
      run = this.#cacheItems(key, { record, state, items: execution.itemList(planned) });
    }
    const { record, state, items } = run;
    const plan = this.#planOf(job.run, state);
    const planned = plan.steps[plan.indexByName.get(job.step)!]!;
    const commit = (happening: ItemHappening) =>
      this.#queue.commitState(job.run, delivery, (current) => advanceItem(plan, current, happening));
    if (delivery.redelivered >= MAX_DELIVERIES)
      return void (await commit({ kind: 'lost', job, deliveries: delivery.redelivered + 1 }));
    await this.#inFlightDuring(job.run, delivery, state.deadline, async (signal, events) => {
      const execution = this.#resume(plan, record, state, signal, events);
      let { retryDelay, ...outcome } = await execution.runItem(planned, items, job.item!, job.attempt);
      const unstorable = outcome.status === 'succeeded' && outputProblem(outcome.output);
      if (unstorable) {
        const { code, message } = unstorable;
        const output = planned.onError === 'continue' ? { error: { code, message } } : null;
        outcome = { ...outcome, status: 'failed', output, error: unstorable };
        retryDelay = undefined;
      }
      if (retryDelay === undefined && outcome.status !== 'waiting') {
        const { status, attempts, error } = outcome;
        const at = new Date().toISOString();
        const finished = { type: 'item.finished', run_id: job.run, step: job.step, item: job.item! } as const;
        events.push({ ...finished, status, attempts, error, at });
      }
      return () => commit({ kind: 'item', job, outcome, retryDelay, events });
    });
  }

  #cacheItems(key: string, run: { record: RunRecord; state: DurableState; items: unknown[] }) {
    if (this.#itemRuns.size >= 64) this.#itemRuns.delete(this.#itemRuns.keys().next().value!);
    this.#itemRuns.set(key, run);
    return run;
  }

  /** The step's outcome from its items' results: its output in input order, or its first failure. */
  async #collect(
    job: StepJob,
    step: StepRecord,
    items: NonNullable<DurableState['items']>[string],
  ): Promise<DeliveredStep> {
    this.#itemRuns.delete(`${job.run}\0${job.step}`);
    const results = await this.#queue.items(job.run, job.step);
    const outputs = new Array<unknown>(items.total).fill(null);
    const summary = { total: items.total, succeeded: 0, failed: 0, skipped: 0, failures: [] as never[] };
    const failures: { index: number; attempts: number; error: RunError }[] = [];
    const logs: string[] = [];
    let attempts = 0;
    for (const result of results) {
      outputs[result.item] = result.output;
      attempts += result.attempts;
      if (result.status === 'succeeded') summary.succeeded += 1;
      else if (result.status === 'failed') {
        summary.failed += 1;
        if (failures.length < LISTED_ITEM_FAILURES)
          failures.push({ index: result.item, attempts: result.attempts, error: result.error as RunError });
      } else summary.skipped += 1;
      if (result.logs) logs.push(...result.logs);
    }
    // Items that never started (the step stopped at a failed item) count as skipped; those that
    // wait have no outcome yet.
    const waits = items.failure ? [] : (items.waiting ?? []);
    summary.skipped += items.total - results.length - waits.length;
    if (waits.length > 0) {
      const { wait } = firstDue(waits.map(([, w]) => ({ wait: w })));
      const record: StepRecord = { ...step, attempts, items: { ...summary, failures } };
      return { record, outcome: { output: new Waiting(wait), error: null, attempts }, retryDelay: undefined };
    }
    const record: StepRecord = {
      ...step,
      attempts,
      finished_at: new Date().toISOString(),
      items: { ...summary, failures },
      ...(logs.length > 0 ? { logs } : {}),
    };
    const { succeeded, failed, skipped } = summary;
    const outcome = items.failure
      ? { output: null, error: items.failure, attempts }
      : { output: { items: outputs, succeeded, failed, skipped }, error: null, attempts };
    return { record, outcome, retryDelay: undefined };
  }

  /** Commits a happening; `loaded` is the run the delivery was executed on (see `RunQueue.commit`). */
  async #commit(delivery: Delivery, happening: Happening, loaded?: DurableRun): Promise<void> {
    const id = delivery.job.run;
    await this.#queue.commit(
      id,
      delivery,
      (run) => this.#advance(id, run.record as RunRecord, run.state as DurableState, happening),
      loaded,
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

  /**
   * Starts the fallback poll of the followed runs when the first is followed, stops it when the last
   * is no longer. Each tick reads the event counts of every followed run in one statement (where the
   * queue can), and only a run with events not passed on yet reads its log.
   */
  #tick(): void {
    if (this.#polls.size === 0) {
      clearInterval(this.#ticker);
      this.#ticker = undefined;
      return;
    }
    this.#ticker ??= setInterval(() => void this.#pollAll(), FALLBACK_POLL_MS);
  }

  async #pollAll(): Promise<void> {
    const polls = [...this.#polls];
    const counts = this.#queue.eventCounts
      ? await this.#queue.eventCounts([...new Set(polls.map(({ id }) => id))]).catch(() => undefined)
      : undefined;
    for (const polling of polls) if (this.#polls.has(polling)) void polling.poll(counts?.get(polling.id));
  }

  /** A commit of `runId` landed somewhere: wake its followers; abort its steps here if it ended. */
  #changed(runId: string, status: string | undefined, logged?: LoggedEvents): void {
    for (const listener of this.#followers.get(runId) ?? []) listener(logged);
    if (status !== undefined && isFinal(status)) {
      for (const controller of this.#inFlight.get(runId) ?? []) controller.abort();
      this.#plans.delete(runId);
      for (const key of this.#itemRuns.keys()) if (key.startsWith(`${runId}\0`)) this.#itemRuns.delete(key);
    }
  }

  #stopFollowing(id: string): void {
    this.#unfollow.get(id)?.(new NotFoundError('run', id));
  }
}

/**
 * A signal that aborts when `a` or `b` does, with the reason of the first, and how to stop following
 * them. `AbortSignal.any` does the same through weak references, which young collections treat as
 * strong: each step's signal, and what its listeners reach, then outlived them into the old generation.
 */
function eitherSignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; release: () => void } {
  const either = new AbortController();
  if (a.aborted || b.aborted) {
    either.abort(a.aborted ? a.reason : b.reason);
    return { signal: either.signal, release: () => {} };
  }
  const fromA = () => either.abort(a.reason);
  const fromB = () => either.abort(b.reason);
  a.addEventListener('abort', fromA, { once: true });
  b.addEventListener('abort', fromB, { once: true });
  return {
    signal: either.signal,
    release: () => {
      a.removeEventListener('abort', fromA);
      b.removeEventListener('abort', fromB);
    },
  };
}
