/**
 * Durable runs (DESIGN 12) against the in-process engine: a chain of 5 no-op `platform/dummy/dummy_task`
 * steps run through the queue with 1 and 2 workers, on PGlite in memory and on the PostgreSQL server
 * (`STEPWIRE_PG_URL`, by default postgres://postgres@127.0.0.1:5432/test; left out with a notice when
 * unreachable). Measured in the same run, per database: a bare `SELECT 1` round trip, and the same
 * chain run by an engine without a queue on the same storage. Printed: the run's latency (p50), ms
 * per step and that in round trips, runs per second with 40 runs in flight, and the SQL statements
 * per step (a statement is one round trip to the server).
 *
 * A worker is one `Engine` calling `engine.work({ concurrency: 1, triggers: false })`; 2 workers are
 * two engines, each on its own `openPostgres` of the same database, in this process (so both use one
 * clock and one statement counter; on PGlite they share the one in-memory database). Statements are
 * counted in the client: every query of a `pg` Client (the storage's pool and the LISTEN
 * connection) or of the PGlite instance, BEGIN and COMMIT included. A step's phases are timed
 * by wrapping the engine's queue: wait (the previous commit, or the run's begin, to the worker's
 * handler: NOTIFY, then the fetch, or a job handed over by the commit), load, execute, commit.
 *
 * Run: `npm run bench -- durable` or `npx tsx bench/durable.ts` (`--trace` also prints every
 * statement of one run).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { isStorageError, openPostgres, type PostgresDatabase } from '../src/adapters/postgres/index.js';
import type { Delivery, RunQueue } from '../src/adapters/queue.js';
import { Engine, type Workflow } from '../src/index.js';
import {
  SMOKE,
  check,
  checkEqual,
  median,
  printTable,
  reachServer,
  SERVER_URL,
  sized,
  smokePglite,
  time,
} from './util.js';

const STEPS = 5;
const LATENCY_RUNS = sized(20, 2);
/** Runs one at a time timed on an engine without the bench's probes (the latency the goal is judged on). */
const CLEAN_RUNS = sized(100, 2);
const THROUGHPUT_RUNS = sized(40, 3);
const PINGS = sized(200, 5);
const TRACE = process.argv.includes('--trace');
const WORKFLOW = `chain_${STEPS}`;

// --- statements, counted in the client -----------------------------------------------------------

const statements = {
  on: false,
  byKind: new Map<string, number>(),
  ms: new Map<string, number>(),
  trace: undefined as string[] | undefined,
};

/** What a statement does, by its text: stepwire's own or the bench's. */
const KINDS: [RegExp, string][] = [
  [/^\s*begin\b/i, 'BEGIN'],
  [/^\s*commit\b/i, 'COMMIT'],
  [/^\s*rollback\b/i, 'ROLLBACK'],
  [/^\s*select 1\s*$/i, 'SELECT 1 (bench)'],
  [/^\s*(un)?listen\b/i, 'LISTEN'],
  [/for update\s*$/i, 'lock run (select ... for update)'],
  [
    /^\s*select n, base, version, handed from \S+\."write_runs"\(/i,
    'insert run or commit steps (write_runs)',
  ],
  [/^\s*select pg_notify\(/i, 'notify (after the commit)'],
  [/^\s*with updated as \(\s*update \S+\."runs" set durable/i, 'write item + state + notify'],
  [
    /^\s*with counted as \(\s*update \S+\."runs" set event_count = event_count \+ json_array_length\(\$\d+::text::json\), status/i,
    'log step.started + load run + notify',
  ],
  [/^\s*with counted as/i, 'log events + notify'],
  [/from "[^"]*"\."run_events"/i, 'read events (follower)'],
  [/^\s*select record::text as "record", durable::text as "durable"/i, 'load run'],
  [/from "[^"]*"\."definitions"/i, 'read definition'],
  [/^\s*with taken as \(\s*select id from \S+\."step_jobs"/i, 'fetch jobs'],
  [/^\s*insert into \S*bench_commit/i, 'one durable commit (bench)'],
  [/^\s*update \S+\."step_jobs" set lease_until/i, 'renew leases'],
  [/^\s*delete from \S+\."step_jobs"/i, 'complete job'],
  [/^\s*update \S+\."step_jobs" set state/i, 'fail job'],
];

function kindOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  for (const [pattern, kind] of KINDS) if (pattern.test(flat)) return kind;
  return `other: ${flat.slice(0, 70)}`;
}

/** Counts a statement; the function it returns, called when the statement settles, adds up its time. */
function count(text: string): (() => void) | undefined {
  if (!statements.on) return undefined;
  const kind = kindOf(text);
  statements.byKind.set(kind, (statements.byKind.get(kind) ?? 0) + 1);
  statements.trace?.push(`${kind.padEnd(32)} ${text.replace(/\s+/g, ' ').slice(0, 150)}`);
  const start = performance.now();
  return () => void statements.ms.set(kind, (statements.ms.get(kind) ?? 0) + performance.now() - start);
}

/** Calls `done` when a query settles, whether it answers by promise or by callback. */
function settled(
  args: unknown[],
  call: (args: unknown[]) => unknown,
  done: (() => void) | undefined,
): unknown {
  if (!done) return call(args);
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function')
    args[last] = (...results: unknown[]) => (done(), (callback as (...a: unknown[]) => unknown)(...results));
  const result = call(args);
  if (result instanceof Promise) result.then(done, done);
  return result;
}

/** Counts every query of every `pg` Client in this process until undone. */
function countPg(): () => void {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const done = count(typeof first === 'string' ? first : (first?.text ?? ''));
    return settled(args, (a) => original.apply(this, a), done);
  };
  return () => void (proto.query = original);
}

type Tx = { query: (...args: never[]) => unknown; exec: (...args: never[]) => unknown };

/** Counts every query of one PGlite instance, BEGIN and COMMIT of its transactions included. */
function countPglite(pglite: PGlite): PGlite {
  const target = pglite as unknown as Tx & { transaction: (fn: (tx: Tx) => unknown) => Promise<unknown> };
  const counted = (run: Tx['query']) =>
    ((...args: unknown[]) => settled(args, (a) => run(...(a as never[])), count(String(args[0])))) as never;
  const { transaction } = target;
  target.query = counted(target.query.bind(pglite));
  target.exec = counted(target.exec.bind(pglite));
  target.transaction = (fn) =>
    transaction.call(pglite, async (tx: Tx) => {
      count('BEGIN');
      tx.query = counted(tx.query);
      tx.exec = counted(tx.exec);
      const result = await fn(tx);
      count('COMMIT');
      return result;
    });
  return pglite;
}

// --- phases of a step, timed around the queue ----------------------------------------------------

interface Phases {
  begin: number[];
  wait: number[];
  load: number[];
  execute: number[];
  commit: number[];
  tail: number[];
}

const newPhases = (): Phases => ({
  begin: [],
  wait: [],
  load: [],
  execute: [],
  commit: [],
  tail: [],
});

/** Times a queue's begin, the wait before each delivery, its load, execution and commit. */
class Probe {
  phases = newPhases();
  /** When each run's last commit (or its begin) landed. */
  readonly landed = new Map<string, number>();
  readonly #delivery = new AsyncLocalStorage<{ loaded: number }>();

  wrap(queue: RunQueue): RunQueue {
    const { landed } = this;
    const current = this.#delivery;
    const timed = async <T>(into: number[], work: Promise<T>, start = performance.now()) => {
      const result = await work;
      const took = performance.now() - start;
      into.push(took);
      return result;
    };
    return {
      available: queue.available,
      begin: async (id, change) => {
        await timed(this.phases.begin, queue.begin(id, change));
        landed.set(id, performance.now());
      },
      log: (id, events) => queue.log(id, events),
      commit: async (id, delivery, decide, loaded) => {
        const step = current.getStore();
        if (!delivery) return queue.commit(id, delivery, decide, loaded);
        const start = performance.now();
        if (step) this.phases.execute.push(start - step.loaded);
        const change = await timed(this.phases.commit, queue.commit(id, delivery, decide, loaded), start);
        landed.set(id, performance.now());
        return change;
      },
      load: async (id, log) => {
        const step = current.getStore();
        if (!step) return queue.load(id, log);
        const run = await timed(this.phases.load, queue.load(id, log));
        step.loaded = performance.now();
        return run;
      },
      commitState: (id, delivery, decide) => queue.commitState(id, delivery, decide),
      items: (id, step) => queue.items(id, step),
      events: (id, after) => queue.events(id, after),
      watch: (listener) => queue.watch(listener),
      work: (handler, options) =>
        queue.work((delivery: Delivery) => {
          const since = landed.get(delivery.job.run);
          const now = performance.now();
          if (since !== undefined) this.phases.wait.push(now - since);
          // A job handed over by its run's previous commit comes with the run loaded (in that commit).
          if (delivery.loaded !== undefined) this.phases.load.push(0);
          return current.run({ loaded: now }, () => handler(delivery));
        }, options),
    };
  }
}

// --- the runs ------------------------------------------------------------------------------------

function chain(n: number, name = WORKFLOW): Workflow {
  const steps: Workflow['steps'] = Array.from({ length: n }, (_, i) => ({
    name: `s${i}`,
    type: 'l2' as const,
    l2_data: {
      provider: 'platform',
      module: 'dummy',
      action: 'dummy_task',
      input_data: { value: i === 0 ? '{{input.value}}' : `{{s${i - 1}.value}}`, n: i },
    },
  }));
  return { name, steps, wires: [] };
}

/** The chain of one step: a run's begin and end with one step, to tell a step's own cost apart. */
const SHORT = 'chain_1';

interface Figures {
  /** p50 of a run, one at a time (for a worker: on an engine without the probes). */
  latency: number;
  /** p50 of a run with the probes timing every phase and statement (a worker only). */
  probedLatency?: number;
  /** p50 of a one-step run on an engine without the probes, taken in turns with `latency` (a worker only). */
  shortLatency?: number;
  runsPerSecond: number;
  statementsPerRun: number;
  byKind: Map<string, number>;
  /** Milliseconds spent waiting on each kind of statement, over all its calls. */
  msByKind: Map<string, number>;
  phases: Phases;
}

const input = { value: { id: 7, tags: ['a', 'b'] } };

/** Fails the benchmark unless the run went through its `steps` steps, passing the value on. */
function ran(record: Awaited<ReturnType<Engine['run']>>, steps = STEPS): void {
  check(record.status === 'succeeded', `a run ended ${record.status}: ${JSON.stringify(record.error)}`);
  checkEqual(
    record.steps.map((step) => step.status),
    Array<string>(steps).fill('succeeded'),
    'every step ran',
  );
  checkEqual(
    (record.output as Record<string, unknown>)[`s${steps - 1}`],
    { value: input.value, n: steps - 1 },
    'the last step has the value',
  );
}

/**
 * p50 of `count` runs one at a time, after a warm-up, of the chain and of the one-step chain, taken
 * in turns: the chain's latency less the one-step chain's is what its other steps cost, without the
 * run's begin (its insert) and end (its result passed to the caller), which every run has once.
 */
async function latencyOf(engine: Engine, count: number): Promise<{ chain: number; short: number }> {
  for (let i = 0; i < sized(5, 1); i++) {
    ran(await engine.run(WORKFLOW, input));
    ran(await engine.run(SHORT, input), 1);
  }
  const chain: number[] = [];
  const short: number[] = [];
  for (let i = 0; i < count; i++) {
    for (const [name, steps, into] of [
      [WORKFLOW, STEPS, chain],
      [SHORT, 1, short],
    ] as const) {
      const start = performance.now();
      const record = await engine.run(name, input);
      into.push(performance.now() - start);
      ran(record, steps);
    }
  }
  return { chain: median(chain), short: median(short) };
}

/** Latency of one run at a time, then runs/s with many in flight, and statements per run. */
async function measure(engine: Engine, probe?: Probe): Promise<Figures> {
  for (let i = 0; i < sized(2, 1); i++) ran(await engine.run(WORKFLOW, input));
  if (TRACE && probe) {
    statements.trace = [];
    statements.on = true;
    await engine.run(WORKFLOW, input);
    statements.on = false;
    console.log(`\nstatements of one run:\n${statements.trace.join('\n')}`);
    statements.trace = undefined;
  }
  if (probe) probe.phases = newPhases();
  statements.byKind.clear();
  statements.ms.clear();
  statements.on = true;
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const start = performance.now();
    const record = await engine.run(WORKFLOW, input);
    const end = performance.now();
    latencies.push(end - start);
    ran(record);
    const landed = probe?.landed.get(record.id);
    if (probe && landed !== undefined) probe.phases.tail.push(end - landed);
  }
  statements.on = false;
  const byKind = new Map(statements.byKind);
  const msByKind = new Map(statements.ms);
  const phases = probe?.phases ?? newPhases();
  if (probe) probe.phases = newPhases();
  const all = await time(async () => {
    const records = await Promise.all(
      Array.from({ length: THROUGHPUT_RUNS }, () => engine.run(WORKFLOW, input)),
    );
    records.forEach((record) => ran(record));
  });
  probe?.landed.clear();
  const total = [...byKind.values()].reduce((a, b) => a + b, 0);
  return {
    latency: median(latencies),
    runsPerSecond: (THROUGHPUT_RUNS * 1000) / all,
    statementsPerRun: total / LATENCY_RUNS,
    byKind,
    msByKind,
    phases,
  };
}

interface Target {
  label: string;
  /** Opens the database; called once per engine, each call on the same database. */
  open(): Promise<PostgresDatabase>;
  /** One bare `SELECT 1`. */
  ping(): Promise<unknown>;
  /** One durable commit: a one-row INSERT in a transaction of its own. */
  commit(): Promise<unknown>;
  close(): Promise<void>;
}

/** `then`, after `first` has run once (awaited) on the first call. */
function once(first: () => Promise<unknown>, then: () => Promise<unknown>): () => Promise<unknown> {
  let ready: Promise<unknown> | undefined;
  return async () => {
    await (ready ??= first());
    return then();
  };
}

async function pgliteTarget(): Promise<Target> {
  // A smoke run shares one PGlite among the benchmarks (see `smokePglite`), in a schema of its own.
  const pglite = countPglite(SMOKE ? await smokePglite() : await PGlite.create());
  return {
    label: 'PGlite in memory',
    open: () => openPostgres({ pglite: pglite as never }, SMOKE ? { schema: 'stepwire_bench_durable' } : {}),
    ping: () => pglite.query('select 1'),
    commit: once(
      () => pglite.query('create table if not exists stepwire_bench_commit (at timestamptz)'),
      () => pglite.query('insert into stepwire_bench_commit values (now())'),
    ),
    close: () => (SMOKE ? Promise.resolve() : pglite.close()),
  };
}

async function serverTarget(schema: string): Promise<Target | undefined> {
  const pool = await reachServer();
  if (!pool) return undefined;
  return {
    label: 'PostgreSQL server',
    open: async () => {
      try {
        return await openPostgres(SERVER_URL, { schema });
      } catch (error) {
        if (isStorageError(error)) console.log(`notice: ${error.message}`);
        throw error;
      }
    },
    ping: () => pool.query('select 1'),
    // A table of the database's own (a temporary table's writes skip the write-ahead log, so its
    // commit waits for no flush), in a schema dropped at the end.
    commit: once(
      () =>
        pool.query(
          `create schema if not exists ${schema}_commit; create table if not exists ${schema}_commit.bench_commit (at timestamptz)`,
        ),
      () => pool.query(`insert into ${schema}_commit.bench_commit values (now())`),
    ),
    close: async () => {
      await pool.query(
        `drop schema if exists ${schema} cascade; drop schema if exists ${schema}_commit cascade`,
      );
      await pool.end();
    },
  };
}

interface Row {
  mode: string;
  figures: Figures;
}

/** The in-process engine, then 1 and 2 workers, on one database. */
async function measureTarget(target: Target): Promise<{ ping: number; commit: number; rows: Row[] }> {
  const opened: PostgresDatabase[] = [];
  const stops: (() => Promise<void>)[] = [];
  try {
    for (let i = 0; i < sized(50, 2); i++) await target.ping();
    const pings: number[] = [];
    const commits: number[] = [];
    for (let i = 0; i < 5; i++) await target.commit();
    // Round trips and commits are sampled before the runs and again after them, and the median of
    // both halves is the baseline: a machine whose speed drifts during the runs moves it as well.
    const sample = async (count: number) => {
      for (let i = 0; i < count; i++) {
        pings.push(await time(() => target.ping()));
        commits.push(await time(() => target.commit()));
      }
    };
    await sample(Math.ceil(PINGS / 2));
    const first = await target.open();
    opened.push(first);
    const plain = new Engine({ storage: first.storage });
    await plain.workflows.create(chain(STEPS));
    await plain.workflows.create(chain(1, SHORT));
    const rows: Row[] = [{ mode: 'in-process (no queue)', figures: await measure(plain) }];
    // The latency as an application sees it: an engine on the queue as it is. The probes that time
    // the phases below wrap every statement and delivery, and their async context costs every await.
    const bare = new Engine({ storage: first.storage, queue: first.queue });
    const bareWorker = bare.work({ concurrency: 1, triggers: false });
    const clean = await latencyOf(bare, CLEAN_RUNS);
    await bareWorker.stop();
    await bare.close();
    const probe = new Probe();
    const engine = new Engine({ storage: first.storage, queue: probe.wrap(first.queue) });
    const one = engine.work({ concurrency: 1, triggers: false });
    stops.push(() => one.stop());
    const probed = await measure(engine, probe);
    rows.push({
      mode: '1 worker',
      figures: { ...probed, latency: clean.chain, shortLatency: clean.short, probedLatency: probed.latency },
    });
    const second = await target.open();
    opened.push(second);
    const other = new Engine({ storage: second.storage, queue: probe.wrap(second.queue) });
    const two = other.work({ concurrency: 1, triggers: false });
    stops.push(() => two.stop());
    rows.push({ mode: '2 workers', figures: await measure(engine, probe) });
    for (const { mode, figures } of rows)
      check(figures.statementsPerRun > 0, `${mode}: statements were counted`);
    const { phases } = rows[1]!.figures;
    check(phases.load.length > 0 && phases.commit.length > 0, '1 worker: the steps were timed');
    await sample(Math.ceil(PINGS / 2));
    return { ping: median(pings), commit: median(commits), rows };
  } finally {
    for (const stop of stops.reverse()) await stop();
    for (const db of opened.reverse()) await db.close();
  }
}

const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  // `--burst`: the burst alone.
  if (process.argv.includes('--burst')) return scaling();
  const schema = `stepwire_bench_durable_${process.pid}`;
  const undo = countPg();
  const results: { label: string; ping: number; commit: number; rows: Row[] }[] = [];
  try {
    for (const make of [pgliteTarget, () => serverTarget(schema)]) {
      const target = await make();
      if (!target) continue;
      try {
        results.push({ label: target.label, ...(await measureTarget(target)) });
      } finally {
        await target.close();
      }
    }
  } finally {
    undo();
  }
  const main: string[][] = [];
  for (const { label, ping, commit, rows } of results) {
    const base = rows[0]!.figures;
    for (const { mode, figures } of rows) {
      const perStep = figures.latency / STEPS;
      const extra = (figures.latency - base.latency) / STEPS;
      main.push([
        label,
        mode,
        `${ms(figures.latency)} (${(figures.latency / base.latency).toFixed(1)}x)`,
        `${ms(perStep)} = ${(perStep / ping).toFixed(1)} RT = ${(perStep / commit).toFixed(1)} commits`,
        figures === base ? '' : `${(extra / ping).toFixed(1)} RT`,
        `${figures.runsPerSecond.toFixed(0)} (${(figures.runsPerSecond / base.runsPerSecond).toFixed(2)}x)`,
        (figures.statementsPerRun / STEPS).toFixed(1),
        (figures.statementsPerRun / STEPS - base.statementsPerRun / STEPS).toFixed(1),
      ]);
    }
  }
  printTable(
    `durable runs: chain of ${STEPS} dummy steps; latency p50 of ${LATENCY_RUNS} runs one at a time; runs/s with ${THROUGHPUT_RUNS} runs started at once; RT = a bare SELECT 1, commit = one durable commit (a one-row INSERT in its own transaction), p50 (${results
      .map((r) => `${r.label} ${ms(r.ping)} and ${ms(r.commit)}`)
      .join(', ')})`,
    [
      'database',
      'engine',
      `${STEPS}-step run p50`,
      'per step',
      'overhead/step',
      'runs/s',
      'statements/step',
      'extra/step',
    ],
    main,
  );
  for (const { label, ping, rows } of results) {
    const { phases } = rows[1]!.figures;
    const phase = (name: string, values: number[], per = 1) => {
      const value = values.length ? (median(values) * values.length) / per : 0;
      const one = values.length ? median(values) : 0;
      return [name, ms(one), ms(value), `${(value / ping).toFixed(1)} RT`, `${values.length}`];
    };
    printTable(
      `${label}, 1 worker: where a run's time goes (median x count, per run)`,
      ['phase', 'median', 'per run', 'in RT', 'samples'],
      [
        phase('begin (store run, enqueue first step)', phases.begin, LATENCY_RUNS),
        phase('wait (commit landed -> handler called)', phases.wait, LATENCY_RUNS),
        phase('log step.started + load run', phases.load, LATENCY_RUNS),
        phase('execute step', phases.execute, LATENCY_RUNS),
        phase('commit', phases.commit, LATENCY_RUNS),
        phase('tail (last commit -> run() resolves)', phases.tail, LATENCY_RUNS),
      ],
    );
    const { byKind, msByKind } = rows[1]!.figures;
    const kinds = [...byKind].sort((a, b) => b[1] - a[1]);
    printTable(
      `${label}, 1 worker: statements per run of ${STEPS} steps (in-process: ${rows[0]!.figures.statementsPerRun.toFixed(1)})`,
      ['statement', 'per run', 'ms each (mean)', 'ms per run'],
      kinds.map(([kind, n]) => {
        const total = msByKind.get(kind);
        return [
          kind,
          (n / LATENCY_RUNS).toFixed(1),
          total === undefined ? '' : (total / n).toFixed(2),
          total === undefined ? '' : (total / LATENCY_RUNS).toFixed(2),
        ];
      }),
    );
  }
  for (const { label, commit, rows } of results) {
    const perStep = rows[1]!.figures.latency / STEPS / commit;
    // The same step without its run's share of the begin, the first fetch and the final read.
    const { phases, probedLatency, shortLatency } = rows[1]!.figures;
    const alone = [phases.wait, phases.execute, phases.commit].reduce(
      (sum, values) => sum + (values.length ? median(values) : 0),
      0,
    );
    console.log(
      `a step of a one-worker chain on ${label} by itself (medians of wait + execute + commit, under the probes): ${alone.toFixed(2)} ms = ${(alone / commit).toFixed(1)} durable commits`,
    );
    if (probedLatency !== undefined)
      console.log(
        `a ${STEPS}-step run on ${label}, 1 worker: p50 ${ms(rows[1]!.figures.latency)} over ${CLEAN_RUNS} runs on an engine as it is; ${ms(probedLatency)} over ${LATENCY_RUNS} runs under the probes that time the phases`,
      );
    if (shortLatency === undefined) continue;
    // A step's cost: what the chain's other steps add to a one-step run, each (the begin and the
    // end, once in every run, cancel out).
    const step = (rows[1]!.figures.latency - shortLatency) / (STEPS - 1);
    const steps = step / commit;
    console.log(
      `a step of a one-worker chain on ${label}: (${STEPS}-step run p50 ${ms(rows[1]!.figures.latency)} - 1-step run p50 ${ms(shortLatency)}) / ${STEPS - 1} = ${ms(step)} = ${steps.toFixed(1)} durable commits; the whole ${STEPS}-step run / ${STEPS} = ${perStep.toFixed(1)}`,
    );
    // An in-memory database has no durable commit (nothing is flushed): its figure is shown, not judged.
    if (label.startsWith('PGlite in memory')) continue;
    console.log(
      `goal: a step of a one-worker chain on ${label} at most 3 durable commits (p50): ${steps.toFixed(1)} (${steps <= 3 ? 'met' : 'not met'}; the whole run / ${STEPS}: ${perStep.toFixed(1)})`,
    );
  }
  await scaling();
}

// --- throughput and scaling: worker processes on the server ---------------------------------------

/** Runs started at once for the throughput figure (issue 45 items 2 and 3). */
const BURST_RUNS = sized(1_000, 4);
/** Each worker process's concurrency. */
const BURST_CONCURRENCY = 8;
/** Worker processes of the scaling figure. */
const PROCESSES = SMOKE ? [1] : (process.env['BENCH_PROCESSES']?.split(',').map(Number) ?? [1, 2, 4]);

/** CPU time (ms) the server's processes (`postgres`, found in /proc) have used so far, or undefined. */
async function databaseCpuMs(): Promise<number | undefined> {
  const { readdir, readFile } = await import('node:fs/promises');
  let total = 0;
  let found = false;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return undefined;
  }
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const close = stat.lastIndexOf(')');
    if (close < 0 || !stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
    const fields = stat.slice(close + 2).split(' ');
    // utime and stime, fields 14 and 15 of the line (11 and 12 after the name), in clock ticks.
    total += (Number(fields[11]) + Number(fields[12])) * 10;
    found = true;
  }
  return found ? total : undefined;
}

interface Burst {
  processes: number;
  seconds: number;
  stepsPerSecond: number;
  runsPerSecond: number;
  /** Database CPU over the burst, in % of one core (undefined without /proc). */
  databaseCpu: number | undefined;
  /** CPU of the worker processes together, and of the process starting and following the runs, in % of one core. */
  workerCpu: number;
  starterCpu: number;
  /** WAL the server wrote over the burst, in bytes a step. */
  walPerStep: number;
  statementsPerStep: number;
}

/** The server's WAL insert position, in bytes. */
async function walPosition(): Promise<number> {
  const pool = await reachServer();
  if (!pool) return 0;
  try {
    const { rows } = await pool.query<{ at: string }>(
      "select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text as at",
    );
    return Number(rows[0]!.at);
  } finally {
    await pool.end();
  }
}

/** A worker process of the burst (`--worker <schema> <concurrency>`): works until told to stop. */
async function workerProcess(schema: string, concurrency: number): Promise<void> {
  const undo = countPg();
  const db = await openPostgres(SERVER_URL, { schema });
  const engine = new Engine({ storage: db.storage, queue: db.queue });
  const worker = engine.work({ concurrency, triggers: false });
  let cpuAt = process.cpuUsage();
  process.on('message', (message: string) => {
    if (message === 'count') {
      statements.byKind.clear();
      statements.on = true;
      cpuAt = process.cpuUsage();
      process.send!({ counting: true });
    } else if (message === 'counted') {
      statements.on = false;
      const used = process.cpuUsage(cpuAt);
      process.send!({
        statements: [...statements.byKind.values()].reduce((a, b) => a + b, 0),
        cpuMs: (used.user + used.system) / 1000,
      });
    } else if (message === 'stop')
      void worker
        .stop()
        .then(() => db.close())
        .finally(() => {
          undo();
          process.exit(0);
        });
  });
  process.send!({ ready: true });
}

/** `runs` runs started at once by this process, executed by `processes` worker processes. */
async function burst(processes: number): Promise<Burst> {
  const { fork } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const schema = `stepwire_bench_burst_${process.pid}_${processes}`;
  // A thousand runs started at once wait in turn for the pool's connections: longer than a connect.
  const url = new URL(SERVER_URL);
  url.searchParams.set('connect_timeout', '300');
  const starterDb = await openPostgres(url.href, { schema });
  const children: import('node:child_process').ChildProcess[] = [];
  const ask = (child: (typeof children)[number], message: string, key: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const on = (answer: Record<string, unknown>) => {
        if (!(key in answer)) return;
        child.off('message', on);
        resolve(answer);
      };
      child.on('message', on);
      if (message) child.send(message);
    });
  try {
    const starter = new Engine({ storage: starterDb.storage, queue: starterDb.queue });
    await starter.workflows.create(chain(STEPS));
    const file = fileURLToPath(import.meta.url);
    for (let i = 0; i < processes; i++) {
      const child = fork(file, ['--worker', schema, String(BURST_CONCURRENCY)], {
        execArgv: process.execArgv,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      children.push(child);
      await ask(child, '', 'ready');
    }
    const input = { value: 1 };
    const ran = (record: Awaited<ReturnType<Engine['run']>>) =>
      check(
        record.status === 'succeeded',
        `a burst run ended ${record.status}: ${JSON.stringify(record.error)}`,
      );
    for (const record of await Promise.all(
      Array.from({ length: 2 * processes }, () => starter.run(WORKFLOW, input)),
    ))
      ran(record);
    await Promise.all(children.map((child) => ask(child, 'count', 'counting')));
    statements.byKind.clear();
    statements.on = true;
    const walBefore = await walPosition();
    const cpuBefore = await databaseCpuMs();
    const starterAt = process.cpuUsage();
    const start = performance.now();
    const records = await Promise.all(Array.from({ length: BURST_RUNS }, () => starter.run(WORKFLOW, input)));
    const ms = performance.now() - start;
    const starterUsed = process.cpuUsage(starterAt);
    const cpuAfter = await databaseCpuMs();
    const walAfter = await walPosition();
    statements.on = false;
    records.forEach((record) => ran(record));
    let total = [...statements.byKind.values()].reduce((a, b) => a + b, 0);
    let workerMs = 0;
    for (const child of children) {
      const answer = await ask(child, 'counted', 'statements');
      total += answer['statements'] as number;
      workerMs += answer['cpuMs'] as number;
    }
    return {
      processes,
      seconds: ms / 1000,
      stepsPerSecond: (BURST_RUNS * STEPS * 1000) / ms,
      runsPerSecond: (BURST_RUNS * 1000) / ms,
      databaseCpu:
        cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) / ms) * 100,
      statementsPerStep: total / (BURST_RUNS * STEPS),
      walPerStep: (walAfter - walBefore) / (BURST_RUNS * STEPS),
      workerCpu: (workerMs / ms) * 100,
      starterCpu: ((starterUsed.user + starterUsed.system) / 1000 / ms) * 100,
    };
  } finally {
    await Promise.all(
      children.map((child) => new Promise((resolve) => (child.once('exit', resolve), child.send('stop')))),
    );
    await starterDb.close();
    const pool = await reachServer();
    await pool?.query(
      `drop schema if exists ${schema} cascade; drop schema if exists ${schema}_jobs cascade`,
    );
    await pool?.end();
  }
}

/** The burst with 1, 2 and 4 worker processes (concurrency 8 each), on the server. */
async function scaling(): Promise<void> {
  const pool = await reachServer();
  if (!pool) return;
  await pool.end();
  const rows: Burst[] = [];
  for (const processes of PROCESSES) rows.push(await burst(processes));
  const cores = (await import('node:os')).availableParallelism();
  printTable(
    `durable burst: ${BURST_RUNS} runs of ${STEPS} steps started at once by one process, executed by worker processes of concurrency ${BURST_CONCURRENCY} on the PostgreSQL server (this machine: ${cores} cores, the database on it too); CPU in % of one core (the database's from /proc)`,
    [
      'worker processes',
      'seconds',
      'steps/s',
      'runs/s',
      'database CPU',
      'workers CPU',
      'starter CPU',
      'statements/step',
      'WAL/step',
      'steps/s over 1 process',
    ],
    rows.map((row) => [
      String(row.processes),
      row.seconds.toFixed(2),
      row.stepsPerSecond.toFixed(0),
      row.runsPerSecond.toFixed(0),
      row.databaseCpu === undefined ? 'n/a' : `${row.databaseCpu.toFixed(0)}%`,
      `${row.workerCpu.toFixed(0)}%`,
      `${row.starterCpu.toFixed(0)}%`,
      row.statementsPerStep.toFixed(1),
      `${(row.walPerStep / 1024).toFixed(1)} KiB`,
      `${(row.stepsPerSecond / rows[0]!.stepsPerSecond).toFixed(2)}x`,
    ]),
  );
  const two = rows.find((row) => row.processes === 2);
  if (two)
    console.log(
      `goal: ${BURST_RUNS} five-step runs with 2 workers of concurrency ${BURST_CONCURRENCY} at >= 1,000 steps/s: ${two.stepsPerSecond.toFixed(0)} steps/s (${two.stepsPerSecond >= 1000 ? 'met' : 'not met'})`,
    );
}

const workerAt = process.argv.indexOf('--worker');
if (workerAt >= 0) await workerProcess(process.argv[workerAt + 1]!, Number(process.argv[workerAt + 2]));
else if (import.meta.url === `file://${process.argv[1]}`) await run();
