/**
 * Engine overhead per step: chains of 100 and 1,000 dummy steps passing a small object by
 * reference, and a fan-out of 100 independent steps joined by one, with run records and events on.
 * Each is printed as microseconds per step and as a ratio to a plain async function chain doing
 * the same data passing, measured in the same run.
 */
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
      repeat: 30,
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
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
