import type { WaitRecord } from './wait-book.js';

/** Where a waiting step waits, as its step record shows it. */
export interface StepWait {
  /** The wait's id (an approval's id), or the child run's id for `run`. */
  id: string;
  /** What it waits for: a wait of its own, or (`run`) a child run that waits. */
  kind: WaitRecord['kind'] | 'run';
  /** When it times out (a timer: when it ends), if it does. */
  due_at?: string;
}

/**
 * What a `wait` step hands the runner instead of an output while its wait has not ended: the step
 * is recorded `waiting`, the steps after it do not start, and the run waits. @internal
 */
export class Waiting {
  readonly wait: StepWait;

  constructor(record: WaitRecord | StepWait) {
    const { id, kind, due_at } = record;
    this.wait = { id, kind, ...(due_at ? { due_at } : {}) };
  }

  /** The wait of a step for its child run, which waits. */
  static forRun(id: string): Waiting {
    return new Waiting({ id, kind: 'run' });
  }
}

/** Whether a step's outcome is a wait that has not ended. @internal */
export function isWaiting(output: unknown): output is Waiting {
  return output instanceof Waiting;
}
