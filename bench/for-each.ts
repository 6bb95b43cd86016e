/**
 * Per-item overhead of `for_each`: one step over 10,000 items of the no-op `dummy_task`, against a
 * chain of 10,000 such steps, measured in the same run with run records and events on. The goal is a
 * for_each within 2x of the chain per item. On the durable queue each item would be its own job;
 * that figure comes with the queue.
 */
import { Engine, type Workflow } from '../src/index.js';
import { median, printTable, time } from './util.js';
import { chain } from './workflow-overhead.js';

const ITEMS = 10_000;

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
    { label: `chain of ${ITEMS.toLocaleString('en')} steps`, def: chain(ITEMS), input: { value } },
    { label: 'for_each, concurrency 1', def: forEach(ITEMS, 1), input: { items } },
    { label: 'for_each, concurrency 8', def: forEach(ITEMS, 8), input: { items } },
  ];
  for (const c of cases) await engine.workflows.create(c.def);
  let events = 0;
  const onEvent = () => {
    events += 1;
  };
  const times = cases.map(() => [] as number[]);
  for (let round = 0; round < 12; round++) {
    // Interleaved, so that drift in the machine's speed touches every case alike; 2 warm-up rounds.
    for (const [i, c] of cases.entries()) {
      const ms = await time(async () => {
        const record = await engine.run(c.def.name, c.input, { onEvent });
        if (record.status !== 'succeeded') throw new Error(`${c.label}: ${record.error?.message}`);
      });
      if (round >= 2) times[i]!.push(ms);
    }
  }
  if (events === 0) throw new Error('no events were observed');
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
  console.log('on the durable queue: not measured (the queue is not built yet)');
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
