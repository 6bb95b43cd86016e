import type { RunError, RunStatus, StepWait } from '../schema/index.js';

export type {
  ItemFailure,
  RunError,
  RunRecord,
  RunStatus,
  RunSummary,
  StepItems,
  StepRecord,
  StepStatus,
  StepWait,
} from '../schema/index.js';

/**
 * Something that happened in a run, in order. Observe with `onEvent` or `engine.start(...).events`.
 * In a `for_each` step, `step.started` comes once for the step, `item.finished` once per item, and
 * `step.retrying` and `step.log` name the item they belong to in `item`.
 */
export type RunEvent =
  | { type: 'run.started'; run_id: string; workflow: string; at: string }
  | { type: 'step.started'; run_id: string; step: string; attempt: number; at: string }
  | {
      type: 'step.retrying';
      run_id: string;
      step: string;
      attempt: number;
      delay_ms: number;
      error: RunError;
      at: string;
      item?: number;
    }
  | { type: 'step.succeeded'; run_id: string; step: string; duration_ms: number; at: string }
  | { type: 'step.skipped'; run_id: string; step: string; at: string }
  | { type: 'step.failed'; run_id: string; step: string; error: RunError; duration_ms: number; at: string }
  | { type: 'step.log'; run_id: string; step: string; message: string; at: string; item?: number }
  /** A `wait` step began to wait (for an approval, an event or a time). */
  | { type: 'step.waiting'; run_id: string; step: string; wait: StepWait; at: string }
  /** Every step that could run has; the run waits for its `wait` steps (status `waiting`). */
  | { type: 'run.waiting'; run_id: string; waiting: string[]; at: string }
  /** Someone decided an approval of the run's step (the step's output lists every decision). */
  | {
      type: 'approval.decided';
      run_id: string;
      step: string;
      approval_id: string;
      by: string;
      approved: boolean;
      at: string;
    }
  /** A waiting run goes on: a wait of its step ended. */
  | { type: 'run.resumed'; run_id: string; at: string }
  | {
      type: 'item.finished';
      run_id: string;
      step: string;
      /** Index of the item in the list, from 0. */
      item: number;
      status: 'succeeded' | 'failed' | 'skipped';
      attempts: number;
      error: RunError | null;
      at: string;
    }
  | {
      type: 'run.finished';
      run_id: string;
      status: Exclude<RunStatus, 'queued' | 'running' | 'waiting'>;
      error: RunError | null;
      at: string;
    };
