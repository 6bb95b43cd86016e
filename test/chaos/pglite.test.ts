/**
 * The chaos scenarios, smaller, on embedded PGlite with in-process crashes, so a machine without a
 * PostgreSQL server still covers the logic: a machine (engine + PGlite directory) is crashed at the
 * exact points of a step, or at random moments under load, and a new machine opened on the same
 * directory takes the runs over once the dead machine's leases lapse; a machine is crashed inside a
 * `for_each` step, at three of its items. Last, a run is followed through a failed read of its final
 * record.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunQueue } from '../../src/adapters/queue.js';
import type { RunRecord } from '../../src/index.js';
import { between, expectNoneOpen, expectOneKeyPerStep, settled, sleep, until } from './helpers.js';
import { Machine } from './machine.js';
import { startSink, type Sink } from './sink.js';
import { chaosRows, chaosWorkflow, EACH_STEP, forEachWorkflow, STEPS, type CrashPoint } from './workflow.js';

const temp = mkdtempSync(join(tmpdir(), 'stepwire-chaos-pglite-'));
/** One directory for the file, each test in a schema of its own: creating a PGlite directory takes long. */
const dir = join(temp, 'db');
const machines: Machine[] = [];
const sinks: Sink[] = [];
afterAll(async () => {
  for (const machine of machines) await machine.close().catch(() => undefined);
  for (const sink of sinks) await sink.close();
  rmSync(temp, { recursive: true, force: true });
});

describe('chaos on embedded PGlite, in process', () => {
  it('a machine crashed before the effect, after it, and after the commit: each run completes, each effect once', async () => {
    const sink = await startSink();
    sinks.push(sink);
    const options = { dir, schema: 'points', sinkUrl: sink.url, concurrency: 4, taken: new Set<string>() };
    const first = await Machine.open(options);
    machines.push(first);
    await first.engine.workflows.create(chaosWorkflow());
    const points: CrashPoint[] = ['before-effect', 'after-effect', 'after-commit'];
    const ids: string[] = [];
    for (const point of points)
      ids.push((await first.engine.start('chaos', { crash: { step: 's2', point } })).id);
    await until(() => first.reached.length === points.length, 20_000, 'the three crash points');
    await first.crash();

    const second = await Machine.open(options);
    machines.push(second);
    const records = await settled(second.engine, ids, 40_000);
    expectOneKeyPerStep(sink, records);
    const calls = sink.byKey();
    const crashedCalls: Record<CrashPoint, number> = {
      'before-effect': 1,
      'after-effect': 2,
      'after-commit': 1,
    };
    points.forEach((point, i) => {
      expect(calls.get(`${ids[i]}:s2`), `${point}: physical calls of s2`).toBe(crashedCalls[point]);
      expect(records[i]!.steps[2]).toMatchObject({
        status: 'succeeded',
        output: { n: 2, count: crashedCalls[point] },
      });
    });
    expect(second.reached).toEqual([]);
    console.log(
      `pglite crash points: runs took ${records.map((run) => ((Date.parse(run.finished_at!) - Date.parse(run.started_at)) / 1000).toFixed(1)).join(', ')} s`,
    );
    await second.close();
  }, 90_000);

  it('a machine crashed at 3 random moments under 20 runs: every run succeeds, each effect once by key', async () => {
    const RUNS = 20;
    const CRASHES = 3;
    const CONCURRENCY = 3;
    const sink = await startSink({ delayMs: () => between(50, 150) });
    sinks.push(sink);
    const options = {
      dir,
      schema: 'storm',
      sinkUrl: sink.url,
      concurrency: CONCURRENCY,
      taken: new Set<string>(),
    };
    let machine = await Machine.open(options);
    machines.push(machine);
    await machine.engine.workflows.create(chaosWorkflow());
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) ids.push((await machine.engine.start('chaos', { crash: null })).id);
    const started = Date.now();
    for (let crash = 0; crash < CRASHES; crash++) {
      await sleep(between(1000, 2000));
      await machine.crash();
      machine = await Machine.open(options);
      machines.push(machine);
    }
    const crashed = Date.now();
    const records = await settled(machine.engine, ids, 40_000);
    const drainMs = Date.now() - crashed;

    const extra = expectOneKeyPerStep(sink, records);
    console.log(
      `pglite storm: ${CRASHES} crashes in ${((crashed - started) / 1000).toFixed(1)} s, ${RUNS} runs, ` +
        `${sink.calls.length} physical calls for ${RUNS * STEPS} keys (${extra} extra, bound ${CRASHES * CONCURRENCY}), ` +
        `drained ${(drainMs / 1000).toFixed(1)} s after the last crash`,
    );
    expect(extra).toBeLessThanOrEqual(CRASHES * CONCURRENCY);
    await expectNoneOpen(machine.engine, RUNS);
    await machine.close();
  }, 90_000);

  it('a machine crashed inside a for_each step at three items: only those re-run, each item once by key', async () => {
    const ITEMS = 12;
    const sink = await startSink();
    sinks.push(sink);
    const options = { dir, schema: 'items', sinkUrl: sink.url, concurrency: 4, taken: new Set<string>() };
    const first = await Machine.open(options);
    machines.push(first);
    // Two items at a time: once items 3 and 8 hang at their crash points, no other item runs, so the
    // crash cuts short only the planned ones (item 6 hangs after its commit, holding no item's place).
    await first.engine.workflows.create(forEachWorkflow('chaos-each', 2));
    const crashes: Record<number, CrashPoint> = { 3: 'after-effect', 6: 'after-commit', 8: 'before-effect' };
    const { id } = await first.engine.start('chaos-each', { rows: chaosRows(ITEMS, crashes) });
    await until(() => first.reached.length === 3, 20_000, 'the three crash points');
    await first.crash();

    const second = await Machine.open(options);
    machines.push(second);
    const [record] = await settled(second.engine, [id], 40_000);
    const callsOf = (n: number) => (n === 3 ? 2 : 1);
    expect([record!.status, record!.error]).toEqual(['succeeded', null]);
    expect(record!.steps[0]!.output).toEqual({
      items: Array.from({ length: ITEMS }, (_, n) => ({ n, count: callsOf(n) })),
      succeeded: ITEMS,
      failed: 0,
      skipped: 0,
    });
    expect(Object.fromEntries(sink.byKey())).toEqual(
      Object.fromEntries([
        ...Array.from({ length: ITEMS }, (_, n) => [`${id}:${EACH_STEP}:${n}`, callsOf(n)] as const),
        [`${id}:after`, 1],
      ]),
    );
    expect(first.reached.map((reached) => `${reached.key} ${reached.point}`).sort()).toEqual(
      Object.entries(crashes).map(([n, point]) => `${id}:${EACH_STEP}:${n} ${point}`),
    );
    expect(second.reached).toEqual([]);
    console.log(
      `pglite for_each crash: ${sink.calls.length} physical calls for ${sink.byKey().size} keys, ` +
        `run took ${((Date.parse(record!.finished_at!) - Date.parse(record!.started_at)) / 1000).toFixed(1)} s`,
    );
    await second.close();
  }, 90_000);

  it('a run whose final record cannot be read at once (the database restarting) resolves once it can', async () => {
    const sink = await startSink();
    sinks.push(sink);
    let failed = 0;
    // The first read of a finished run fails, as a query does while the server restarts. The
    // follower reads the record as one in another process does: a notification here comes without it.
    const flaky = (queue: RunQueue): RunQueue => ({
      ...bound(queue),
      watch: (listener) =>
        queue.watch((id, status, logged) =>
          listener(id, status, logged && { after: logged.after, events: logged.events }),
        ),
      async load(id, log) {
        const run = await queue.load(id, log);
        if ((run?.record as RunRecord | undefined)?.finished_at && failed++ === 0)
          throw new Error('Connection terminated unexpectedly');
        return run;
      },
    });
    const options = {
      dir,
      schema: 'follow',
      sinkUrl: sink.url,
      concurrency: 2,
      taken: new Set<string>(),
      wrap: flaky,
    };
    const machine = await Machine.open(options);
    machines.push(machine);
    await machine.engine.workflows.create(chaosWorkflow());
    const late = sleep(10_000).then(() => 'late' as const);
    const record = await Promise.race([machine.engine.run('chaos', { crash: null }), late]);
    expect(failed).toBeGreaterThan(0);
    expect(record === 'late' ? 'engine.run() did not resolve' : record.status).toBe('succeeded');
    await machine.close();
  }, 60_000);
});

/** The queue's methods, bound to it, to spread into a wrapper. */
function bound(queue: RunQueue): RunQueue {
  return {
    available: queue.available,
    begin: (id, change) => queue.begin(id, change),
    commit: (id, delivery, decide, loaded) => queue.commit(id, delivery, decide, loaded),
    commitState: (id, delivery, decide) => queue.commitState(id, delivery, decide),
    items: (id, step) => queue.items(id, step),
    log: (id, events) => queue.log(id, events),
    load: (id, log) => queue.load(id, log),
    events: (id, after) => queue.events(id, after),
    watch: (listener) => queue.watch(listener),
    work: (handler, options) => queue.work(handler, options),
  };
}
