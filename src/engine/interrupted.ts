/**
 * The record of a run whose process stopped while it ran: it ends `interrupted`, keeping the steps
 * that finished and naming the one the stop cut short.
 * @module
 */
import type { RunRecord, StepRecord } from './record.js';

const FINISHED: ReadonlySet<StepRecord['status']> = new Set(['succeeded', 'skipped', 'failed']);

/**
 * `record` ended as `interrupted` now: `who` ("the engine running this run") stopped. Steps that had
 * started are dropped from it and named in the error, with an unknown outcome. @internal
 */
export function interruptedRecord(record: RunRecord, who: string): RunRecord {
  const finished = record.steps.filter((s) => FINISHED.has(s.status));
  const last = finished.sort((a, b) => String(a.finished_at).localeCompare(String(b.finished_at))).at(-1);
  const cut = record.steps.filter((s) => s.status === 'running').map((s) => s.name);
  const inFlight = cut.map((name) => `"${name}"`);
  return {
    ...record,
    steps: record.steps.filter((s) => s.status !== 'running' && s.status !== 'pending'),
    status: 'interrupted',
    finished_at: new Date().toISOString(),
    error: {
      code: 'interrupted',
      message:
        (last
          ? `${who} stopped; the last finished step was "${last.name}"`
          : `${who} stopped before any step finished`) +
        (inFlight.length > 0 ? `; ${inFlight.join(', ')} had started, with an unknown outcome` : ''),
      // The step the stop cut short, when one had started (the first of several).
      ...(cut[0] !== undefined ? { step: cut[0] } : {}),
    },
  };
}
