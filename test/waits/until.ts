// Waiting in tests of waits: until a run has a status.
import type { Engine, RunRecord } from '../../src/index.js';

const ended = new Set<RunRecord['status']>(['succeeded', 'failed', 'cancelled']);

/**
 * The run's record once it has `status`; throws naming the status it has after `withinMs`, or at once
 * when the run ended otherwise (with the errors of its record).
 */
export async function untilStatus(
  engine: Engine,
  id: string,
  status: RunRecord['status'],
  withinMs = 20_000,
): Promise<RunRecord> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const record = await engine.getRun(id);
    if (record.status === status) return record;
    if (ended.has(record.status)) {
      const errors = record.steps.filter((s) => s.error).map((s) => `${s.name}: ${JSON.stringify(s.error)}`);
      throw new Error(
        `run ${id} is ${record.status}, not ${status}: ${JSON.stringify(record.error)} ${errors.join('; ')}`,
      );
    }
    if (Date.now() > deadline) throw new Error(`run ${id} is ${record.status}, not ${status}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}
