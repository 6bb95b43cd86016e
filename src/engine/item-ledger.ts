/**
 * The per-item state of one `for_each` step and the loop that starts its items in order.
 *
 * Each item's state (status, attempts, output, error) is kept apart from the others', so a durable
 * queue can run each item as its own job (key `<run id>:<step>:<index>`), record its outcome alone
 * and re-run only the items without one.
 * @module
 */
import { LISTED_ITEM_FAILURES, type RunError, type StepItems } from '../schema/index.js';

/** An item's state. */
const PENDING = 0;
const RUNNING = 1;
const SUCCEEDED = 2;
const FAILED = 3;
const SKIPPED = 4;
/** Started, and waiting (a wait of its own, or its child run's): no outcome yet, and not lost. */
const WAITING = 5;

/** Longest stretch of items run without giving timers and I/O a turn. */
const YIELD_EVERY_MS = 20;

/**
 * Runs `runItem(index)` for every index in order, at most `concurrency` at a time. No new item
 * starts once `runItem` resolves `true` (stop) or `stopped()` says so; items already running finish.
 * Resolves to the first index that never started. `runItem` must not reject.
 * @internal
 */
export async function runEach(
  count: number,
  concurrency: number,
  runItem: (index: number) => Promise<boolean>,
  stopped: () => boolean,
): Promise<number> {
  let next = 0;
  let stop = false;
  let since = Date.now();
  const worker = async () => {
    while (!stop && next < count) {
      // Items that finish at once (in microtasks) would hold the event loop for the whole list: a
      // cancel, a client gone or the time limit could not come in. Every 20 ms, timers get a turn.
      // The other workers take items meanwhile: after the turn, check again that an item is left
      // (taking one without that check ran items past the end).
      if (Date.now() - since > YIELD_EVERY_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        since = Date.now();
        if (stop || next >= count) break;
      }
      if (stopped()) {
        stop = true;
        break;
      }
      const index = next++;
      if (await runItem(index)) stop = true;
    }
  };
  const workers: Promise<void>[] = [];
  for (let i = 0; i < Math.min(concurrency, count); i++) workers.push(worker());
  await Promise.all(workers);
  return next;
}

/**
 * The per-item state of one `for_each` step and its live summary for the run record. The counts
 * change only when an item reaches its outcome, so they never count an item twice.
 * @internal
 */
export class ItemLedger {
  /** The summary kept in the step's run record; its counts change as items finish. */
  readonly summary: StepItems;
  #status: Uint8Array;
  #attempts: Uint16Array;
  #outputs: unknown[];
  #errors = new Map<number, RunError>();

  constructor(total: number) {
    this.summary = { total, succeeded: 0, failed: 0, skipped: 0, failures: [] };
    this.#status = new Uint8Array(total);
    this.#attempts = new Uint16Array(total);
    this.#outputs = new Array<unknown>(total).fill(null);
  }

  /** Marks an item as started. */
  start(index: number): void {
    this.#status[index] = RUNNING;
  }

  /** Records an item that succeeded with its output. */
  succeed(index: number, output: unknown, attempts: number): void {
    if (!this.#settle(index, SUCCEEDED, attempts)) return;
    this.#outputs[index] = output;
    this.summary.succeeded += 1;
  }

  /** Records an item that failed; `output` is its entry in `items` (the error, or null). */
  fail(index: number, error: RunError, attempts: number, output: unknown): void {
    if (!this.#settle(index, FAILED, attempts)) return;
    this.#outputs[index] = output;
    this.#errors.set(index, error);
    this.summary.failed += 1;
    if (this.summary.failures.length < LISTED_ITEM_FAILURES)
      this.summary.failures.push({ index, attempts, error });
  }

  /** Records an item that waits: it has no outcome until the step runs again after the wait. */
  wait(index: number): void {
    if (this.#status[index] === RUNNING) this.#status[index] = WAITING;
  }

  /** Records an item that did not run. */
  markSkipped(index: number): void {
    if (this.#settle(index, SKIPPED, 0)) this.summary.skipped += 1;
  }

  /** Records every item from `from` on that never started as skipped (the step stopped before them). */
  skipFrom(from: number): void {
    for (let i = from; i < this.#status.length; i++) if (this.#status[i] === PENDING) this.markSkipped(i);
  }

  /**
   * The step's output `{ items, succeeded, failed, skipped }`, the failures listed in index order,
   * and the indexes of items without an outcome (none, unless an item was lost).
   */
  finish(): { output: Record<string, unknown>; lost: number[] } {
    const lost: number[] = [];
    for (let i = 0; i < this.#status.length; i++) {
      const status = this.#status[i];
      if (status === PENDING || status === RUNNING) lost.push(i);
    }
    const failed = [...this.#errors.keys()].sort((a, b) => a - b).slice(0, LISTED_ITEM_FAILURES);
    this.summary.failures = failed.map((index) => ({
      index,
      attempts: this.#attempts[index]!,
      error: this.#errors.get(index)!,
    }));
    const { succeeded, skipped } = this.summary;
    return {
      output: { items: this.#outputs, succeeded, failed: this.summary.failed, skipped },
      lost,
    };
  }

  /** Moves an item to its outcome once; false when it already has one. */
  #settle(index: number, status: number, attempts: number): boolean {
    const current = this.#status[index];
    if (current === undefined || (current >= SUCCEEDED && current !== WAITING)) return false;
    this.#status[index] = status;
    this.#attempts[index] = attempts;
    return true;
  }
}
