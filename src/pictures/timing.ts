/**
 * The times and words both timelines (the SVG and the text one) show for a run and its steps.
 * @module
 */
import type { RunRecord, StepRecord } from '../schema/index.js';
import { describeValue } from '../schema/issues.js';
import { formatMs } from './svg.js';

/** The stretch of time a timeline covers, in epoch ms; `length` is at least 1. @internal */
export interface RunSpan {
  start: number;
  end: number;
  length: number;
}

/**
 * Throws a `TypeError` naming `what` when `record` is no run record: an object with a string `id`,
 * `workflow` and `status`, and a `steps` list of objects each with a string `name` and `status` (and
 * an `error` with a `message`, if any); with `stepsOnly`, only its steps. A picture of anything else
 * would fail deep inside. @internal
 */
export function checkRunRecord(
  record: unknown,
  what: string,
  stepsOnly = false,
): asserts record is RunRecord {
  const problem = runRecordProblem(record, stepsOnly);
  if (problem !== undefined)
    throw new TypeError(`${what} needs a run record: ${problem}, got ${describeValue(record)}`);
}

function runRecordProblem(record: unknown, stepsOnly: boolean): string | undefined {
  if (typeof record !== 'object' || record === null) return 'an object';
  const { id, workflow, status, steps } = record as Record<string, unknown>;
  if (!stepsOnly && (typeof id !== 'string' || typeof workflow !== 'string' || typeof status !== 'string'))
    return 'id, workflow and status must be strings';
  if (!Array.isArray(steps)) return 'steps must be a list';
  for (const step of steps as unknown[]) {
    if (typeof step !== 'object' || step === null) return 'each step must be an object';
    const { name, status: stepStatus, error } = step as Record<string, unknown>;
    if (typeof name !== 'string' || typeof stepStatus !== 'string')
      return "each step's name and status must be strings";
    if (error !== undefined && error !== null && typeof (error as { message?: unknown }).message !== 'string')
      return "a step's error must have a message";
  }
  return undefined;
}

/**
 * Throws a `TypeError` naming `what` when `value` is no number from `min` to `max` (a picture's size
 * option). @internal
 */
export function checkSize(value: unknown, what: string, min: number, max: number): void {
  if (value !== undefined && !(typeof value === 'number' && value >= min && value <= max))
    throw new TypeError(`${what} must be a number from ${min} to ${max}, got ${describeValue(value)}`);
}

/** From the run's start to its end, or to `now` (default: the latest time in the record) while it goes on. @internal */
export function runSpan(record: RunRecord, now?: Date | number): RunSpan {
  const times = record.steps
    .flatMap((s) => [timeOf(s.started_at), timeOf(s.finished_at)])
    .filter((t) => t !== undefined);
  // A record whose times do not parse (written by hand, or by another tool) still draws, from 0.
  const start = timeOf(record.started_at) ?? (times.length > 0 ? Math.min(...times) : 0);
  const latest = Math.max(start, ...times);
  const until = now === undefined ? undefined : Number(now);
  const finished = timeOf(record.finished_at);
  const end =
    finished !== undefined
      ? Math.max(finished, latest)
      : Math.max(latest, until !== undefined && Number.isFinite(until) ? until : latest);
  return { start, end, length: Math.max(1, end - start) };
}

/** The epoch ms of an ISO time, or undefined for none or one that does not parse. */
function timeOf(text: string | null | undefined): number | undefined {
  if (typeof text !== 'string') return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Where a step's bar starts and ends, and the words beside it. @internal */
export interface StepSummary {
  start: number;
  end: number;
  /** e.g. `succeeded · 12 ms`, `failed · 40 ms · 3 attempts`, `skipped`. */
  text: string;
}

/** A step's bar and words; a step still running ends at `now`. @internal */
export function stepSummary(step: StepRecord, now: number): StepSummary {
  const finished = timeOf(step.finished_at) ?? now;
  const start = timeOf(step.started_at) ?? finished;
  if (step.status === 'skipped') return { start, end: finished, text: 'skipped' };
  const parts: string[] = [
    step.status,
    formatMs(finished - start) + (step.finished_at === null ? ' so far' : ''),
  ];
  const groups = itemGroups(step);
  if (groups) {
    // A for_each step counts the attempts of all its items: only the ones beyond the first say anything.
    const retries = step.attempts - groups.succeeded - groups.failed;
    parts.push(itemCounts(groups));
    if (retries > 0) parts.push(`${retries} ${retries === 1 ? 'retry' : 'retries'}`);
  } else if (step.attempts > 1) parts.push(`${step.attempts} attempts`);
  return { start, end: finished, text: parts.join(' · ') };
}

/** The item counts of a for_each step: from its record's `items`, else from its output's shape. @internal */
export function itemGroups(
  step: StepRecord,
): { succeeded: number; failed: number; skipped: number } | undefined {
  const counts = (step.items ?? step.output) as Record<string, unknown> | null | undefined;
  if (counts === null || typeof counts !== 'object') return undefined;
  const { succeeded, failed, skipped } = counts;
  if (typeof succeeded !== 'number' || typeof failed !== 'number') return undefined;
  if (step.items === undefined && !Array.isArray(counts['items'])) return undefined;
  return { succeeded, failed, skipped: typeof skipped === 'number' ? skipped : 0 };
}

function itemCounts(groups: { succeeded: number; failed: number; skipped: number }): string {
  const counts = [`${groups.succeeded} ok`];
  if (groups.failed > 0) counts.push(`${groups.failed} failed`);
  if (groups.skipped > 0) counts.push(`${groups.skipped} skipped`);
  return `items: ${counts.join(', ')}`;
}
