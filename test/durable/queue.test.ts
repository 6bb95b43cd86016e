import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import type { DurableRun, RunChange } from '../../src/adapters/queue.js';

let db: PostgresDatabase;
beforeAll(async () => {
  db = await openPostgres();
});
afterAll(async () => {
  await db.close();
});

const record = (id: string) => ({
  id,
  workflow: 'w',
  status: 'running',
  input: {},
  output: null,
  error: null,
  started_at: new Date().toISOString(),
  finished_at: null,
  steps: [],
});

/** A change that adds `by` to the state's counter, with no events (so the event count stays). */
const add =
  (by: number, seen: number[]) =>
  (run: DurableRun): RunChange => {
    const n = (run.state as { n: number }).n;
    seen.push(n);
    return { record: run.record, state: { n: n + by }, events: [], jobs: [] };
  };

describe('the queue commits a change decided on a loaded run only while the run is unchanged', () => {
  it('writes the guess when nothing changed the run since it was loaded', async () => {
    await db.queue.begin('same', { record: record('same'), state: { n: 0 }, events: [], jobs: [] });
    const seen: number[] = [];
    await db.queue.commit('same', undefined, add(1, seen), await db.queue.load('same'));
    expect(seen).toEqual([0]);
    expect((await db.queue.load('same'))!.state).toEqual({ n: 1 });
  });

  it('decides again under the lock when another commit changed the run, even one without events', async () => {
    await db.queue.begin('stale', { record: record('stale'), state: { n: 0 }, events: [], jobs: [] });
    const stale = await db.queue.load('stale');
    await db.queue.commit('stale', undefined, add(1, []), await db.queue.load('stale'));
    const seen: number[] = [];
    await db.queue.commit('stale', undefined, add(10, seen), stale);
    // First on the stale run (a guess that is not written), then on the run read under the lock.
    expect(seen).toEqual([0, 1]);
    expect((await db.queue.load('stale'))!.state).toEqual({ n: 11 });
  });

  it('logs events and loads in one call, and a run that ended is left alone', async () => {
    await db.queue.begin('log', { record: record('log'), state: { n: 0 }, events: [], jobs: [] });
    const run = await db.queue.load('log', [{ type: 'step.started', step: 's' }]);
    expect(run!.state).toEqual({ n: 0 });
    expect((await db.queue.events('log', 0)).map((e) => e.event)).toEqual([
      { type: 'step.started', step: 's' },
    ]);
    await db.queue.commit('log', undefined, (current) => ({
      record: { ...(current.record as object), status: 'cancelled', finished_at: new Date().toISOString() },
      state: current.state,
      events: [{ type: 'run.finished' }],
      jobs: [],
    }));
    expect(await db.queue.load('log', [{ type: 'step.started', step: 't' }])).toBeUndefined();
    expect(await db.queue.events('log', 0)).toHaveLength(2);
  });
});

describe('a worker takes the jobs that are due in the order they came due', () => {
  it('takes a job made ready at once before one enqueued earlier whose delay ended after it', async () => {
    const own = await openPostgres();
    try {
      const job = (run: string, delayMs?: number) => ({
        record: record(run),
        state: { n: 0 },
        events: [],
        jobs: [{ job: { run, step: 's', attempt: 1 }, ...(delayMs ? { delayMs } : {}) }],
      });
      await own.queue.begin('delayed', job('delayed', 300));
      await own.queue.begin('at-once', job('at-once'));
      // Both are due now; the delayed one, enqueued first, came due last.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const taken: string[] = [];
      const worker = await own.queue.work(
        async (delivery) => {
          taken.push(delivery.job.run);
        },
        { concurrency: 1 },
      );
      const until = Date.now() + 10_000;
      while (taken.length < 2 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      await worker.stop();
      expect(taken).toEqual(['at-once', 'delayed']);
    } finally {
      await own.close();
    }
  });
});
