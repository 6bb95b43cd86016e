/**
 * Engine overhead per step: chains of 100 and 1,000 dummy steps passing a small object by
 * reference, and a fan-out of 100 independent steps joined by one, with run records and events on.
 * Each is printed as microseconds per step and as a ratio to a plain async function chain doing
 * the same data passing, measured in the same run. Then a 100,000-row output handed through slow
 * steps, so the run record is saved several times while it runs: the run's CPU time against making
 * the rows and serializing them once.
 */
import { z } from 'zod';
import { Engine, type Workflow } from '../src/index.js';
import { median, printTable, time } from './util.js';

/** A chain of `n` dummy steps, each passing a small object on by reference. */
export function chain(n: number): Workflow {
  const steps: Workflow['steps'] = [];
  for (let i = 0; i < n; i++) {
    const input = i === 0 ? { value: '{{input.value}}', n: 0 } : { value: `{{s${i - 1}.value}}`, n: i };
    steps.push({
      name: `s${i}`,
      type: 'l2',
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: input },
    });
  }
  return {
    name: `chain_${n}`,
    steps,
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { value: { type: 'object' } }, required: ['value'] },
    },
    workflow_output: { name: 'output', output_data: { value: `{{s${n - 1}.value}}` } },
  };
}

function fanOut(n: number): Workflow {
  const steps: Workflow['steps'] = [];
  for (let i = 0; i < n; i++)
    steps.push({
      name: `f${i}`,
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { value: '{{input.value}}', i },
      },
    });
  const join: Record<string, string> = {};
  for (let i = 0; i < n; i++) join[`f${i}`] = `{{f${i}.i}}`;
  steps.push({
    name: 'join',
    type: 'l2',
    l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: join },
  });
  return {
    name: `fan_${n}`,
    steps,
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { value: { type: 'object' } } },
    },
  };
}

/** The baseline: the same data passing as a plain chain of async functions. */
async function plainChain(n: number, value: unknown): Promise<unknown> {
  const task = async (input: { value: unknown; n: number }) => input;
  let out: { value: unknown; n: number } = { value, n: 0 };
  for (let i = 0; i < n; i++) out = await task({ value: out.value, n: i });
  return out.value;
}

async function plainFan(n: number, value: unknown): Promise<unknown> {
  const task = async (input: { value: unknown; i: number }) => input;
  const results = await Promise.all(Array.from({ length: n }, (_, i) => task({ value, i })));
  return task({ value: results.map((r) => r.i), i: n });
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const engine = new Engine();
  const cases = [
    {
      label: 'chain of 100',
      def: chain(100),
      steps: 100,
      plain: (v: unknown) => plainChain(100, v),
      repeat: 200,
    },
    {
      label: 'chain of 1,000',
      def: chain(1000),
      steps: 1000,
      plain: (v: unknown) => plainChain(1000, v),
      repeat: 150,
    },
    {
      label: 'fan-out 100 + join',
      def: fanOut(100),
      steps: 101,
      plain: (v: unknown) => plainFan(100, v),
      repeat: 200,
    },
  ];
  const rows: string[][] = [];
  for (const c of cases) {
    await engine.workflows.create(c.def);
    const value = { id: 7, name: 'small object', tags: ['a', 'b'] };
    let events = 0;
    const onEvent = () => {
      events += 1;
    };
    const engineTimes: number[] = [];
    const plainTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      await engine.run(c.def.name, { value }, { onEvent });
      await c.plain(value);
    }
    for (let i = 0; i < c.repeat; i++) {
      engineTimes.push(await time(() => engine.run(c.def.name, { value }, { onEvent })));
      plainTimes.push(await time(() => c.plain(value)));
    }
    const e = median(engineTimes);
    const p = median(plainTimes);
    const perStep = (e * 1000) / c.steps;
    const overhead = ((e - p) * 1000) / c.steps;
    rows.push([
      c.label,
      `${e.toFixed(2)} ms`,
      `${perStep.toFixed(2)} us`,
      `${overhead.toFixed(2)} us`,
      `${p.toFixed(3)} ms`,
      `${(e / p).toFixed(1)}x`,
    ]);
    if (events === 0) throw new Error('no events were observed');
  }
  printTable(
    'workflow overhead (run records and events on)',
    ['case', 'engine run', 'per step', 'overhead per step', 'plain chain', 'ratio'],
    rows,
  );
  await largeOutput();
}

const BIG_ROWS = 100_000;
const SLOW_STEPS = 8;
const SLOW_MS = 100;

function bigRows(): Record<string, unknown>[] {
  return Array.from({ length: BIG_ROWS }, (_, i) => ({
    id: i,
    customer: `customer ${i % 977}`,
    amount: (i * 37) % 1000,
    region: i % 2 ? 'eu' : 'us',
  }));
}

/** `make` outputs the rows; then a chain of steps each waits SLOW_MS with the rows as its input and counts them. */
async function bigEngine(): Promise<Engine> {
  const engine = new Engine();
  engine.actions.register({
    provider: 'bench',
    module: 'big',
    action: 'make',
    input: z.object({}),
    run: () => ({ rows: bigRows() }),
  });
  engine.actions.register({
    provider: 'bench',
    module: 'big',
    action: 'wait',
    input: z.object({ rows: z.custom<unknown[]>((value) => Array.isArray(value)) }),
    run: async (input) => {
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
      return { count: input.rows.length };
    },
  });
  const steps: Workflow['steps'] = [
    {
      name: 'make',
      type: 'l2',
      l2_data: { provider: 'bench', module: 'big', action: 'make', input_data: {} },
    },
  ];
  for (let i = 0; i < SLOW_STEPS; i++)
    steps.push({
      name: `wait${i}`,
      type: 'l2',
      l2_data: {
        provider: 'bench',
        module: 'big',
        action: 'wait',
        // Each waits for the one before it: a chain of slow steps, so the run lasts SLOW_STEPS x SLOW_MS.
        input_data: { rows: '{{make.rows}}', ...(i > 0 ? { after: `{{wait${i - 1}.count}}` } : {}) },
      },
    });
  await engine.workflows.create({
    name: 'big',
    steps,
    wires: [],
    workflow_output: { name: 'out', output_data: { n: `{{wait${SLOW_STEPS - 1}.count}}` } },
  });
  return engine;
}

/** CPU time of `fn` in ms (this process, all threads). */
async function cpu(fn: () => unknown): Promise<number> {
  const start = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** A 100,000-row output through slow steps: CPU of the run against making the rows and one JSON of them. */
async function largeOutput(): Promise<void> {
  const engine = await bigEngine();
  const runs: number[] = [];
  const once: number[] = [];
  for (let i = 0; i < 4; i++) {
    const record = await engine.run('big');
    if (record.status !== 'succeeded') throw new Error(`the big run failed: ${JSON.stringify(record.error)}`);
    if (i > 0) runs.push(await cpu(() => engine.run('big')));
    if (i > 0) once.push(await cpu(() => JSON.stringify(bigRows())));
  }
  const run = Math.min(...runs);
  const base = Math.min(...once);
  console.log(
    `\nlarge output: ${BIG_ROWS.toLocaleString('en')} rows from one step read by a chain of ${SLOW_STEPS} steps of ${SLOW_MS} ms (the run record is saved every 250 ms)`,
  );
  console.log(
    `  run CPU ${run.toFixed(1)} ms (best of ${runs.length})   making the rows + one JSON.stringify of them ${base.toFixed(1)} ms   ratio ${(run / base).toFixed(2)}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
