/**
 * A database an earlier version ran kept its open step jobs in pg-boss's table (`<schema>_jobs.job`).
 * Opening it with this version moves them into the queue's own table, and a worker finishes the runs
 * they belong to; jobs pg-boss had completed are not moved.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterEach, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';
import { untilStatus } from '../waits/until.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

it("moves the open jobs of pg-boss's table into the queue when a database of an earlier version is opened", async () => {
  const pglite = await PGlite.create();
  closing.push(() => pglite.close());
  const schema = 'upgraded';
  // The run is started (its first step queued, its time limit delayed) by an engine with no worker.
  const first = await openPostgres({ pglite }, { schema });
  const starter = new Engine({ storage: first.storage, queue: first.queue });
  await starter.workflows.create({
    name: 'two',
    steps: ['a', 'b'].map((name) => ({
      name,
      type: 'l2' as const,
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { step: name } },
    })),
    wires: [{ source_name: 'a', target_name: 'b' }],
  });
  const { id } = await starter.start('two', {});
  await starter.close();
  await first.close();

  // As an earlier version left it: the jobs in pg-boss's table, no queue table, migration 8 not applied.
  await pglite.exec(`
    create schema ${schema}_jobs;
    create table ${schema}_jobs.job (
      id uuid primary key default gen_random_uuid(), name text not null, data jsonb, state text not null,
      start_after timestamptz not null, retry_count int not null default 0, created_on timestamptz not null default now());
    insert into ${schema}_jobs.job (name, data, state, start_after, retry_count)
      select 'steps', data, 'created', start_after, 2 from ${schema}.step_jobs;
    insert into ${schema}_jobs.job (name, data, state, start_after)
      values ('steps', '{"run": "gone", "step": "a", "attempt": 1}', 'completed', now());
    drop table ${schema}.step_jobs;
    delete from ${schema}.migrations where version = 8;`);
  const moved = await pglite.query<{ count: number }>(
    `select count(*)::int as count from ${schema}_jobs.job where state = 'created'`,
  );
  expect(moved.rows[0]!.count).toBe(2);

  const db = await openPostgres({ pglite }, { schema });
  closing.push(() => db.close());
  const jobs = await pglite.query<{ run_id: string; step: string; state: string; deliveries: number }>(
    `select run_id, data->>'step' as step, state, deliveries from ${schema}.step_jobs order by id`,
  );
  // The step's job and the run's time limit, with the deliveries pg-boss had counted; not the completed one.
  expect(jobs.rows.map((j) => [j.run_id, j.step, j.state, j.deliveries])).toEqual([
    [id, 'a', 'ready', 2],
    [id, '', 'ready', 2],
  ]);
  const engine = new Engine({ storage: db.storage, queue: db.queue });
  closing.push(() => engine.close());
  const worker = engine.work({ concurrency: 1, triggers: false });
  closing.push(() => worker.stop());
  const done = await untilStatus(engine, id, 'succeeded');
  expect(done.steps.map((s) => [s.name, s.status])).toEqual([
    ['a', 'succeeded'],
    ['b', 'succeeded'],
  ]);
}, 60_000);
