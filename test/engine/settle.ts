import type { Engine } from '../../src/index.js';

/** Waits (10 s at most) until no run of the engine's storage is queued or running. */
export async function settle(engine: Engine): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const { runs } = await engine.listRuns({ limit: 1000 });
    if (runs.every((run) => run.status !== 'queued' && run.status !== 'running')) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
