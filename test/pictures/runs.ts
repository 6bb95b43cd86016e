import type { RunRecord } from '../../src/index.js';

const at = (ms: number) => new Date(Date.UTC(2025, 0, 1) + ms).toISOString();

/** A failed invoice run: two reads, the PDF, an upload that failed after 3 attempts, a skipped step. */
export function failedRun(): RunRecord {
  return {
    id: 'run-7',
    workflow: 'invoice',
    status: 'failed',
    input: { customer_id: 1 },
    output: null,
    error: { code: 'step_failed', message: 'step "upload" failed: the store is full', step: 'upload' },
    started_at: at(0),
    finished_at: at(1300),
    steps: [
      step('customer', 'succeeded', 10, 50),
      step('orders', 'succeeded', 10, 90),
      step('pdf', 'succeeded', 100, 600),
      {
        ...step('upload', 'failed', 610, 1290),
        attempts: 3,
        error: {
          code: 'step_failed',
          message: 'step "upload" failed: the store is <full> & "closed"',
          step: 'upload',
        },
      },
      { ...step('notify', 'skipped', null, 1295), attempts: 0 },
    ],
  };
}

/** A run still going: one step done, one running, the clock at 2 s. */
export function runningRun(): RunRecord {
  return {
    ...failedRun(),
    id: 'run-8',
    status: 'running',
    error: null,
    finished_at: null,
    steps: [step('customer', 'succeeded', 10, 50), { ...step('orders', 'running', 60, null), attempts: 1 }],
  };
}

function step(
  name: string,
  status: RunRecord['steps'][number]['status'],
  from: number | null,
  to: number | null,
) {
  return {
    name,
    status,
    attempts: 1,
    started_at: from === null ? null : at(from),
    finished_at: to === null ? null : at(to),
    output: null,
    error: null,
  };
}

/** The time `ms` after the runs above started. */
export const clock = (ms: number) => Date.UTC(2025, 0, 1) + ms;
