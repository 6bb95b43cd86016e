/**
 * A read-only look at the jobs of a durable run queue, for the operator console: how many wait, run
 * and failed, and the latest of them. A queue may offer it (`openPostgres(...).queue` does).
 * @module
 */
import type { StepJob } from './queue.js';

/**
 * Where a job of the queue is: ready and `waiting` for a worker, `delayed` until its start time (a
 * retry's backoff, a run's time limit), taken by a worker (`active`), or `failed` for good.
 */
export type QueueJobState = 'waiting' | 'delayed' | 'active' | 'failed';

/** One job as the console shows it. */
export interface QueueJobView {
  /** The queue's id of the job. */
  id: string;
  /** Where it is. */
  state: QueueJobState;
  /** The step of the run it executes. */
  job: StepJob;
  /** Deliveries of it that did not finish, from 0. */
  retries: number;
  /** When it was made, ISO. */
  created_at: string;
  /** When it may start (a retry's backoff, a timer), ISO. */
  start_after: string;
  /** When a worker took it, ISO, or null. */
  started_at: string | null;
}

/** The jobs of a queue: counts by state and the newest jobs of each. */
export interface QueueJobsPage {
  /** Jobs in each state. */
  counts: Record<QueueJobState, number>;
  /** The newest jobs, at most `limit` of each state, newest first. */
  jobs: QueueJobView[];
}

/** A queue that lets its jobs be looked at. @internal */
export interface InspectableQueue {
  /** The counts by state and the newest `limit` jobs of each state. */
  jobs(limit: number): Promise<QueueJobsPage>;
}

/** Whether `queue` lets its jobs be looked at. @internal */
export function isInspectable(queue: unknown): queue is InspectableQueue {
  return typeof (queue as Partial<InspectableQueue> | undefined)?.jobs === 'function';
}
