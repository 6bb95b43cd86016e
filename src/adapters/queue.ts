/**
 * The durable run queue contract: how the engine hands steps to a queue shared by many processes
 * (`openPostgres(...).queue` implements it on a table of its schema). The engine decides what runs next; the queue
 * keeps runs, their events and their jobs, and commits a step's result, the jobs it makes ready and
 * the completion of its own job in one transaction.
 * @module
 */

/** One job of the queue: one step of one run, or one item of a `for_each` step. */
export interface StepJob {
  /** The run's id. */
  run: string;
  /** The step's name; `""` for the run's time limit. */
  step: string;
  /** Attempt this job makes, from 1; a retry is a new job with the next attempt. */
  attempt: number;
  /** The item's index, for a job of one item of a `for_each` step. */
  item?: number;
  /** Set on the job of a `for_each` step that collects its items' outcomes once none is left. */
  collect?: boolean;
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
  /**
   * The run's version when it was loaded (it changes with every commit and logged event); pass the
   * loaded run back to {@link RunQueue.commit} to skip its locking read while nothing else changed it.
   */
  version?: number;
}

/** What a commit writes: the run as it is now, its new events and the jobs it makes ready. */
export interface RunChange extends DurableRun {
  /** Events to append to the run's event log, in order. */
  events: unknown[];
  /** Jobs to enqueue. */
  jobs: EnqueuedJob[];
  /**
   * Live changes to step records not yet in `record` (the counts of a `for_each` step whose items
   * are running), by step name: merged into the record whenever it is read. Null or absent: none.
   */
  progress?: Record<string, object> | null;
}

/** The outcome of one item of a `for_each` step, kept beside the run rather than in its record. */
export interface ItemResult {
  /** The `for_each` step's name. */
  step: string;
  /** The item's index in the step's list, from 0. */
  item: number;
  /** `succeeded`, `failed` or `skipped`. */
  status: string;
  /** Attempts the item made. */
  attempts: number;
  /** The item's entry in the step's `items` output. */
  output: unknown;
  /** Why the item failed, or null. */
  error: unknown;
  /** Lines the item logged. */
  logs?: string[];
}

/** A run's status and scheduling state, without its record: what an item's commit decides on. */
export interface RunState {
  /** The run's status column. */
  status: string;
  /** What the engine keeps to schedule the run. */
  state: unknown;
}

/** What a commit of an item writes: no record, only the state, progress, events, jobs and results. */
export interface StateChange {
  /** The run's scheduling state as it is now. */
  state: unknown;
  /** As {@link RunChange.progress}. */
  progress?: Record<string, object> | null;
  /** Events to append to the run's event log, in order. */
  events: unknown[];
  /** Jobs to enqueue. */
  jobs: EnqueuedJob[];
  /** Item outcomes to keep; an item already kept is not replaced. */
  results: ItemResult[];
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
  /**
   * The run as the queue loaded it when it took the job (the events {@link QueueWorkOptions.starting}
   * gave logged), as {@link RunQueue.load} with them returns it: null when the run had ended.
   * Absent when the queue did not load it: the handler loads it itself.
   */
  readonly loaded?: DurableRun | null;
}

/** A logged event with its place in the run's log, from 1. */
export interface LoggedEvent {
  /** Position in the run's event log, from 1. */
  seq: number;
  /** The event. */
  event: unknown;
}

/** Events a commit logged, as its notification carries them: those after position `after`, in order. */
export interface LoggedEvents {
  /** Events the run had logged before these. */
  after: number;
  /** The events, at positions `after + 1` onwards. */
  events: unknown[];
  /**
   * The run's record as the commit that logged these wrote it, when that commit left the run neither
   * queued nor running (it ended, or waits): a follower needs no read of it. Given to the listeners of
   * the process that made the commit, and to those of the others when it fit in the notification.
   */
  record?: unknown;
}

/** Options of {@link RunQueue.work}. */
export interface QueueWorkOptions {
  /** Most jobs this process executes at once. @default 1 */
  concurrency?: number;
  /** Told about errors of the worker itself (a lost connection, a handler that threw). */
  onError?: (error: unknown) => void;
  /**
   * The events to log when a job starts (its `step.started`), or undefined for none. With it, a
   * queue that takes a worker's next job of the same run in the commit of its step may log them and
   * load the run in that commit too, handing the run over as {@link Delivery.loaded}.
   */
  starting?: (job: StepJob) => unknown[] | undefined;
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
   *
   * With `loaded` (the run as {@link RunQueue.load} returned it, with its version), `decide` first
   * runs on it and the change is written only if the run is still at that version; otherwise (or when
   * that `decide` returns undefined) the commit goes on as above, on the run read under the lock.
   * `decide` must therefore be a pure function of the run it is given.
   * @throws a `NotFoundError`-like error when the run does not exist (the job is completed anyway).
   */
  commit(
    id: string,
    delivery: Delivery | undefined,
    decide: (run: DurableRun) => RunChange | undefined,
    loaded?: DurableRun,
  ): Promise<RunChange | undefined>;
  /**
   * Like {@link RunQueue.commit} for the many small commits of a `for_each` step's items: the run's
   * record is neither read nor written (it may be large); `decide` sees its status and state, and the
   * change also keeps item results.
   */
  commitState(
    id: string,
    delivery: Delivery | undefined,
    decide: (run: RunState) => StateChange | undefined,
  ): Promise<StateChange | undefined>;
  /** The item results kept for a step of a run, by item index. */
  items(id: string, step: string): Promise<ItemResult[]>;
  /**
   * Appends events to the run's log outside a commit (e.g. `step.started` as a step begins), in one
   * statement, and notifies the run's watchers. Does nothing for a run that does not exist.
   */
  log(id: string, events: unknown[]): Promise<void>;
  /**
   * The run as last committed, or undefined. With `log` (a worker taking a step: its `step.started`),
   * first appends those events and marks a `queued` run `running`, in the same statement, and notifies
   * the run's watchers; a run that has ended is then left alone and undefined is returned.
   */
  load(id: string, log?: unknown[]): Promise<DurableRun | undefined>;
  /** The run's events after position `after`, in order. */
  events(id: string, after: number): Promise<LoggedEvent[]>;
  /**
   * Calls `listener` with a run's id (and its status after the commit) whenever a commit of that run
   * lands, in this process or another; returns a function that stops the calls. Calls may repeat,
   * merge or, while the database restarts, go missing: read the state. When the commit logged events
   * and they were small enough to travel with the notification, `logged` holds them, so a follower
   * that had every event before them needs no read.
   */
  watch(listener: (runId: string, status?: string, logged?: LoggedEvents) => void): () => void;
  /**
   * How many events each of the runs has logged (a run that does not exist is left out), in one
   * read: a process following many runs checks them all at once instead of reading each one's log.
   * Optional: without it, each followed run's log is read.
   */
  eventCounts?(ids: readonly string[]): Promise<Map<string, number>>;
  /** Executes jobs with `handler`, at most `concurrency` at once, until stopped. */
  work(handler: (delivery: Delivery) => Promise<void>, options?: QueueWorkOptions): Promise<QueueWorker>;
}
