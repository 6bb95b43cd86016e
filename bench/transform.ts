/**
 * Transform benchmark: 100,000 rows x 6 columns mapped and filtered (49,000 rows kept), each path as a
 * ratio to the same map in plain JavaScript, over the rows as objects kept in an array (as a trusted
 * function is handed them), measured in the same run:
 * - the transform step end to end through `engine.run`, with a trusted function
 *   (`engine.scripts.register`) and with a stored script (the QuickJS sandbox, and
 *   `IsolatedVmSandbox`: V8 isolates in a child process), and their phases
 *   replayed through the catalog (reading the input, the function or the sandbox, the write);
 * - the sandbox alone, its phases timed inside the script;
 * - two naive ways, for scale: QuickJS and `node:vm`, each with row objects as JSON in and out.
 * The paths are timed in rounds, each calling every path once in turn, so all run in the same warm
 * process; the best and the median of each path are compared with the same figures of the plain
 * map. Run: `npx tsx bench/transform.ts`.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import { newQuickJSWASMModuleFromVariant, RELEASE_SYNC } from 'quickjs-emscripten';
import { Engine, MemorySpreadsheets, type TransformContext } from '../src/index.js';
import { IsolatedVmSandbox } from '../src/adapters/node/isolated-vm-sandbox.js';
import {
  QuickJsSandbox,
  type EntityData,
  type ScriptLimits,
  type ScriptSandbox,
} from '../src/script/index.js';
import { columnarEntity, rowObjectsOf } from '../src/script/entity-data.js';
import { checkEqual, median, printTable, sized } from './util.js';

const ROWS = sized(100_000, 400);
/** Timed runs of each path (after one untimed). */
const RUNS = sized(9, 1);
/** Naive QuickJS as a multiple of the plain map in issue 20's own table. */
const NAIVE_QUICKJS_IN_ISSUE = 61;
const NAMES = ['id', 'customer', 'amount', 'qty', 'region', 'note'];
const REGIONS = ['eu', 'us', 'apac', 'latam'];
const LIMITS: ScriptLimits = {
  timeoutMs: 60_000,
  memoryBytes: 256 * 1024 * 1024,
  stackBytes: 1024 * 1024,
  maxOutputBytes: 64 * 1024 * 1024,
};
const LOOP = `const out = [];
for (const o of getEntity('orders')) {
  if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region });
}`;
const SCRIPT = `${LOOP}\nwriteEntity('totals', out);`;
/** The script with its phases timed inside QuickJS (ms resolution) and logged. */
const TIMED = `const t0 = Date.now(); const orders = getEntity('orders'); const t1 = Date.now(); const out = [];
for (const o of orders) { if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region }); }
const t2 = Date.now(); writeEntity('totals', out); console.log(t1 - t0, t2 - t1, Date.now() - t2);`;

type Row = { id: number; amount: number; qty: number; region: string };

function orderRows(): unknown[][] {
  return Array.from({ length: ROWS }, (_, i) => [
    i,
    `customer-${i % 977}`,
    (i * 37) % 100,
    (i % 7) + 1,
    REGIONS[i % 4]!,
    i % 3 === 0 ? 'rush' : '',
  ]);
}

/** For reference: row objects from the row arrays by one literal each, then the map and filter (V8 may elide the objects). */
function plainMap(rows: readonly (readonly unknown[])[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const o = { id: r[0], customer: r[1], amount: r[2], qty: r[3], region: r[4], note: r[5] } as Row;
    if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region });
  }
  return out;
}

/**
 * The baseline: the same, with the row objects kept in an array first, as a plain JavaScript
 * function handed the rows as objects sees them (V8 cannot elide them, as it may in `plainMap`).
 */
function plainObjectsMap(rows: readonly (readonly unknown[])[]): Record<string, unknown>[] {
  const objects = rows.map(
    (r) => ({ id: r[0], customer: r[1], amount: r[2], qty: r[3], region: r[4], note: r[5] }) as Row,
  );
  const out: Record<string, unknown>[] = [];
  for (const o of objects)
    if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region });
  return out;
}

function trustedMap(context: TransformContext): void {
  const out: Record<string, unknown>[] = [];
  for (const o of context.getEntity('orders') as Row[])
    if (o.amount > 50) out.push({ id: o.id, total: o.amount * o.qty, region: o.region });
  context.writeEntity('totals', out);
}

/** Best and median of timed calls, and the amortized time of a call made back to back. */
interface Timing {
  best: number;
  median: number;
  /** Time per call over calls made back to back for a while: each call's share of the collections included. */
  amortized?: number;
}

/**
 * Times each path `runs` times, in rounds that call every path once in turn (a rotating order), after
 * `warmup` rounds that are not counted: all paths run in the same warm process, the collector's
 * state and any load from elsewhere falling on them alike. Then come `windows` rounds of amortized
 * timing, again in rotating order: in each, a path is called back to back for at least `windowMs`
 * (and 3 calls), and the time per call, with the garbage collection its allocation causes spread
 * over the calls, is one window's figure; a path's amortized time is the median of its windows. A
 * single call of a few milliseconds either meets a collection or not, so its median swings; one
 * window alone depends on the heap the path before it left (the baseline's swung from 7 to 13 ms
 * between runs); the median of rotated windows does neither.
 */
async function rounds<K extends string>(
  paths: Record<K, () => unknown>,
  runs: number,
  warmup = sized(2, 0),
  windows = sized(3, 1),
  windowMs = sized(300, 0),
): Promise<Record<K, Timing>> {
  const names = Object.keys(paths) as K[];
  const times = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  const spans = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < warmup + runs; round++)
    for (let n = 0; n < names.length; n++) {
      const name = names[(n + round) % names.length]!;
      const start = performance.now();
      await paths[name]();
      if (round >= warmup) times[name].push(performance.now() - start);
    }
  for (let window = 0; window < windows; window++)
    for (let n = 0; n < names.length; n++) {
      const name = names[(n + window) % names.length]!;
      let calls = 0;
      const start = performance.now();
      while (calls < 3 || performance.now() - start < windowMs) {
        await paths[name]();
        calls++;
      }
      spans[name].push((performance.now() - start) / calls);
    }
  const out = {} as Record<K, Timing>;
  for (const name of names) out[name] = { ...of(times[name]), amortized: median(spans[name]) };
  return out;
}

function of(times: number[]): Timing {
  return { best: Math.min(...times), median: median(times) };
}

/** An engine over an in-memory book holding the orders and an empty totals sheet. */
async function shop(rows: unknown[][], sandbox?: ScriptSandbox): Promise<Engine> {
  const sheets = new MemorySpreadsheets({
    bench: { orders: [NAMES, ...(rows as string[][])], totals: [['id', 'total', 'region']] },
  });
  const engine = new Engine({
    spreadsheets: sheets,
    ...(sandbox === undefined ? {} : { sandbox }),
    limits: {
      maxRowsPerWrite: 1_000_000,
      scriptTimeoutMs: 60_000,
      scriptMemoryBytes: LIMITS.memoryBytes,
      scriptOutputBytes: LIMITS.maxOutputBytes,
    },
  });
  const at = (sheet_name: string) => ({ spreadsheet_id: 'bench', sheet_name, origin: { row: 0, col: 0 } });
  const type = (name: string) =>
    name === 'customer' || name === 'region' || name === 'note' ? 'STRING' : 'NUMBER';
  await engine.catalog.registerEntity({
    name: 'orders',
    columns: NAMES.map((name) => ({ name, type: type(name) })),
    primary_key: ['id'],
    spreadsheet_config: at('orders'),
  });
  await engine.catalog.registerEntity({
    name: 'totals',
    columns: ['id', 'total', 'region'].map((name) => ({ name, type: type(name) })),
    primary_key: ['id'],
    spreadsheet_config: at('totals'),
  });
  await engine.scripts.put('totals.js', SCRIPT);
  engine.scripts.register('totals-trusted', trustedMap);
  for (const [name, code_file] of [
    ['stored', 'totals.js'],
    ['trusted', 'totals-trusted'],
  ] as const)
    await engine.workflows.create({
      name,
      steps: [
        {
          name: 'totals',
          type: 'atlas',
          atlas_data: {
            action: 'transform',
            input_data: { language: 'javascript', code_file },
            input_entities: [{ name: 'orders' }],
            output_entities: [{ name: 'totals', write_mode: 'replace' }],
          },
        },
      ],
      wires: [],
    });
  return engine;
}

/** Naive QuickJS: row objects as one JSON string in, parsed inside, the result stringified out. */
async function naiveQuickJs(objects: Record<string, unknown>[]): Promise<() => unknown> {
  const module = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
  return () => {
    const runtime = module.newRuntime();
    const context = runtime.newContext();
    const json = context.newString(JSON.stringify(objects));
    context.setProp(context.global, '__in', json);
    json.dispose();
    const code = `const rows = JSON.parse(__in); ${LOOP.replace("getEntity('orders')", 'rows')} JSON.stringify(out)`;
    const result = context.unwrapResult(context.evalCode(code));
    const out = JSON.parse(context.getString(result)) as unknown;
    result.dispose();
    context.dispose();
    runtime.dispose();
    return out;
  };
}

/** The output of the naive QuickJS way, once. */
async function naiveQuickJsOut(objects: Record<string, unknown>[]): Promise<unknown> {
  return (await naiveQuickJs(objects))();
}

/** Naive `node:vm` (not a security boundary): the same JSON in and out of a new context. */
function naiveVm(objects: Record<string, unknown>[]): () => unknown {
  const code = `const rows = JSON.parse(input); ${LOOP.replace("getEntity('orders')", 'rows')} JSON.stringify(out)`;
  return () => JSON.parse(runInNewContext(code, { input: JSON.stringify(objects) }) as string) as unknown;
}

/** The output of the naive node:vm way, once. */
function naiveVmOut(objects: Record<string, unknown>[]): unknown {
  return naiveVm(objects)();
}

/** The rows of the totals entity, as objects by column name. */
async function totals(engine: Engine): Promise<Record<string, unknown>[]> {
  const { entity, table } = await engine.catalog.table('totals');
  return rowObjectsOf(columnarEntity(entity.columns, table.data, table.length));
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const rows = orderRows();
  const engine = await shop(rows);
  const isolates = new IsolatedVmSandbox();
  const engineV8 = await shop(rows, isolates);
  const entity: EntityData = { columns: NAMES.map((name) => ({ name, type: 'ANY' })), rows };
  const sandbox = new QuickJsSandbox();
  const input = { source: SCRIPT, inputs: { orders: entity }, outputs: ['totals'], limits: LIMITS };
  const kept = plainMap(rows).length;

  // Every path makes the same rows: the plain map's.
  const expected = plainMap(rows);
  checkEqual(plainObjectsMap(rows), expected, 'the plain maps agree');
  for (const [name, ran, on] of [
    ['trusted', () => engine.run('trusted'), engine],
    ['stored', () => engine.run('stored'), engine],
    ['stored (isolated-vm)', () => engineV8.run('stored'), engineV8],
  ] as const) {
    await on.catalog.write([{ entity: 'totals', rows: [], mode: 'replace' }]);
    const record = await ran();
    checkEqual(record.error, null, `the ${name} step succeeds`);
    checkEqual(await totals(on), expected, `the ${name} step writes the rows of the plain map`);
  }
  for (const [name, alone] of [
    ['QuickJsSandbox', sandbox],
    ['IsolatedVmSandbox', isolates],
  ] as const)
    checkEqual((await alone.run(input)).writes, { totals: expected }, `${name} alone writes them`);
  const objects = rowObjectsOf(entity);
  checkEqual(naiveVmOut(objects), expected, 'the naive node:vm way makes them');
  checkEqual(await naiveQuickJsOut(objects), expected, 'the naive QuickJS way makes them');
  const times = await rounds(
    {
      plainObjects: () => plainObjectsMap(rows),
      plain: () => plainMap(rows),
      trusted: () => engine.run('trusted'),
      stored: () => engine.run('stored'),
      alone: () => sandbox.run(input),
      storedV8: () => engineV8.run('stored'),
      aloneV8: () => isolates.run(input),
      naive: await naiveQuickJs(objects),
      vm: naiveVm(objects),
    },
    RUNS,
  );
  const { plainObjects, plain, trusted, stored, alone, storedV8, aloneV8, naive, vm } = times;

  // Phases, replayed through the catalog as the step does them.
  const phases = { read: [] as number[], fn: [] as number[], sandbox: [] as number[], write: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    let start = performance.now();
    const { entity: orders, table } = await engine.catalog.table('orders');
    const data = columnarEntity(orders.columns, table.data, table.length);
    const objects = rowObjectsOf(data);
    phases.read.push(performance.now() - start);
    start = performance.now();
    let written: Record<string, unknown>[] = [];
    trustedMap({
      getEntity: () => objects,
      writeEntity: (_, out) => void (written = out as typeof written),
      log() {},
    });
    phases.fn.push(performance.now() - start);
    start = performance.now();
    await sandbox.run({ ...input, inputs: { orders: data } });
    phases.sandbox.push(performance.now() - start);
    start = performance.now();
    await engine.catalog.write([{ entity: 'totals', rows: written, mode: 'replace' }]);
    phases.write.push(performance.now() - start);
  }
  // The sandbox's own phases, timed inside the script.
  const inside: number[][] = [[], [], [], []];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const { logs } = await sandbox.run({ ...input, source: TIMED });
    const total = performance.now() - start;
    const [read = 0, loop = 0, write = 0] = (logs[0] ?? '').split(' ').map(Number);
    [read, loop, write, total - read - loop - write].forEach((ms, j) => inside[j]!.push(ms));
  }

  const line = (what: string, time: Timing) => [
    what,
    `${time.best.toFixed(1)} ms`,
    `${time.median.toFixed(1)} ms`,
    time.amortized === undefined ? '' : `${time.amortized.toFixed(1)} ms`,
    `${(time.best / plainObjects.best).toFixed(1)}x`,
    time.amortized === undefined ? '' : `${(time.amortized / plainObjects.amortized!).toFixed(1)}x`,
  ];
  const load = loadavg()[0]!.toFixed(1);
  console.log(`transform bench: ${ROWS} rows x ${NAMES.length} columns, ${kept} rows written (load ${load})`);
  printTable(
    'each path as a ratio to the plain JavaScript map over the same rows as objects: best and median of single calls taken in turns; amortized: per call, over calls made back to back (collections included)',
    ['path', 'best', 'median', 'amortized', 'ratio, best', 'ratio, amortized'],
    [
      line('plain JavaScript map over row objects kept in an array (the baseline)', plainObjects),
      line('  the same, row objects not kept (V8 removes them)', plain),
      line('step, trusted function, end to end (target <= 5x)', trusted),
      line('  reading the input (table to row objects)', of(phases.read)),
      line('  the function', of(phases.fn)),
      line('  the write (checks, sheet, cache)', of(phases.write)),
      line('step, stored script, end to end (target <= 25x)', stored),
      line('  the sandbox (columns in, script, rows out)', of(phases.sandbox)),
      line('  the write (checks, sheet, cache)', of(phases.write)),
      line('sandbox alone, from row arrays', alone),
      line('  getEntity (rows made inside QuickJS)', of(inside[0]!)),
      line('  the loop (interpreted)', of(inside[1]!)),
      line('  writeEntity (packing, copy, host rows)', of(inside[2]!)),
      line('  outside the script (runtime, encoding, teardown)', of(inside[3]!)),
      line('step, stored script in IsolatedVmSandbox, end to end (target <= 25x)', storedV8),
      line('  IsolatedVmSandbox alone, from row arrays (V8 isolate in a child process)', aloneV8),
      line('naive QuickJS, JSON in and out (issue 20 puts it at 61x)', naive),
      line('naive node:vm, JSON in and out (no isolation; issue 20: 13x)', vm),
    ],
  );
  // Issue 20 set its goals on a scale where naive QuickJS was 61x the plain map; the same path in
  // this run puts the stored script on that scale, whatever this machine's baseline does.
  const scaled = (time: Timing, key: 'best' | 'median' | 'amortized') =>
    `${((time[key]! / naive[key]!) * NAIVE_QUICKJS_IN_ISSUE).toFixed(1)}x ${key}`;
  console.log(
    `stored script on issue 20's scale (naive QuickJS = ${NAIVE_QUICKJS_IN_ISSUE}x): ` +
      `${(['best', 'median', 'amortized'] as const).map((key) => scaled(stored, key)).join(', ')} (target <= 25x)`,
  );
  await isolates.close();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
