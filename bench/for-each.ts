/**
 * Per-item overhead of `for_each`: one step over 10,000 items of the no-op `dummy_task`, against a
 * chain of 10,000 such steps, measured in the same run with run records and events on. The goal is a
 * for_each within 2x of the chain per item. On the durable queue each item is its own job: the same
 * step over 1,000 items (concurrency 8, one process working 8 jobs at once) on PGlite in memory and on
 * the PostgreSQL server (`STEPWIRE_PG_URL`; left out with a notice when unreachable), per item against
 * the in-process per-item figure of this run.
 */
import type pg from 'pg';
import { openPostgres } from '../src/adapters/postgres/index.js';
import { Engine, type Workflow } from '../src/index.js';
import {
  check,
  checkEqual,
  median,
  openPglite,
  printTable,
  reachServer,
  SERVER_URL,
  sized,
  time,
} from './util.js';
import { chain, chainOutput } from './workflow-overhead.js';

const ITEMS = sized(10_000, 50);
const QUEUED_ITEMS = sized(1_000, 12);
const ROUNDS = sized(12, 1);
const WARMUP = sized(2, 0);

function forEach(n: number, concurrency: number): Workflow {
  return {
    name: `for_each_${n}_${concurrency}`,
    steps: [
      {
        name: 'each',
        type: 'l2',
        for_each: '{{input.items}}',
        concurrency,
        l2_data: {
          provider: 'platform',
          module: 'dummy',
          action: 'dummy_task',
          input_data: { value: '{{item.value}}', n: '{{item_index}}' },
        },
      },
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { items: { type: 'array' } }, required: ['items'] },
    },
    workflow_output: { name: 'output', output_data: { succeeded: '{{each.succeeded}}' } },
  };
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const engine = new Engine();
  const value = { id: 7, name: 'small object', tags: ['a', 'b'] };
  const items = Array.from({ length: ITEMS }, () => ({ value }));
  const cases = [
    {
      label: `chain of ${ITEMS.toLocaleString('en')} steps`,
      def: chain(ITEMS),
      input: { v: value },
      output: chainOutput(ITEMS, value),
    },
    {
      label: 'for_each, concurrency 1',
      def: forEach(ITEMS, 1),
      input: { items },
      output: { succeeded: ITEMS },
    },
    {
      label: 'for_each, concurrency 8',
      def: forEach(ITEMS, 8),
      input: { items },
      output: { succeeded: ITEMS },
    },
  ];
  for (const c of cases) await engine.workflows.create(c.def);
  let events = 0;
  const onEvent = () => {
    events += 1;
  };
  const times = cases.map(() => [] as number[]);
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    // Interleaved, so that drift in the machine's speed touches every case alike; warm-up rounds first.
    for (const [i, c] of cases.entries()) {
      let record: Awaited<ReturnType<typeof engine.run>> | undefined;
      const ms = await time(async () => {
        record = await engine.run(c.def.name, c.input, { onEvent });
      });
      check(record?.status === 'succeeded', `${c.label}: ${record?.error?.message}`);
      checkEqual(record.output, c.output, `${c.label}: the output`);
      if (round >= WARMUP) times[i]!.push(ms);
    }
  }
  check(events > 0, 'events were observed');
  // Every item ran once, in its place.
  for (const concurrency of [1, 8]) {
    const record = await engine.run(`for_each_${ITEMS}_${concurrency}`, { items });
    const step = record.steps[0]!;
    checkEqual(
      step.items,
      { total: ITEMS, succeeded: ITEMS, failed: 0, skipped: 0, failures: [] },
      `for_each, concurrency ${concurrency}: the counts`,
    );
    checkEqual(
      (step.output as { items: unknown[] }).items,
      items.map((item, n) => ({ value: item.value, n })),
      `for_each, concurrency ${concurrency}: the items in order`,
    );
  }
  const chainMs = median(times[0]!);
  printTable(
    `for_each: ${ITEMS.toLocaleString('en')} no-op items in process (run records and events on)`,
    ['case', 'engine run', 'per item', 'vs chain'],
    cases.map((c, i) => {
      const ms = median(times[i]!);
      return [
        c.label,
        `${ms.toFixed(1)} ms`,
        `${((ms * 1000) / ITEMS).toFixed(2)} us`,
        `${(ms / chainMs).toFixed(2)}x`,
      ];
    }),
  );
  const inProcessPerItem = median(times[2]!) / ITEMS;
  const rows: string[][] = [];
  for (const target of ['PGlite in memory', 'PostgreSQL server'] as const) {
    const ms = await queued(target, items.slice(0, QUEUED_ITEMS));
    if (ms === undefined) continue;
    rows.push([
      target,
      `${ms.toFixed(0)} ms`,
      `${((ms * 1000) / QUEUED_ITEMS).toFixed(0)} us`,
      `${(QUEUED_ITEMS / (ms / 1000)).toFixed(0)} items/s`,
      `${(ms / QUEUED_ITEMS / inProcessPerItem).toFixed(0)}x`,
    ]);
  }
  printTable(
    `for_each on the durable queue: ${QUEUED_ITEMS.toLocaleString('en')} no-op items, each its own job (concurrency 8, one worker process)`,
    ['database', 'run', 'per item', 'throughput', 'vs in process'],
    rows,
  );
}

/** One run over `items` on the queue, after a warm-up run; undefined when the server is unreachable. */
async function queued(
  target: 'PGlite in memory' | 'PostgreSQL server',
  items: unknown[],
): Promise<number | undefined> {
  const schema = `stepwire_bench_for_each_${process.pid}`;
  let pool: pg.Pool | undefined;
  if (target === 'PostgreSQL server') {
    pool = await reachServer();
    if (!pool) return undefined;
  }
  const db = pool ? await openPostgres(SERVER_URL, { schema }) : await openPglite(schema);
  const engine = new Engine({ storage: db.storage, queue: db.queue });
  const worker = engine.work({ concurrency: 8, triggers: false });
  try {
    const def = forEach(items.length, 8);
    await engine.workflows.create(def);
    const ran = (
      record: { status: string; error: { message: string } | null; output: unknown },
      n: number,
    ) => {
      check(record.status === 'succeeded', `${target}: ${record.error?.message}`);
      checkEqual(record.output, { succeeded: n }, `${target}: every item succeeded`);
    };
    const warm = items.slice(0, Math.min(50, Math.ceil(items.length / 2)));
    ran(await engine.run(def.name, { items: warm }), warm.length);
    return await time(async () => ran(await engine.run(def.name, { items }), items.length));
  } finally {
    await worker.stop();
    await db.close();
    if (pool) {
      await pool.query(
        `drop schema if exists ${schema} cascade; drop schema if exists ${schema}_jobs cascade`,
      );
      await pool.end();
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
