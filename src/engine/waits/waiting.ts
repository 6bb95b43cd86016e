import type { WaitRecord } from './wait-book.js';

/** Where a waiting step waits, as its step record shows it. */
export interface StepWait {
  /** The wait's id (an approval's id). */
  id: string;
  kind: WaitRecord['kind'];
  /** When it times out (a timer: when it ends), if it does. */
  due_at?: string;
}

/**
 * What a `wait` step hands the runner instead of an output while its wait has not ended: the step
 * is recorded `waiting`, the steps after it do not start, and the run waits. @internal
 */
export class Waiting {
  readonly wait: StepWait;

  constructor(record: WaitRecord) {
    this.wait = { id: record.id, kind: record.kind, ...(record.due_at ? { due_at: record.due_at } : {}) };
  }
}

/** Whether a step's outcome is a wait that has not ended. @internal */
export function isWaiting(output: unknown): output is Waiting {
  return output instanceof Waiting;
}
