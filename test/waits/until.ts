// Waiting in tests of waits: until a run has a status.
import type { Engine, RunRecord } from '../../src/index.js';

/** The run's record once it has `status`; throws naming the status it has after `withinMs`. */
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
    if (Date.now() > deadline) throw new Error(`run ${id} is ${record.status}, not ${status}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}
