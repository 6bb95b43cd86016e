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
