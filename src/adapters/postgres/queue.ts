import { StepwireError } from '../../errors/index.js';

/** Options of {@link PostgresQueue.work}. */
export interface WorkOptions {
  /** Most steps this process executes at once. @default 1 */
  concurrency?: number;
}

/** A running worker of {@link PostgresQueue.work}. */
export interface QueueWorker {
  /** Stops taking steps; resolves once the steps in flight have finished. */
  stop(): Promise<void>;
}

/**
 * The durable run queue on the database `openPostgres` opened: one job per step, committed with the
 * step's result, executed by every process that works the queue. Durable runs come with the queue,
 * which this version does not have yet: `available` is false, runs execute in the calling process
 * (their records still live in the database), and `work` rejects with a `StepwireError` (code
 * `queue_unavailable`) saying so.
 */
export interface PostgresQueue {
  /** Whether durable runs are available; `false` in this version. */
  readonly available: boolean;
  /** Executes queued steps in this process until stopped. */
  work(options?: WorkOptions): Promise<QueueWorker>;
}

/** The queue until durable runs exist: says so when used. @internal */
export function unavailableQueue(): PostgresQueue {
  return {
    available: false,
    work: async function work() {
      throw new StepwireError(
        'queue_unavailable',
        'durable runs come with the queue, which this version of stepwire/postgres does not have yet:' +
          ' runs execute in the process that starts them, and their records are kept in the database',
      );
    },
  };
}
