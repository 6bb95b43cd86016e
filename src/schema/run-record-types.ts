import type { RUN_STATUSES, STEP_STATUSES } from './run-record.js';

/*
 * These types describe what `RunRecordSchema` (run-record.ts) validates; a type test
 * checks that they stay equal to the schema's output.
 */

/**
 * Status of a run. `queued`: accepted but not started yet (a durable mode queues runs);
 * `waiting`: a `wait` step waits for an approval, an event or a time, and nothing else runs;
 * `interrupted`: the engine running it stopped before it finished.
 */
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * Status of a step in a run record. `running` and `waiting` (a `wait` step whose wait has not
 * ended) only show while the run goes on; steps that never started are not listed (`pending` is
 * internal, never stored).
 */
export type StepStatus = (typeof STEP_STATUSES)[number];

/** An error as kept in a run record. */
export interface RunError {
  /** Stable code, e.g. `step_failed`, `limit_exceeded`, `cancelled`. */
  code: string;
  /** What went wrong, naming the step. */
  message: string;
  /** The step that failed, when one did. */
  step?: string;
  /** Problems with their paths, for validation errors. */
  issues?: { code: string; path: string; message: string }[];
}

/** One failed item of a `for_each` step. */
export interface ItemFailure {
  /** Index of the item in the list, from 0. */
  index: number;
  /** Attempts made for the item. */
  attempts: number;
  /** Why the item failed. */
  error: RunError;
}

/**
 * The items of a `for_each` step in a run record: counts, and the failures listed (the first 100 by
 * index). When the step has finished, `succeeded + failed + skipped` is `total`.
 */
export interface StepItems {
  /** Items in the list. */
  total: number;
  /** Items that succeeded. */
  succeeded: number;
  /** Items that failed (listed or not). */
  failed: number;
  /** Items that did not run: their conditions did not hold, or the step stopped before them. */
  skipped: number;
  /** The failed items with the lowest indexes, at most 100, in index order. */
  failures: ItemFailure[];
}

/** Where a `waiting` step waits. */
export interface StepWait {
  /** The wait's id (an approval's id for `GET /approvals/{id}`), or the child run's for `run`. */
  id: string;
  /** What it waits for: an approval, an event, a time, or (`run`) a child run that waits. */
  kind: 'approval' | 'event' | 'timer' | 'run';
  /** When it times out (a timer: when it ends), ISO. */
  due_at?: string;
}

/** One step of a run record. */
export interface StepRecord {
  /** Step name. */
  name: string;
  /** Where the step is. */
  status: StepStatus;
  /** Attempts made (0 when not started or skipped). */
  attempts: number;
  /** ISO time the step started, or null. */
  started_at: string | null;
  /** ISO time the step ended, or null. */
  finished_at: string | null;
  /** The step's output; null when skipped or not finished. */
  output: unknown;
  /** Why the step failed, or null. */
  error: RunError | null;
  /** Lines a transform script logged. */
  logs?: string[];
  /** The items of a `for_each` step, summarized. */
  items?: StepItems;
  /** Where a `wait` step waits (kept once it has ended). */
  wait?: StepWait;
}

/** The record of one workflow run, kept by the storage adapter. */
export interface RunRecord {
  /** Run id. */
  id: string;
  /** Workflow name. */
  workflow: string;
  /** Where the run is. */
  status: RunStatus;
  /** The input after defaults. */
  input: unknown;
  /** The workflow output; null unless succeeded. */
  output: unknown;
  /** Why the run failed, or null. */
  error: RunError | null;
  /** ISO start time. */
  started_at: string;
  /** ISO end time, or null while running. */
  finished_at: string | null;
  /** The steps that started or were skipped, in definition order. */
  steps: StepRecord[];
  /** The run that started this one with `run_workflow`; absent for a run started directly. */
  parent_run_id?: string;
  /** The run this one retries (`POST /runs/{id}/retry`): the steps it kept are copied from it. */
  retry_of?: string;
  /**
   * Who started the run (`engine.as(principal)`, a trigger's service principal); its steps read and
   * write as it. Absent for a run the host's own engine started.
   */
  initiator?: RunInitiator;
  /**
   * The version of the workflow's definition the run ran (see `engine.workflows.versions`); absent
   * when not known (a definition stored before definitions kept a history).
   */
  workflow_version?: number;
  /**
   * W3C trace context of the run's OpenTelemetry span, when one is recorded; work on the run
   * elsewhere continues this trace.
   */
  traceparent?: string;
}

/**
 * What a run list shows of one run (`engine.listRuns`, `GET /runs`): its id, workflow, status,
 * times and the code and message of its error, without its input, output or step records, so a
 * page of runs stays small however large their records are. Read a whole record with
 * `engine.getRun(id)` (`GET /runs/{id}`).
 */
export interface RunSummary {
  /** Run id. */
  id: string;
  /** Workflow name. */
  workflow: string;
  /** Where the run is. */
  status: RunStatus;
  /** ISO start time. */
  started_at: string;
  /** ISO end time, or null while running. */
  finished_at: string | null;
  /** The code and message of the run's error, or null. */
  error: { code: string; message: string } | null;
  /** The run that started this one with `run_workflow`; absent for a run started directly. */
  parent_run_id?: string;
  /** Who started the run; absent for a run the host's own engine started. */
  initiator?: RunInitiator;
}

/** Who started a run, as its record keeps it (never a secret). */
export interface RunInitiator {
  /** The principal's id. */
  id: string;
  /** The principal's kind. */
  kind: 'user' | 'key' | 'service';
  /** Its roles when the run started. */
  roles: string[];
  /** Its e-mail address, when it had one (row rules of the steps may use it). */
  email?: string;
}
