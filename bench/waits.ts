/**
 * Human steps (`wait`): how soon a run goes on after a decision, and what a waiting run costs in
 * the database.
 *
 * Resume latency: a run `a` -> `b` -> `approve` (an approval wait) -> `c`, where `a`, `b` and `c` are
 * a no-op action that notes when it starts and ends. Per run: the plain step's latency is `b`
 * started minus `a` ended (the engine handing on from one step to the next), the resume latency is
 * `c` started minus the moment `engine.approvals.decide` was called (the decision committed, the
 * run going on, the next step started). Both in the same run, one run at a time: in process on
 * memory storage, and on the queue of the PostgreSQL server (`STEPWIRE_PG_URL`, by default
 * postgres://postgres@127.0.0.1:5432/test; a worker of concurrency 1 in this process).
 *
 * Storage cost: 10,000 runs of a workflow whose first step is an approval, all waiting, on the
 * server: the size of every table of the project's schema and of its queue's (`<schema>_jobs`),
 * `pg_total_relation_size` (indexes and TOAST included), before and after; bytes per waiting run
 * as the database holds them, and after `VACUUM FULL` (no dead row versions of the updates).
 *
 * Run: `npm run bench -- waits` or `npx tsx bench/waits.ts`. The server parts are left out with a
 * notice when it cannot be reached.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { z } from 'zod';
import { openPostgres } from '../src/adapters/postgres/index.js';
import {
  Engine,
  type ActionContext,
  type ActionDefinition,
  type RunRecord,
  type WorkflowBody,
} from '../src/index.js';
import { SERVER_URL, check, checkEqual, median, printTable, reachServer, sized } from './util.js';

const LATENCY_RUNS = sized(30, 2);
const WAITING_RUNS = sized(10_000, 50);

// --- a step that notes when it runs ---------------------------------------------------------------

/** When each step of each run started and ended (`<run>:<step>`), in this process's clock. */
const started = new Map<string, number>();
const ended = new Map<string, number>();
/** Who waits for a step to start. */
const onStart = new Map<string, () => void>();

const markInput = z.object({ tag: z.string() }).passthrough();

/** `bench/mark/note`: notes its start and end, and gives back its tag. */
const mark = {
  provider: 'bench',
  module: 'mark',
  action: 'note',
  input: markInput,
  async run(data: z.output<typeof markInput>, context: ActionContext) {
    const key = `${context.run.id}:${context.run.step}`;
    started.set(key, performance.now());
    onStart.get(key)?.();
    onStart.delete(key);
    ended.set(key, performance.now());
    return { tag: data.tag };
  },
} as ActionDefinition;

const note = (name: string, input_data: Record<string, unknown>) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'bench', module: 'mark', action: 'note', input_data },
});

/** a -> b -> approve -> c, each after the one before (by reference). */
const resumeWorkflow: WorkflowBody = {
  name: 'resume',
  steps: [
    note('a', { tag: 'a' }),
    note('b', { tag: 'b', after: '{{a.tag}}' }),
    {
      name: 'approve',
      type: 'wait',
      wait_data: {
        kind: 'approval',
        title: 'Go on',
        assignees: { roles: ['manager'] },
        show: { b: '{{b.tag}}' },
      },
    },
    note('c', { tag: 'c', approved: '{{approve.approved}}' }),
  ],
  wires: [],
};

/** One approval, then one step: the run every stored waiting run is. */
const waitingWorkflow: WorkflowBody = {
  name: 'request',
  workflow_input: {
    name: 'input',
    input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  },
  steps: [
    {
      name: 'approve',
      type: 'wait',
      wait_data: {
        kind: 'approval',
        title: 'Request {{input.n}}',
        description: 'A request waiting for a manager',
        assignees: { roles: ['manager'] },
        show: { n: '{{input.n}}' },
      },
    },
    note('book', { tag: 'book', approved: '{{approve.approved}}' }),
  ],
  wires: [],
};

async function untilStatus(engine: Engine, id: string, status: RunRecord['status']): Promise<RunRecord> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const record = await engine.getRun(id);
    if (record.status === status) return record;
    check(Date.now() < deadline, `run ${id} is ${record.status}, not ${status}`);
    await new Promise((done) => setTimeout(done, 5));
  }
}

interface Latency {
  label: string;
  plain: number[];
  resume: number[];
}

/** Runs `resume` one at a time: the plain step's latency and the resume latency of each. */
async function measureLatency(label: string, engine: Engine): Promise<Latency> {
  const result: Latency = { label, plain: [], resume: [] };
  for (let i = 0; i < sized(3, 1) + LATENCY_RUNS; i++) {
    const run = await engine.run('resume', {});
    checkEqual(run.status, 'waiting', `${label}: the run waits`);
    const wait = run.steps.find((s) => s.name === 'approve')?.wait;
    check(wait !== undefined, `${label}: the approval step waits`);
    const next = `${run.id}:c`;
    const cStarted = new Promise<void>((done) => onStart.set(next, done));
    const decided = performance.now();
    await engine.approvals.decide(wait.id, { approved: true });
    await cStarted;
    const done = await untilStatus(engine, run.id, 'succeeded');
    checkEqual(done.steps.at(-1)?.output, { tag: 'c' }, `${label}: the step after the wait ran`);
    if (i < sized(3, 1)) continue; // warm-up
    result.plain.push(started.get(`${run.id}:b`)! - ended.get(`${run.id}:a`)!);
    result.resume.push(started.get(next)! - decided);
  }
  return result;
}

// --- storage --------------------------------------------------------------------------------------

interface Sizes {
  total: number;
  byTable: Map<string, number>;
}

async function sizes(client: pg.Client, schema: string): Promise<Sizes> {
  const { rows } = await client.query<{ name: string; bytes: string }>(
    `select n.nspname || '.' || c.relname as name, pg_total_relation_size(c.oid) as bytes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname in ($1, $2) and c.relkind in ('r', 'm')`,
    [schema, `${schema}_jobs`],
  );
  const byTable = new Map(rows.map((row) => [row.name, Number(row.bytes)]));
  return { total: [...byTable.values()].reduce((a, b) => a + b, 0), byTable };
}

async function vacuumFull(client: pg.Client, schema: string): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `select quote_ident(n.nspname) || '.' || quote_ident(c.relname) as name
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname in ($1, $2) and c.relkind = 'r'`,
    [schema, `${schema}_jobs`],
  );
  for (const { name } of rows) await client.query(`vacuum full ${name}`);
}

interface Storage {
  runs: number;
  seconds: number;
  before: Sizes;
  after: Sizes;
  compacted: Sizes;
}

/** Starts WAITING_RUNS runs that wait, 100 at a time, and measures what the database holds. */
async function measureStorage(engine: Engine, client: pg.Client, schema: string): Promise<Storage> {
  await engine.workflows.create(waitingWorkflow);
  // One run first, so that tables made on first use exist before "before".
  const first = await engine.run('request', { n: -1 });
  checkEqual(first.status, 'waiting', 'the first stored run waits');
  await vacuumFull(client, schema);
  const before = await sizes(client, schema);
  const start = performance.now();
  for (let i = 0; i < WAITING_RUNS; i += 100) {
    const handles = await Promise.all(
      Array.from({ length: Math.min(100, WAITING_RUNS - i) }, (_, k) =>
        engine.start('request', { n: i + k }),
      ),
    );
    const records = await Promise.all(handles.map((handle) => handle.result));
    for (const record of records) checkEqual(record.status, 'waiting', 'a stored run waits');
  }
  const seconds = (performance.now() - start) / 1000;
  const waiting = await client.query<{ n: string }>(
    `select count(*) as n from ${client.escapeIdentifier(schema)}.runs where status = 'waiting'`,
  );
  checkEqual(Number(waiting.rows[0]!.n), WAITING_RUNS + 1, 'every run waits');
  const after = await sizes(client, schema);
  await vacuumFull(client, schema);
  const compacted = await sizes(client, schema);
  return { runs: WAITING_RUNS, seconds, before, after, compacted };
}

// --- the benchmark --------------------------------------------------------------------------------

const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.95) - 1]!;

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const latencies: Latency[] = [];
  const memory = new Engine({ actions: [mark] });
  try {
    await memory.workflows.create(resumeWorkflow);
    latencies.push(await measureLatency('memory, in process', memory));
  } finally {
    await memory.close();
  }

  let storage: Storage | undefined;
  const pool = await reachServer();
  if (pool) {
    await pool.end();
    const schema = `stepwire_bench_waits_${process.pid}`;
    const client = new pg.Client(SERVER_URL);
    await client.connect();
    const db = await openPostgres(SERVER_URL, { schema });
    const engine = new Engine({ storage: db.storage, queue: db.queue, actions: [mark] });
    const worker = engine.work({ concurrency: 1, triggers: false });
    try {
      await engine.workflows.create(resumeWorkflow);
      latencies.push(await measureLatency('PostgreSQL server, queue (1 worker)', engine));
      await worker.stop();
      // Many runs at once: a worker of concurrency 8 (a waiting run holds none of it).
      const many = engine.work({ concurrency: 8, triggers: false });
      try {
        storage = await measureStorage(engine, client, schema);
      } finally {
        await many.stop();
      }
    } finally {
      await worker.stop().catch(() => undefined);
      await engine.close();
      await db.close();
      await client.query(
        `drop schema if exists ${client.escapeIdentifier(schema)} cascade; drop schema if exists ${client.escapeIdentifier(`${schema}_jobs`)} cascade`,
      );
      await client.end();
    }
  }

  for (const { label, plain, resume } of latencies)
    check(plain.length === LATENCY_RUNS && resume.length === LATENCY_RUNS, `${label}: every run was timed`);
  printTable(
    `resume latency: decision (engine.approvals.decide called) -> next step started, beside a plain step's latency (step ended -> next step started) in the same run; ${LATENCY_RUNS} runs one at a time`,
    ['where', 'plain step p50', 'resume p50', 'resume p95', 'resume / plain (p50)'],
    latencies.map(({ label, plain, resume }) => [
      label,
      ms(median(plain)),
      ms(median(resume)),
      ms(p95(resume)),
      `${(median(resume) / median(plain)).toFixed(1)}x`,
    ]),
  );
  if (storage) {
    const { runs, seconds, before, after, compacted } = storage;
    const per = (s: Sizes) => (s.total - before.total) / runs;
    printTable(
      `storage of ${runs} waiting runs (one approval step each) on the PostgreSQL server: pg_total_relation_size of every table of the schema and its queue's; started in ${seconds.toFixed(1)} s (${(runs / seconds).toFixed(0)} runs/s, worker concurrency 8)`,
      ['', 'total', 'bytes per waiting run'],
      [
        ['before', `${(before.total / 1e6).toFixed(2)} MB`, ''],
        ['after, as held', `${(after.total / 1e6).toFixed(2)} MB`, per(after).toFixed(0)],
        ['after VACUUM FULL', `${(compacted.total / 1e6).toFixed(2)} MB`, per(compacted).toFixed(0)],
      ],
    );
    const tables = [...compacted.byTable]
      .map(
        ([name, bytes]) =>
          [
            name,
            bytes - (before.byTable.get(name) ?? 0),
            (after.byTable.get(name) ?? 0) - (before.byTable.get(name) ?? 0),
          ] as const,
      )
      .filter(([, grown, held]) => grown > 0 || held > 0)
      .sort((a, b) => b[2] - a[2]);
    printTable(
      'where the bytes of a waiting run are (per run)',
      ['table', 'as held', 'after VACUUM FULL'],
      tables.map(([name, grown, held]) => [name, (held / runs).toFixed(0), (grown / runs).toFixed(0)]),
    );
    check(per(compacted) > 0, 'waiting runs take room');
  } else if (!pool) {
    console.log('notice: the server parts (queue latency, storage of waiting runs) were left out');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
