/**
 * A 3-day timer on the queue of the PostgreSQL server, across a restart, ended by a clock moved
 * ahead. How the fake clock is made: time on the queue has two sides, and both are moved.
 * - The JS clock: the second worker is a child process (test/waits/clock-worker.ts) started with
 *   `WAITS_CLOCK_OFFSET_MS` = 3 days, which adds that to `Date.now()` and `new Date()` before the
 *   engine loads; so when the step comes again the engine finds the timer's time has come, and its
 *   `waited_seconds` counts 3 days.
 * - The database's clock: the step's next delivery is a job whose `start_after` (compared with the
 *   server's `now()`) is 3 days ahead; the test moves it to `now()` with an SQL update of the queue's
 *   table `<schema>.step_jobs`, as if those days had passed for the server too.
 * The first worker (a child process with the real clock) is killed with SIGKILL while the run
 * waits, so nothing of it is left in any process.
 *
 * Time spent waiting does not count toward the run's time limit: the job that comes at a wait's
 * time starts the limit again when the step commits, so a timer longer than the run's time limit
 * (5 minutes by default) ends and the run goes on (this once failed: the run waited for ever).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';
import { untilStatus } from './until.js';

const url = await reachServer();
const schemas = testSchemas(url);
const ROOT = resolve(import.meta.dirname, '../..');
const DAYS_3 = 3 * 24 * 3600;

const children: ChildProcess[] = [];
const closing: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const close of closing.reverse()) await close();
  await schemas.drop();
});

/** Starts test/waits/clock-worker.ts; resolves once it prints `ready`. */
function worker(schema: string, offsetMs: number): Promise<{ child: ChildProcess; ended: Promise<unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/waits/clock-worker.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      WAITS_DB_URL: url!,
      WAITS_SCHEMA: schema,
      WAITS_CLOCK_OFFSET_MS: String(offsetMs),
    },
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    if (process.env.WAITS_DEBUG) process.stderr.write(chunk);
  });
  const ended = new Promise((done) => child.once('close', done));
  return new Promise((ready, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('ready')) ready({ child, ended });
    });
    void ended.then(() => fail(new Error(`worker ended before it was ready\n${stderr}`)));
  });
}

const DAY_MS = 24 * 3600 * 1000;

async function reminderEngine(): Promise<{ engine: Engine; schema: string; db: PostgresDatabase }> {
  const schema = schemas.next();
  const db = await openPostgres(url!, { schema });
  closing.push(() => db.close());
  // This process only starts and reads runs: the steps run in the worker processes.
  const engine = new Engine({ storage: db.storage, queue: db.queue });
  closing.push(() => engine.close());
  await engine.workflows.create({
    name: 'reminder',
    steps: [
      { name: 'pause', type: 'wait', wait_data: { kind: 'timer', seconds: DAYS_3 } },
      {
        name: 'remind',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'dummy',
          action: 'dummy_task',
          input_data: { after: '{{pause.waited_seconds}}' },
        },
      },
    ],
    wires: [],
  });
  return { engine, schema, db };
}

/** The scenario: waits, every worker killed, 3 days pass, a new worker ends the timer. */
async function threeDays(timeoutMs: number | undefined, withinMs: number): Promise<void> {
  const { engine, schema } = await reminderEngine();
  const first = await worker(schema, 0);
  const began = Date.now();
  const waiting = await engine.run('reminder', {}, timeoutMs === undefined ? {} : { timeoutMs });
  expect(waiting.status).toBe('waiting');
  const wait = waiting.steps[0]!.wait!;
  expect(wait.kind).toBe('timer');
  const due = Date.parse(wait.due_at!);
  expect(due - began).toBeGreaterThanOrEqual(DAYS_3 * 1000 - 1000);
  expect(due - began).toBeLessThan(DAYS_3 * 1000 + 60_000);

  // Every process that ran the run is gone.
  first.child.kill('SIGKILL');
  await first.ended;

  const client = new pg.Client(url);
  await client.connect();
  closing.push(() => client.end());
  const jobs = `${client.escapeIdentifier(schema)}.step_jobs`;
  const pending = await client.query<{ id: string; start_after: Date }>(
    `select id, start_after from ${jobs} where run_id = $1 and data->>'step' = 'pause' and state = 'ready'`,
    [waiting.id],
  );
  // The step's next delivery is due in 3 days, by the database's clock (beside it, the job of the
  // run's time limit, which a waiting run does not count).
  expect(pending.rows).toHaveLength(1);
  expect(pending.rows[0]!.start_after.getTime() - began).toBeGreaterThan(DAYS_3 * 1000 - 60_000);

  // Nothing happens before those days have passed: a worker with the real clock leaves it waiting.
  const early = await worker(schema, 0);
  await new Promise((done) => setTimeout(done, 2_000));
  expect((await engine.getRun(waiting.id)).status).toBe('waiting');
  early.child.kill('SIGKILL');
  await early.ended;

  // Three days pass: for the database (the job is due now) and for the new worker's clock.
  const moved = await client.query(`update ${jobs} set start_after = now() where id = $1`, [
    pending.rows[0]!.id,
  ]);
  expect(moved.rowCount).toBe(1);
  const resumedAt = Date.now();
  await worker(schema, DAYS_3 * 1000);
  const done = await untilStatus(engine, waiting.id, 'succeeded', withinMs);
  const resumeMs = Date.now() - resumedAt;
  expect(done.steps.map((s) => [s.name, s.status])).toEqual([
    ['pause', 'succeeded'],
    ['remind', 'succeeded'],
  ]);
  const waited = (done.steps[0]!.output as { waited_seconds: number }).waited_seconds;
  // 3 days, give or take the seconds this test took.
  expect(Math.abs(waited - DAYS_3)).toBeLessThan(120);
  expect(done.steps[1]!.output).toEqual({ after: waited });
  console.log(`3-day timer: waited_seconds ${waited.toFixed(1)}; resumed ${resumeMs} ms after the move`);
}

describe.skipIf(url === undefined)('a 3-day timer on the queue', () => {
  it('is resumed after a restart by a worker whose clock is 3 days ahead; waited_seconds is 3 days (run time limit 4 days)', async () => {
    await threeDays(4 * DAY_MS, 30_000);
  }, 120_000);

  // The run's default time limit (5 minutes) is long past when the timer's job comes.
  it('is resumed the same way with the default run time limit', async () => {
    await threeDays(undefined, 15_000);
  }, 120_000);

  // The same without a fake clock: a 2-second timer in a run whose time limit is 1 second.
  it('a timer longer than the run time limit ends and the run goes on', async () => {
    const schema = schemas.next();
    const db = await openPostgres(url!, { schema });
    closing.push(() => db.close());
    const engine = new Engine({ storage: db.storage, queue: db.queue });
    closing.push(() => engine.close());
    const working = engine.work({ concurrency: 1, triggers: false });
    closing.push(() => working.stop());
    await engine.workflows.create({
      name: 'short',
      steps: [{ name: 'pause', type: 'wait', wait_data: { kind: 'timer', seconds: 2 } }],
      wires: [],
    });
    const waiting = await engine.run('short', {}, { timeoutMs: 1_000 });
    expect(waiting.status).toBe('waiting');
    const done = await untilStatus(engine, waiting.id, 'succeeded', 10_000);
    expect((done.steps[0]!.output as { waited_seconds: number }).waited_seconds).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
