/**
 * The durable run queue contract: how the engine hands steps to a queue shared by many processes
 * (`openPostgres(...).queue` implements it on pg-boss). The engine decides what runs next; the queue
 * keeps runs, their events and their jobs, and commits a step's result, the jobs it makes ready and
 * the completion of its own job in one transaction.
 * @module
 */

/** One job of the queue: one step of one run (later also one item of a `for_each` step). */
export interface StepJob {
  /** The run's id. */
  run: string;
  /** The step's name; `""` for the run's time limit. */
  step: string;
  /** Attempt this job makes, from 1; a retry is a new job with the next attempt. */
  attempt: number;
}

/** A job to enqueue: when `delayMs` is set, it becomes ready that much later (a retry's backoff). */
export interface EnqueuedJob {
  /** The job. */
  job: StepJob;
  /** Delay before the job may start, in ms. */
  delayMs?: number;
}

/** A run as the queue keeps it: its record (what `getRun` shows) and the engine's state of it. */
export interface DurableRun {
  /** The run record, a plain JSON value. */
  record: unknown;
  /** What the engine keeps to schedule the run: the definition snapshot and which steps were enqueued. */
  state: unknown;
}

/** What a commit writes: the run as it is now, its new events and the jobs it makes ready. */
export interface RunChange extends DurableRun {
  /** Events to append to the run's event log, in order. */
  events: unknown[];
  /** Jobs to enqueue. */
  jobs: EnqueuedJob[];
}

/** A job handed to a worker. */
export interface Delivery {
  /** The job. */
  job: StepJob;
  /** How many times this job was delivered before (a worker died or its lease lapsed), from 0. */
  redelivered: number;
  /** Aborted when the worker stops or the queue takes the job back. */
  signal: AbortSignal;
  /** Opaque: identifies the delivery to {@link RunQueue.commit}. */
  readonly ref: unknown;
}

/** A logged event with its place in the run's log, from 1. */
export interface LoggedEvent {
  /** Position in the run's event log, from 1. */
  seq: number;
  /** The event. */
  event: unknown;
}

/** Options of {@link RunQueue.work}. */
export interface QueueWorkOptions {
  /** Most jobs this process executes at once. @default 1 */
  concurrency?: number;
  /** Told about errors of the worker itself (a lost connection, a handler that threw). */
  onError?: (error: unknown) => void;
}

/** A running worker. */
export interface QueueWorker {
  /** Stops taking jobs; resolves once the jobs in flight have finished. */
  stop(): Promise<void>;
}

/**
 * A durable run queue shared by any number of processes. Every method may be called from any of
 * them; a run's commits are serialized (the run is locked while `decide` runs).
 */
export interface RunQueue {
  /** Whether the queue works; a queue that is not there says why when used. */
  readonly available: boolean;
  /** Stores a new run with its first events and enqueues its first jobs, in one transaction. */
  begin(id: string, change: RunChange): Promise<void>;
  /**
   * In one transaction: locks the run, passes it to `decide`, stores the change `decide` returns
   * (record, state, events, jobs) and completes the delivered job. When `decide` returns undefined,
   * only the job is completed. Resolves with the change written, or undefined.
   * @throws a `NotFoundError`-like error when the run does not exist (the job is completed anyway).
   */
  commit(
    id: string,
    delivery: Delivery | undefined,
    decide: (run: DurableRun) => RunChange | undefined,
  ): Promise<RunChange | undefined>;
  /**
   * Appends events to the run's log outside a commit (e.g. `step.started` as a step begins), in one
   * statement, and notifies the run's watchers. Does nothing for a run that does not exist.
   */
  log(id: string, events: unknown[]): Promise<void>;
  /** The run as last committed, or undefined. */
  load(id: string): Promise<DurableRun | undefined>;
  /** The run's events after position `after`, in order. */
  events(id: string, after: number): Promise<LoggedEvent[]>;
  /**
   * Calls `listener` with a run's id (and its status after the commit) whenever a commit of that run
   * lands, in this process or another; returns a function that stops the calls. Calls may repeat,
   * merge or, while the database restarts, go missing: read the state.
   */
  watch(listener: (runId: string, status?: string) => void): () => void;
  /** Executes jobs with `handler`, at most `concurrency` at once, until stopped. */
  work(handler: (delivery: Delivery) => Promise<void>, options?: QueueWorkOptions): Promise<QueueWorker>;
}
