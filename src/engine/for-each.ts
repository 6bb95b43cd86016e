/**
 * The run side of `for_each`: the list of items, the scope an item's references resolve in, and the
 * loop that runs the items and accounts for every one. An item needs only the list, its index and
 * the run's step outputs, so each can run on its own.
 * @module
 */
import { ValidationError } from '../errors/index.js';
import type { OnError, RunError, StepRecord } from '../schema/index.js';
import { isTableLike, tableRowObjects } from '../schema/table-rows.js';
import type { PlannedCondition, PlannedForEach } from './plan-types.js';
import type { Scope } from './references.js';
import { ITEM_INDEX_ROOT, ITEM_ROOT } from './for-each-shape.js';
import { ItemLedger, runEach } from './item-ledger.js';
import { isWaiting, type StepWait, type Waiting } from './waits/waiting.js';

/** The code of a `for_each` step with items that have no outcome; it always fails the run. @internal */
export const ITEMS_LOST = 'items_lost';

/** The outcome of a step's work (or of one item's): its output, or its error. @internal */
export type Attempted =
  { output: unknown; error: null; attempts: number } | { output: null; error: RunError; attempts: number };

/** One item's outcome, as a worker of a durable run reports it. @internal */
export interface ItemOutcome {
  /** `waiting`: the item waits (its wait, or its child run's); it runs again when the step goes on. */
  status: 'succeeded' | 'failed' | 'skipped' | 'waiting';
  /** The item's entry in the step's `items` output. */
  output: unknown;
  error: RunError | null;
  attempts: number;
  logs?: string[];
  /** What a waiting item waits for. */
  wait?: StepWait;
}

/** What the item loop needs from the run. @internal */
export interface ItemHost {
  /** The run's scope: step outputs and the input. */
  scope: Scope;
  /** Runs the step's work for one item, with its retries (at once when it has no await); never rejects. */
  attempt(scope: Scope, index: number): Attempted | Promise<Attempted>;
  /** Whether a condition holds in a scope. */
  holds(condition: PlannedCondition, scope: Scope): boolean;
  /** Told when an item reaches its outcome. */
  finished(
    index: number,
    status: 'succeeded' | 'failed' | 'skipped',
    error: RunError | null,
    attempts: number,
  ): void;
  /** Why no further item may start (the run was cancelled or failed), or null. */
  stopReason(): RunError | null;
  /** A thrown error as kept in the record. */
  toError(error: unknown): RunError;
}

/**
 * Runs every item of a `for_each` step, at most `concurrency` at a time, keeping the summary and the
 * attempts in `record`. Under `on_error: "fail"` the first failed item stops the step; so does the
 * run's stop. Items that never started count as skipped; an item without an outcome fails the step.
 * @internal
 */
export async function runForEach(
  each: PlannedForEach,
  onError: OnError,
  record: StepRecord,
  host: ItemHost,
): Promise<Attempted> {
  let items: unknown[];
  try {
    items = itemsOf(each.list(host.scope), each.reference.text);
  } catch (error) {
    return { output: null, error: host.toError(error), attempts: 0 };
  }
  const ledger = new ItemLedger(items.length);
  record.attempts = 0;
  record.items = ledger.summary;
  let failedItem: RunError | null = null;
  const waits: Waiting[] = [];
  const runItem = async (index: number): Promise<boolean> => {
    const scope = itemScope(host.scope, items[index], index);
    if (!each.conditions.every((c) => host.holds(c, scope))) {
      ledger.markSkipped(index);
      host.finished(index, 'skipped', null, 0);
      return false;
    }
    ledger.start(index);
    const { output, error, attempts } = await host.attempt(scope, index);
    record.attempts += attempts;
    if (error === null && isWaiting(output)) {
      // The item waits: it has no outcome yet; the step waits once no other item is left to run.
      ledger.wait(index);
      waits.push(output);
      return false;
    }
    if (error === null) ledger.succeed(index, output, attempts);
    else if (onError === 'continue')
      ledger.fail(index, error, attempts, { error: { code: error.code, message: error.message } });
    else {
      ledger.fail(index, error, attempts, null);
      failedItem ??= { ...error, message: `item ${index}: ${error.message}` };
    }
    host.finished(index, error ? 'failed' : 'succeeded', error, attempts);
    return failedItem !== null;
  };
  const notStarted = await runEach(items.length, each.concurrency, runItem, () => host.stopReason() !== null);
  if (waits.length > 0 && !failedItem && host.stopReason() === null) {
    // The step waits for its items' waits; it runs again when the first to end (or come due)
    // ends, and each item then finds how its wait ended, or waits again.
    return { output: firstDue(waits), error: null, attempts: record.attempts };
  }
  ledger.skipFrom(notStarted);
  const { output, lost } = ledger.finish();
  const attempts = record.attempts;
  if (lost.length > 0) {
    const shown = lost.slice(0, 10).join(', ') + (lost.length > 10 ? ', …' : '');
    const message = `${lost.length} of ${items.length} items have no outcome (indexes ${shown})`;
    return { output: null, error: { code: ITEMS_LOST, message }, attempts };
  }
  if (failedItem) return { output: null, error: failedItem, attempts };
  // A stop fails the step when it kept items from starting, or cut started ones short (they failed
  // because of it, not on their own, whatever on_error says); not when every item had succeeded.
  const stopped = notStarted < items.length || ledger.summary.failed > 0 ? host.stopReason() : null;
  if (stopped) {
    const message = `${stopped.message}; ${notStarted} of ${items.length} items had started`;
    return { output: null, error: { ...stopped, message }, attempts };
  }
  return { output, error: null, attempts };
}

/** The wait a step records for its waiting items: the one due first, else the first one. @internal */
export function firstDue<W extends { wait: StepWait }>(waits: readonly W[]): W {
  let first = waits[0]!;
  for (const wait of waits) {
    const due = wait.wait.due_at;
    if (due !== undefined && (first.wait.due_at === undefined || due < first.wait.due_at)) first = wait;
  }
  return first;
}

/**
 * The items of a `for_each` list: an array as it is, a data table's rows as objects by column name
 * (a column is a name or `{ name }`). Anything else, or a table with a bad column or row, throws a
 * {@link ValidationError} naming `for_each` and the bad position. @internal
 */
export function itemsOf(value: unknown, reference: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isTableLike(value) && value.columns !== null && value.rows !== null) {
    const table = tableRowObjects(value);
    if (table.ok) return table.value;
    throw new ValidationError(
      table.issues.map((issue) => ({
        code: issue.code,
        path: `for_each.${issue.path}`,
        message: `in the data table of ${reference}, ${issue.message}`,
      })),
    );
  }
  const found = value === null ? 'null' : typeof value;
  throw new ValidationError([
    {
      code: 'invalid_for_each',
      path: 'for_each',
      message: `${reference} resolved to ${found}, not an array or a data table with columns and rows`,
    },
  ]);
}

/** The scope of one item: `item` and `item_index` name it; every other root resolves as in the run. @internal */
export function itemScope(run: Scope, item: unknown, index: number): Scope {
  return {
    value: (root, step) =>
      root === ITEM_ROOT ? item : root === ITEM_INDEX_ROOT ? index : run.value(root, step),
    skipped: (root) => root !== ITEM_ROOT && root !== ITEM_INDEX_ROOT && run.skipped(root),
  };
}
