/**
 * Bulk actions on runs: cancel or retry every run a filter selects. The runs are counted first and
 * the action is done on exactly those (a run started meanwhile is not touched); a dry run only counts.
 * @module
 */
import { LimitError, ValidationError } from '../errors/index.js';
import { describeValue } from '../schema/issues.js';
import { RUN_STATUSES } from '../schema/index.js';
import type { RunPage } from '../adapters/types.js';
import type { RunListQuery } from './engine-types.js';
import type { RunSummary } from './record.js';

/** Which runs a bulk action selects; every field given must hold. */
export interface BulkFilter {
  /** Runs of this workflow. */
  workflow?: string;
  /** Runs with this status, e.g. `failed`. */
  status?: RunSummary['status'];
  /** Runs started at or after this ISO date-time. */
  started_after?: string;
  /** Runs started before this ISO date-time. */
  started_before?: string;
  /** Runs started by the principal with this id. */
  initiator?: string;
}

/** A bulk action: `cancel` or `retry` the runs the filter (or the list) selects. */
export interface BulkInput {
  action: 'cancel' | 'retry';
  /** Which runs; ignored when `runs` is given. */
  filter?: BulkFilter;
  /** Exactly these runs (e.g. what a dry run answered), instead of a filter. */
  runs?: string[];
  /** Only count: nothing is done. */
  dry_run?: boolean;
}

/** What a bulk action did. */
export interface BulkResult {
  /** Runs selected. */
  count: number;
  /** Their ids, newest first. */
  runs: string[];
  /** Runs acted on (cancelled, or retried as a new run); absent for a dry run. */
  done?: number;
  /** The new runs of a retry, by the id of the run each retries. */
  retries?: Record<string, string>;
  /** Runs the action could not be done on (ended already, not found...), with why. */
  failed?: { run: string; code: string; message: string }[];
}

/** Most runs one bulk action selects. */
export const MAX_BULK_RUNS = 10_000;

/** Checks a bulk action's input. @throws {@link ValidationError} naming each bad field. @internal */
export function checkBulk(input: unknown): BulkInput {
  const issues: { code: string; path: string; message: string }[] = [];
  const bad = (path: string, message: string) => issues.push({ code: 'invalid_value', path, message });
  if (typeof input !== 'object' || input === null)
    throw new ValidationError([
      {
        code: 'invalid_type',
        path: '',
        message: `a bulk action must be an object { action, filter?, runs?, dry_run? }, got ${describeValue(input)}`,
      },
    ]);
  const { action, filter, runs, dry_run } = input as Record<string, unknown>;
  if (action !== 'cancel' && action !== 'retry')
    bad('action', `action must be "cancel" or "retry", got ${describeValue(action)}`);
  if (dry_run !== undefined && typeof dry_run !== 'boolean') bad('dry_run', 'dry_run must be true or false');
  if (
    runs !== undefined &&
    (!Array.isArray(runs) || runs.some((r) => typeof r !== 'string') || runs.length > MAX_BULK_RUNS)
  )
    bad('runs', `runs must be a list of at most ${MAX_BULK_RUNS} run ids`);
  if (filter !== undefined) {
    if (typeof filter !== 'object' || filter === null) bad('filter', 'filter must be an object');
    else {
      const f = filter as Record<string, unknown>;
      for (const key of Object.keys(f))
        if (!['workflow', 'status', 'started_after', 'started_before', 'initiator'].includes(key))
          bad(
            `filter.${key}`,
            `filter.${key} is not a filter (workflow, status, started_after, started_before, initiator)`,
          );
      for (const key of ['workflow', 'initiator'])
        if (f[key] !== undefined && typeof f[key] !== 'string')
          bad(`filter.${key}`, `filter.${key} must be a string`);
      if (f['status'] !== undefined && !(RUN_STATUSES as readonly unknown[]).includes(f['status']))
        bad('filter.status', `filter.status must be one of ${RUN_STATUSES.join(', ')}`);
      for (const key of ['started_after', 'started_before'])
        if (f[key] !== undefined && (typeof f[key] !== 'string' || Number.isNaN(Date.parse(f[key]))))
          bad(`filter.${key}`, `filter.${key} must be an ISO date-time`);
    }
  }
  if (runs === undefined && filter === undefined)
    bad('filter', 'give a filter (or the runs) the action is for');
  if (issues.length > 0) throw new ValidationError(issues);
  return input as BulkInput;
}

/** The ids of the runs a filter selects, newest first. @throws {@link LimitError} past {@link MAX_BULK_RUNS}. @internal */
export async function selectRuns(
  filter: BulkFilter,
  list: (query: RunListQuery) => Promise<RunPage<RunSummary>>,
): Promise<string[]> {
  const after = filter.started_after === undefined ? -Infinity : Date.parse(filter.started_after);
  const before = filter.started_before === undefined ? Infinity : Date.parse(filter.started_before);
  const ids: string[] = [];
  let next: string | undefined;
  do {
    const page = await list({
      limit: 1000,
      ...(filter.workflow === undefined ? {} : { workflow: filter.workflow }),
      ...(filter.status === undefined ? {} : { status: filter.status }),
      ...(filter.started_after === undefined ? {} : { started_after: filter.started_after }),
      ...(filter.started_before === undefined ? {} : { started_before: filter.started_before }),
      ...(next === undefined ? {} : { after: next }),
    });
    for (const run of page.runs) {
      const at = Date.parse(run.started_at);
      if (at < after || at >= before) continue;
      if (filter.initiator !== undefined && run.initiator?.id !== filter.initiator) continue;
      ids.push(run.id);
      if (ids.length > MAX_BULK_RUNS)
        throw new LimitError(
          'bulk.runs',
          `the filter selects more than ${MAX_BULK_RUNS} runs: narrow it (a workflow, a status, a time)`,
        );
    }
    next = page.next;
    // Newest first: once a page starts before `started_after`, no later page has a run after it.
  } while (next !== undefined);
  return ids;
}

/** What a bulk action acts through: the runs as the caller sees them. @internal */
export interface BulkHost {
  list(query: RunListQuery): Promise<RunPage<RunSummary>>;
  cancel(id: string): Promise<boolean>;
  retry(id: string): Promise<{ id: string }>;
}

/** Counts the runs a bulk action selects, then (unless a dry run) acts on exactly those. @internal */
export async function runBulk(input: BulkInput, host: BulkHost): Promise<BulkResult> {
  const runs = input.runs
    ? [...new Set(input.runs)]
    : await selectRuns(input.filter ?? {}, (q) => host.list(q));
  if (input.dry_run === true) return { count: runs.length, runs };
  let done = 0;
  const retries: Record<string, string> = {};
  const failed: NonNullable<BulkResult['failed']> = [];
  for (const id of runs) {
    try {
      if (input.action === 'cancel') {
        if (await host.cancel(id)) done += 1;
        else failed.push({ run: id, code: 'conflict', message: `run ${id} had ended` });
      } else {
        retries[id] = (await host.retry(id)).id;
        done += 1;
      }
    } catch (error) {
      const { code, message } = error as { code?: unknown; message?: unknown };
      failed.push({
        run: id,
        code: typeof code === 'string' ? code : 'error',
        message: typeof message === 'string' ? message : String(error),
      });
    }
  }
  return {
    count: runs.length,
    runs,
    done,
    ...(input.action === 'retry' ? { retries } : {}),
    ...(failed.length > 0 ? { failed } : {}),
  };
}
