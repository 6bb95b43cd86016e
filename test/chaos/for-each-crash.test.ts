/**
 * Crashes inside a `for_each` step on the durable queue (issue 18): each item is its own job, so a
 * worker process killed with SIGKILL in the middle of one item loses only that item. A run over 40
 * items has its workers kill themselves at three items, as the items' rows ask: after the call to
 * the sink and before the commit, before the call, and right after the commit. Workers started in
 * their place take the items over; the run succeeds with every item, and the sink sees each item's
 * key (`<run id>:each:<index>`) once, but for the item whose effect was made before its commit.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';
import { reachServer } from '../postgres/server.js';
import { Workers } from './children.js';
import { between, finished, serverSchemas, until } from './helpers.js';
import { startSink, type Sink } from './sink.js';
import {
  chaosRows,
  EACH_STEP,
  forEachWorkflow,
  QUEUE_TIMING,
  sinkAction,
  type CrashPoint,
} from './workflow.js';

const ITEMS = 40;
/** Items of the step enqueued at once. */
const ITEM_CONCURRENCY = 4;
/** Where the workers die: item 7 after its effect, item 20 before it, item 30 after its commit. */
const CRASHES: Record<number, CrashPoint> = { 7: 'after-effect', 20: 'before-effect', 30: 'after-commit' };
/** Physical calls of a crashed item: only an effect made before the commit is made again. */
const CALLS_OF_CRASHED_ITEM: Record<CrashPoint, number> = {
  'before-effect': 1,
  'after-effect': 2,
  'after-commit': 1,
};
/** Most time the run may take: each item cut short comes back 10 to 11 s after its worker died. */
const RUN_MS = 50_000;

const url = await reachServer();

describe.skipIf(!url)('worker processes killed inside a for_each step on a Postgres server', () => {
  const schemas = serverSchemas(url!);
  const markers = mkdtempSync(join(tmpdir(), 'stepwire-chaos-items-'));
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

  it(`${ITEMS} items, workers killed at three of them: only those re-run, each item's effect once by key`, async () => {
    const schema = schemas.next();
    sink = await startSink({ delayMs: () => between(20, 60) });
    db = await openPostgres(url!, { schema, queue: QUEUE_TIMING });
    const engine = new Engine({
      storage: db.storage,
      queue: db.queue,
      actions: [sinkAction(sink.url, () => undefined)],
    });
    await engine.workflows.create(forEachWorkflow('chaos-each', ITEM_CONCURRENCY));
    // One job at a time per worker: a kill then cuts short only the item that asked for it.
    workers = await Workers.bundle({
      CHAOS_DB_URL: url!,
      CHAOS_SCHEMA: schema,
      CHAOS_SINK: sink.url,
      CHAOS_CONCURRENCY: '1',
      CHAOS_MARKERS: markers,
    });
    const { ended, stop } = await workers.keep(2);

    const started = Date.now();
    const handle = await engine.start('chaos-each', { rows: chaosRows(ITEMS, CRASHES) });
    const [record] = await finished(engine, [handle.result], RUN_MS);
    const wallMs = Date.now() - started;
    stop();
    const run = record!;

    // The run went on past the step with every item, and its next step read the count.
    expect([run.status, run.error]).toEqual(['succeeded', null]);
    const callsOf = (index: number) =>
      CRASHES[index] === undefined ? 1 : CALLS_OF_CRASHED_ITEM[CRASHES[index]];
    const each = run.steps[0]!;
    expect(each).toMatchObject({
      name: EACH_STEP,
      status: 'succeeded',
      attempts: ITEMS,
      items: { total: ITEMS, succeeded: ITEMS, failed: 0, skipped: 0, failures: [] },
    });
    // Each item's output says how many calls with its key the sink had seen when it answered.
    expect(each.output).toEqual({
      items: Array.from({ length: ITEMS }, (_, n) => ({ n, count: callsOf(n) })),
      succeeded: ITEMS,
      failed: 0,
      skipped: 0,
    });
    expect(run.steps[1]).toMatchObject({
      name: 'after',
      status: 'succeeded',
      output: { n: ITEMS, count: 1 },
    });

    // The sink saw every item's key, each once but for the item killed between effect and commit.
    const itemKey = (n: number) => `${run.id}:${EACH_STEP}:${n}`;
    const calls = sink.byKey();
    expect([...calls.keys()].sort()).toEqual(
      [...Array.from({ length: ITEMS }, (_, n) => itemKey(n)), `${run.id}:after`].sort(),
    );
    expect(Object.fromEntries(calls)).toEqual(
      Object.fromEntries([
        ...Array.from({ length: ITEMS }, (_, n) => [itemKey(n), callsOf(n)] as const),
        [`${run.id}:after`, 1],
      ]),
    );
    // One outcome kept per item, each from its first attempt: a redelivery is the same attempt.
    const kept = await db.queue.items(run.id, EACH_STEP);
    expect(kept.map((result) => [result.item, result.status, result.attempts])).toEqual(
      Array.from({ length: ITEMS }, (_, n) => [n, 'succeeded', 1]),
    );

    // Each worker that ended killed itself at its item's crash point, once per point.
    const planned = Object.entries(CRASHES);
    await until(() => ended.length >= planned.length, 5000, 'the end of the three workers that crashed');
    expect(readdirSync(markers).sort()).toEqual(
      planned.map(([n, point]) => `${itemKey(Number(n))}.${point}`).sort(),
    );
    expect(
      ended.map((worker) => [
        worker.lines.filter((line) => line.startsWith('crash ')),
        worker.child.signalCode,
      ]),
    ).toEqual(
      expect.arrayContaining(
        planned.map(([n, point]) => [[`crash ${itemKey(Number(n))} ${point}`], 'SIGKILL']),
      ),
    );
    expect(ended).toHaveLength(planned.length);
    console.log(
      `for_each crash: ${ended.length} workers killed (items ${planned.map(([n, point]) => `${n} ${point}`).join(', ')}); ` +
        `${sink.calls.length} physical calls for ${calls.size} distinct keys (${ITEMS} items + 1 step), ` +
        `${sink.calls.length - calls.size} extra; run took ${(wallMs / 1000).toFixed(1)} s`,
    );
  }, 90_000);
});
