/**
 * Types of the engine's run methods, apart from the engine so that its views need not import it.
 * @module
 */
import type { RunEvent, RunRecord } from './record.js';

/** Filters and paging of `engine.listRuns`. */
export interface RunListQuery {
  /** Only runs of this workflow. */
  workflow?: string | undefined;
  /** Only runs with this status, e.g. `failed`. */
  status?: RunRecord['status'] | undefined;
  /** Only runs started at or after this ISO date or date-time, e.g. `2026-01-31T00:00:00Z`. */
  started_after?: string | undefined;
  /** Only runs started before this ISO date or date-time (the end of the window, not in it). */
  started_before?: string | undefined;
  /** Most runs in the page, 1 to 1000. @default 50 */
  limit?: number | undefined;
  /** The `next` of the previous page. */
  after?: string | undefined;
}

/** A run started with `engine.start`: its id, its events as they happen, and its result. */
export interface RunHandle {
  /** The run id (also the key of its record). */
  id: string;
  /**
   * True when `options.key` was used before: this is the run that start began, `events` is empty and
   * `result` is its record once it ends.
   */
  replayed: boolean;
  /**
   * Every event of the run, in order; the iteration ends when the run finishes. Each iteration, at
   * once with others or after them, gives every event from the first. A start that a run key
   * replayed has none.
   */
  events: AsyncIterable<RunEvent>;
  /** The finished run record. */
  result: Promise<RunRecord>;
}
