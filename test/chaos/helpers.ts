/**
 * What the chaos tests share: schemas of their own on a server (dropped with the pg-boss schema
 * beside them), waiting for runs under a deadline, and the checks on what the sink saw.
 */
import pg from 'pg';
import { expect } from 'vitest';
import type { Engine, RunRecord } from '../../src/index.js';
import type { Sink } from './sink.js';
import { STEPS } from './workflow.js';

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A random whole number of ms in [low, high). */
export const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low));

/** Waits until `test` holds, polling; rejects after `ms` naming `what`. */
export async function until(test: () => boolean, ms: number, what: string): Promise<void> {
  for (const end = Date.now() + ms; !test(); await sleep(50))
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms`);
}

/** Schema names on a server, each dropped by `drop()` with its `<schema>_jobs` (pg-boss). */
export function serverSchemas(url: string): { next(): string; drop(): Promise<void> } {
  const prefix = `stepwire_chaos_${Math.random().toString(36).slice(2, 10)}`;
  const made: string[] = [];
  return {
    next() {
      const name = `${prefix}_${made.length}`;
      made.push(name);
      return name;
    },
    async drop() {
      if (made.length === 0) return;
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
      await client.connect();
      try {
        for (const name of made)
          for (const schema of [name, `${name}_jobs`])
            await client.query(`drop schema if exists ${client.escapeIdentifier(schema)} cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * The final records of runs, in order; rejects after `ms` naming the runs not finished then and
 * their stored status.
 */
export async function finished(
  engine: Engine,
  results: Promise<RunRecord>[],
  ms: number,
): Promise<RunRecord[]> {
  const done: (RunRecord | undefined)[] = results.map(() => undefined);
  results.forEach((result, i) => void result.then((record) => (done[i] = record)).catch(() => undefined));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    const all = await Promise.race([Promise.all(results), deadline]);
    if (all !== 'late') return all;
  } finally {
    clearTimeout(timer);
  }
  const { runs } = await engine.listRuns({ limit: 1000 });
  const late = runs.filter((run) => run.status === 'queued' || run.status === 'running').slice(0, 5);
  const records = await Promise.all(late.map((run) => engine.getRun(run.id)));
  throw new Error(
    `${done.filter((r) => r === undefined).length} runs were not finished ${ms} ms after the chaos: ` +
      records
        .map((run) => `${run.id} ${run.status} [${run.steps.map((s) => `${s.name}:${s.status}`).join(' ')}]`)
        .join('; '),
  );
}

/** Polls the engine until every run in `ids` has a final status; rejects after `ms`. */
export async function settled(engine: Engine, ids: string[], ms: number): Promise<RunRecord[]> {
  const until = Date.now() + ms;
  for (;;) {
    const records = await Promise.all(ids.map((id) => engine.getRun(id)));
    const open = records.filter((run) => run.status === 'queued' || run.status === 'running');
    if (open.length === 0) return records;
    if (Date.now() > until)
      throw new Error(
        `${open.length} runs were not finished ${ms} ms after the chaos: ` +
          open
            .slice(0, 5)
            .map(
              (run) => `${run.id} ${run.status} [${run.steps.map((s) => `${s.name}:${s.status}`).join(' ')}]`,
            )
            .join('; '),
      );
    await sleep(200);
  }
}

/**
 * Checks what the sink saw for runs that all succeeded: exactly one distinct idempotency key per
 * (run, step), nothing else. Returns the physical calls beyond one per key.
 */
export function expectOneKeyPerStep(sink: Sink, records: RunRecord[]): number {
  expect(
    records.filter((run) => run.status !== 'succeeded').map((run) => [run.id, run.status, run.error]),
  ).toEqual([]);
  const expected = records
    .flatMap((run) => Array.from({ length: STEPS }, (_, i) => `${run.id}:s${i}`))
    .sort();
  expect([...sink.byKey().keys()].sort()).toEqual(expected);
  return sink.calls.length - expected.length;
}

/** Asserts that no stored run is left `queued` or `running`, and that there are `count` runs. */
export async function expectNoneOpen(engine: Engine, count: number): Promise<void> {
  const { runs } = await engine.listRuns({ limit: 1000 });
  expect(runs).toHaveLength(count);
  expect(
    runs.filter((run) => run.status === 'queued' || run.status === 'running').map((run) => run.id),
  ).toEqual([]);
}
