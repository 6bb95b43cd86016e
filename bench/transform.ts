/**
 * Transform-script benchmark: 100,000 rows of 6 columns through a map + filter script in the
 * QuickJS sandbox, against the same function in plain JavaScript, and against the naive
 * marshalling (row objects as JSON in, `JSON.parse` inside, `JSON.stringify` out).
 * Run: `npx tsx bench/transform.ts`.
 */

import { newQuickJSWASMModuleFromVariant, RELEASE_SYNC } from 'quickjs-emscripten';
import { QuickJsSandbox } from '../src/script/index.js';
import type { EntityData, ScriptLimits } from '../src/script/index.js';

const ROWS = 100_000;
const LIMITS: ScriptLimits = {
  timeoutMs: 60_000,
  memoryBytes: 256 * 1024 * 1024,
  stackBytes: 1024 * 1024,
  maxOutputBytes: 64 * 1024 * 1024,
};
const REGIONS = ['eu', 'us', 'apac', 'latam'];

function makeOrders(): EntityData {
  const rows: unknown[][] = [];
  for (let i = 0; i < ROWS; i++) {
    rows.push([
      i,
      `customer-${i % 977}`,
      (i * 37) % 100,
      (i % 7) + 1,
      REGIONS[i % 4],
      i % 3 === 0 ? 'rush' : '',
    ]);
  }
  return {
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'customer', type: 'STRING' },
      { name: 'amount', type: 'NUMBER' },
      { name: 'qty', type: 'NUMBER' },
      { name: 'region', type: 'STRING' },
      { name: 'note', type: 'STRING' },
    ],
    rows,
  };
}

const SCRIPT = `const out = [];
for (const o of getEntity('orders')) {
  if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region });
}
writeEntity('totals', out);`;

function plain(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const o of rows as { id: number; amount: number; qty: number; region: string }[]) {
    if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region });
  }
  return out;
}

/** Row objects from the row arrays with one literal per row, as a person would write it in plain JS. */
function literalObjects(entity: EntityData): Record<string, unknown>[] {
  const rows = entity.rows;
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as readonly unknown[];
    out[i] = { id: r[0], customer: r[1], amount: r[2], qty: r[3], region: r[4], note: r[5] };
  }
  return out;
}

/** Row objects built generically, column by column (used to feed the naive approach its JSON). */
function toObjects(entity: EntityData): Record<string, unknown>[] {
  const names = entity.columns.map((c) => c.name);
  return entity.rows.map((row) => Object.fromEntries(names.map((n, j) => [n, row[j]])));
}

function best(times: number[]): number {
  return Math.min(...times);
}

async function time(fn: () => unknown | Promise<unknown>, repeat = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return best(times);
}

/** Naive marshalling straight on quickjs-emscripten: objects as JSON, parsed inside, stringified out. */
async function naive(
  entity: EntityData,
): Promise<{ total: number; inMs: number; execMs: number; outMs: number }> {
  const module = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
  const rows = toObjects(entity);
  let inMs = 0;
  let execMs = 0;
  let outMs = 0;
  const total = await time(() => {
    const runtime = module.newRuntime();
    const context = runtime.newContext();
    let t = performance.now();
    const json = context.newString(JSON.stringify(rows));
    context.setProp(context.global, '__in', json);
    json.dispose();
    context.unwrapResult(context.evalCode('globalThis.rows = JSON.parse(__in); undefined')).dispose();
    inMs = performance.now() - t;
    t = performance.now();
    context
      .unwrapResult(
        context.evalCode(
          'const out = []; for (const o of rows) { if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region }); } globalThis.out = out; undefined',
        ),
      )
      .dispose();
    execMs = performance.now() - t;
    t = performance.now();
    const result = context.unwrapResult(context.evalCode('JSON.stringify(out)'));
    JSON.parse(context.getString(result));
    result.dispose();
    outMs = performance.now() - t;
    context.dispose();
    runtime.dispose();
  }, 3);
  return { total, inMs, execMs, outMs };
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const entity = makeOrders();
  const sandbox = new QuickJsSandbox();
  const input = { source: SCRIPT, inputs: { orders: entity }, outputs: ['totals'], limits: LIMITS };
  const first = await sandbox.run(input);
  const kept = first.writes['totals']?.length ?? 0;

  const plainMs = await time(() => plain(literalObjects(entity)), 10);
  const plainOnlyMs = await time(() => plain(rowsAsObjects), 10);
  const sandboxMs = await time(() => sandbox.run(input));
  // Split: the same run with a script that only reads, and one that reads and writes nothing.
  const readMs = await time(() => sandbox.run({ ...input, source: "getEntity('orders');" }));
  const emptyMs = await time(() => sandbox.run({ ...input, source: '' }));
  const loopOnly = `const rows = getEntity('orders'); const out = [];
for (const o of rows) { if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region }); }`;
  const loopMs = await time(() => sandbox.run({ ...input, source: loopOnly }));
  const naiveFigures = await naive(entity);

  const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;
  const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;
  const inMs = readMs - emptyMs;
  const execMs = loopMs - readMs;
  const outMs = sandboxMs - loopMs;
  console.log(`transform bench: ${ROWS} rows x 6 columns, ${kept} rows written`);
  console.log(`  plain JS (row objects from the row arrays by literal + map/filter): ${fmt(plainMs)}`);
  console.log(`  plain JS (map/filter only, objects ready):                          ${fmt(plainOnlyMs)}`);
  console.log(`  sandbox end to end:                                                 ${fmt(sandboxMs)}`);
  console.log(
    `    ratio to plain JS: ${ratio(sandboxMs, plainMs)} (objects ready: ${ratio(sandboxMs, plainOnlyMs)})`,
  );
  console.log(`    ratio to naive marshalling: ${ratio(sandboxMs, naiveFigures.total)} (target <= 0.5)`);
  console.log(`    fixed cost (fresh runtime + prelude, empty script):        ${fmt(emptyMs)}`);
  console.log(`    marshalling in (encode + copy + build row objects):         ${fmt(inMs)}`);
  console.log(`    execution (map/filter inside QuickJS):                      ${fmt(execMs)}`);
  console.log(`    marshalling out (pack by column + copy + rebuild rows):     ${fmt(outMs)}`);
  console.log(`  naive marshalling (row objects as JSON) end to end:          ${fmt(naiveFigures.total)}`);
  console.log(
    `    in ${fmt(naiveFigures.inMs)}, execution ${fmt(naiveFigures.execMs)}, out ${fmt(naiveFigures.outMs)}; ratio to plain JS ${ratio(naiveFigures.total, plainMs)}`,
  );
  console.log(
    `  sandbox / naive by phase: in ${ratio(inMs, naiveFigures.inMs)}, execution ${ratio(execMs, naiveFigures.execMs)}, out ${ratio(outMs, naiveFigures.outMs)}`,
  );
}

const rowsAsObjects = literalObjects(makeOrders());

if (import.meta.url === `file://${process.argv[1]}`) {
  await run();
}
