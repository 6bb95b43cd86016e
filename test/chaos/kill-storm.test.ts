/**
 * Kill storm (issue 15): three worker processes execute 100 runs of the five-step sink workflow
 * while, for 30 s, a random worker is killed with SIGKILL and a new one started every 1 to 2 s.
 * Every run must succeed, the sink must see exactly one idempotency key per (run, step), and the
 * physical calls beyond those are bounded by what the kills could have cut short.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';
import { reachServer } from '../postgres/server.js';
import { Workers, type Worker } from './children.js';
import { between, expectNoneOpen, expectOneKeyPerStep, finished, serverSchemas, sleep } from './helpers.js';
import { startSink, type Sink } from './sink.js';
import { chaosWorkflow, QUEUE_TIMING, sinkAction } from './workflow.js';

const RUNS = 100;
const WORKERS = 3;
const CONCURRENCY = 4;
const STORM_MS = 30_000;
/** Runs start one by one over this long, so the storm always has steps to cut. */
const STARTING_MS = 24_000;
/** Most time the runs may take to finish after the storm (a lease lapses 10 to 11 s after a kill). */
const DRAIN_MS = 45_000;

const url = await reachServer();

describe.skipIf(!url)('kill storm on a Postgres server', () => {
  const schemas = serverSchemas(url!);
  let workers: Workers | undefined;
  let sink: Sink | undefined;
  let db: PostgresDatabase | undefined;
  afterAll(async () => {
    await workers?.close();
    await db?.close();
    await sink?.close();
    await schemas.drop();
  });

  it(`${RUNS} runs, a worker killed every 1-2 s for ${STORM_MS / 1000} s: each step's effect lands once by key`, async () => {
    const schema = schemas.next();
    sink = await startSink({ delayMs: () => between(50, 250) });
    db = await openPostgres(url!, { schema, queue: QUEUE_TIMING });
    const engine = new Engine({
      storage: db.storage,
      queue: db.queue,
      actions: [sinkAction(sink.url, () => undefined)],
    });
    await engine.workflows.create(chaosWorkflow());
    workers = await Workers.bundle({
      CHAOS_DB_URL: url!,
      CHAOS_SCHEMA: schema,
      CHAOS_SINK: sink.url,
      CHAOS_CONCURRENCY: String(CONCURRENCY),
    });
    const pool: Worker[] = Array.from({ length: WORKERS }, () => workers!.spawn());
    const spawned = [...pool];
    await Promise.all(pool.map((worker) => worker.ready));

    // Runs start on a schedule, whatever each start takes.
    const results = Array.from({ length: RUNS }, (_, i) =>
      sleep((i * STARTING_MS) / RUNS)
        .then(() => engine.start('chaos', { crash: null }))
        .then((handle) => handle.result),
    );
    const killed: Worker[] = [];
    const stormStarted = Date.now();
    while (Date.now() - stormStarted < STORM_MS) {
      await sleep(between(1000, 2000));
      const slot = Math.floor(Math.random() * WORKERS);
      const victim = pool[slot]!;
      await workers.kill(victim);
      killed.push(victim);
      spawned.push((pool[slot] = workers.spawn()));
    }
    const stormEnded = Date.now();
    const records = await finished(engine, results, DRAIN_MS);
    const drainMs = Date.now() - stormEnded;

    const extra = expectOneKeyPerStep(sink, records);
    const slowest = Math.max(
      ...records.map((run) => Date.parse(run.finished_at!) - Date.parse(run.started_at)),
    );
    const duplicates = sink.duplicates();
    console.log(
      `kill storm: ${killed.length} kills in ${Math.round((stormEnded - stormStarted) / 1000)} s, ` +
        `${RUNS} runs, ${sink.calls.length} physical calls for ${RUNS * 5} keys ` +
        `(${extra} extra, ${duplicates.length} keys called more than once, bound ${killed.length * CONCURRENCY}), ` +
        `slowest run ${(slowest / 1000).toFixed(1)} s, drained ${(drainMs / 1000).toFixed(1)} s after the storm`,
    );
    expect(extra).toBeLessThanOrEqual(killed.length * CONCURRENCY);
    await expectNoneOpen(engine, RUNS);
    // Only the kills ended workers: none died by itself meanwhile.
    const died = spawned.filter((worker) => !killed.includes(worker) && !worker.alive());
    expect(died.map((worker) => worker.stderr())).toEqual([]);
  }, 150_000);
});
