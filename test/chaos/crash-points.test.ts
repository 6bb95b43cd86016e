/**
 * Exact crash points (issue 15): a worker process kills itself with SIGKILL at one point of step
 * `s2` of a run, as the run's input asks: before the step's call to the sink, after the call and
 * before the step's result is committed, or right after the commit. A worker started in its place
 * takes the run over; the run succeeds and the sink counts each effect once by key.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';
import { reachServer } from '../postgres/server.js';
import { Workers } from './children.js';
import { expectOneKeyPerStep, finished, serverSchemas, until } from './helpers.js';
import { startSink, type Sink } from './sink.js';
import { chaosWorkflow, QUEUE_TIMING, sinkAction, STEPS, type CrashPoint } from './workflow.js';

const POINTS: CrashPoint[] = ['before-effect', 'after-effect', 'after-commit'];
/** Physical calls of the crashed step: the call cut off before the effect is made once, by the worker taking over. */
const CALLS_OF_CRASHED_STEP: Record<CrashPoint, number> = {
  'before-effect': 1,
  'after-effect': 2,
  'after-commit': 1,
};

const url = await reachServer();

describe.skipIf(!url)('exact crash points on a Postgres server', () => {
  const schemas = serverSchemas(url!);
  const markers = mkdtempSync(join(tmpdir(), 'stepwire-chaos-markers-'));
  let workers: Workers | undefined;
  let sink: Sink | undefined;
  let db: PostgresDatabase | undefined;
  afterAll(async () => {
    await workers?.close();
    await db?.close();
    await sink?.close();
    await schemas.drop();
    rmSync(markers, { recursive: true, force: true });
  });

  it('a worker killed before the effect, after it, and after the commit: each run completes, each effect once', async () => {
    const schema = schemas.next();
    sink = await startSink();
    db = await openPostgres(url!, { schema, queue: QUEUE_TIMING });
    const engine = new Engine({
      storage: db.storage,
      queue: db.queue,
      actions: [sinkAction(sink.url, () => undefined)],
    });
    await engine.workflows.create(chaosWorkflow());
    // One step at a time per worker: a crash then cuts short only the step that asked for it.
    workers = await Workers.bundle({
      CHAOS_DB_URL: url!,
      CHAOS_SCHEMA: schema,
      CHAOS_SINK: sink.url,
      CHAOS_CONCURRENCY: '1',
      CHAOS_MARKERS: markers,
    });
    const { ended, stop } = await workers.keep(2);

    const handles = await Promise.all(
      POINTS.map((point) => engine.start('chaos', { crash: { step: 's2', point } })),
    );
    const records = await finished(
      engine,
      handles.map((handle) => handle.result),
      40_000,
    );
    stop();

    expectOneKeyPerStep(sink, records);
    const calls = sink.byKey();
    POINTS.forEach((point, i) => {
      const run = records[i]!;
      for (let step = 0; step < STEPS; step++)
        expect(calls.get(`${run.id}:s${step}`), `${point}: physical calls of s${step}`).toBe(
          step === 2 ? CALLS_OF_CRASHED_STEP[point] : 1,
        );
      // The step's output says how many calls with its key the sink had seen when it answered.
      expect(run.steps[2]).toMatchObject({
        status: 'succeeded',
        output: { n: 2, count: CALLS_OF_CRASHED_STEP[point] },
      });
    });
    // Each worker that ended killed itself at a crash point, once per point.
    await until(() => ended.length >= POINTS.length, 5000, 'the end of the three workers that crashed');
    expect(readdirSync(markers).sort()).toEqual(
      POINTS.map((point, i) => `${records[i]!.id}:s2.${point}`).sort(),
    );
    expect(
      ended.map((worker) => [
        worker.lines.filter((line) => line.startsWith('crash ')).length,
        worker.child.signalCode,
      ]),
    ).toEqual(POINTS.map(() => [1, 'SIGKILL']));
    console.log(
      `crash points: ${POINTS.length} workers killed at ${POINTS.join(', ')}; ` +
        `runs took ${records.map((run) => ((Date.parse(run.finished_at!) - Date.parse(run.started_at)) / 1000).toFixed(1)).join(', ')} s`,
    );
  }, 90_000);

  it('a worker killed inside a child run: the step runs a new child, the first one ends interrupted', async () => {
    const schema = schemas.next();
    const childSink = await startSink();
    const childDb = await openPostgres(url!, { schema, queue: QUEUE_TIMING });
    const childWorkers = await Workers.bundle({
      CHAOS_DB_URL: url!,
      CHAOS_SCHEMA: schema,
      CHAOS_SINK: childSink.url,
      CHAOS_CONCURRENCY: '1',
      CHAOS_MARKERS: markers,
    });
    try {
      const engine = new Engine({
        storage: childDb.storage,
        queue: childDb.queue,
        actions: [sinkAction(childSink.url, () => undefined)],
      });
      await engine.workflows.create(chaosWorkflow());
      await engine.workflows.create({
        name: 'parent',
        steps: [
          {
            name: 'kid',
            type: 'l2',
            l2_data: {
              provider: 'platform',
              module: 'workflows',
              action: 'run_workflow',
              input_data: { workflow_name: 'chaos', input: { crash: '{{input.crash}}' } },
            },
          },
        ],
        wires: [],
      });
      const { stop } = await childWorkers.keep(1);
      const crash = { step: 's2', point: 'before-effect', once: 'child-run' };
      const [parent] = await finished(engine, [engine.run('parent', { crash })], 40_000);
      stop();
      expect(parent).toMatchObject({ status: 'succeeded', steps: [{ name: 'kid', status: 'succeeded' }] });
      const children = (await engine.listRuns({ workflow: 'chaos' })).runs;
      expect(children.map((run) => [run.status, run.parent_run_id]).sort()).toEqual([
        ['interrupted', parent!.id],
        ['succeeded', parent!.id],
      ]);
      const cut = children.find((run) => run.status === 'interrupted')!;
      expect(cut.error).toMatchObject({
        code: 'interrupted',
        message: expect.stringContaining("the worker executing its parent's step stopped"),
      });
      expect((await engine.listRuns({ status: 'running' })).runs).toEqual([]);
    } finally {
      await childWorkers.close();
      await childDb.close();
      await childSink.close();
    }
  }, 90_000);
});
