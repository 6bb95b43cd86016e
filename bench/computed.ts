/**
 * Benchmark of computed columns, through `engine.catalog.getEntity` on the in-memory adapter:
 * 1. a filtered, sorted read of 1,000,000 rows on a formula column (`price * qty`) against the same
 *    read on a stored column holding the same numbers (target: at most 3x), kept (the formula
 *    computed for this revision of the sheet already) and cold (after a write to the sheet, so the
 *    formula is computed again; the stored read then maps nothing again either, the catalog keeps its
 *    copy in step with its own appends);
 * 2. a rollup over 100,000 child rows: computed once per revision of the sheets it reads, not per read.
 *
 * Run: `npx tsx bench/computed.ts`.
 */
import { pathToFileURL } from 'node:url';
import type { CellValue } from '../src/adapters/types.js';
import { Engine, MemorySpreadsheets, type Entity } from '../src/index.js';
import { check, checkEqual, sized } from './util.js';

const ROWS = sized(1_000_000, 2_000);
const CHILDREN = sized(100_000, 1_000);
const PARENTS = sized(1_000, 50);
const STATUSES = ['open', 'paid', 'shipped', 'cancelled'];

const lines: Entity = {
  name: 'lines',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'price', type: 'NUMBER' },
    { name: 'qty', type: 'NUMBER' },
    { name: 'status', type: 'STRING' },
    { name: 'stored_total', type: 'NUMBER' },
    { name: 'total', type: 'NUMBER', formula: 'price * qty' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'bench', sheet_name: 'lines', origin: { row: 0, col: 0 } },
};

function lineRows(count: number): CellValue[][] {
  let seed = 12345;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const rows: CellValue[][] = [['id', 'price', 'qty', 'status', 'stored_total']];
  for (let i = 0; i < count; i++) {
    const price = i % 97 === 0 ? null : Math.round(random() * 100_000) / 100;
    const qty = 1 + (i % 9);
    rows.push([i + 1, price, qty, STATUSES[Math.floor(random() * 4)]!, price === null ? null : price * qty]);
  }
  return rows;
}

const read = (column: string) => ({
  entity_name: 'lines',
  operation: {
    select_columns: [{ column: 'id' }, { column }],
    filters: [
      { column, operator: 'GREATER_THAN' as const, value: 2500 },
      { column: 'status', operator: 'EQUALS' as const, value: 'open' },
    ],
    order_by: [{ column, direction: 'DESC' as const }],
  },
  page_size: 100,
  page_number: 2,
});

async function formulaAgainstStored(): Promise<void> {
  const spreadsheets = new MemorySpreadsheets({ bench: { lines: lineRows(ROWS) } });
  const engine = new Engine({ spreadsheets });
  await engine.catalog.registerEntity(lines);
  const formula = read('total');
  const stored = read('stored_total');
  const rowsOf = async (input: ReturnType<typeof read>) => {
    const out = await engine.catalog.getEntity(input);
    check(out.body.error?.is_error === false, `the read succeeds: ${out.body.error?.errors?.join('; ')}`);
    return out.body.table.rows!;
  };
  checkEqual(await rowsOf(formula), await rowsOf(stored), 'the formula read answers as the stored read');
  check((await rowsOf(formula)).length > 0, 'the page has rows');

  const times: Record<string, number[]> = { formula: [], stored: [], coldFormula: [], coldStored: [] };
  const runs = sized(7, 1);
  let next = ROWS + 1;
  for (let r = 0; r < runs + 1; r++) {
    // A write: the sheet's revision moves, so the formula is computed again on the next read.
    await engine.catalog.append('lines', [[next++, 1, 1, 'paid', 1]]);
    let t = performance.now();
    await rowsOf(formula);
    const coldFormula = performance.now() - t;
    await engine.catalog.append('lines', [[next++, 1, 1, 'paid', 1]]);
    t = performance.now();
    await rowsOf(stored);
    const coldStored = performance.now() - t;
    const warm = await asyncMedians({ formula: () => rowsOf(formula), stored: () => rowsOf(stored) });
    if (r === 0) continue; // warm-up
    times.coldFormula!.push(coldFormula);
    times.coldStored!.push(coldStored);
    times.formula!.push(warm.formula!);
    times.stored!.push(warm.stored!);
  }
  const m = (k: string) => median(times[k]!);
  console.log(
    `formula vs stored column: ${ROWS.toLocaleString('en')} rows, 2 filters, order by the column, page 2 of 100`,
  );
  console.log(`  stored column read            ${m('stored').toFixed(1)} ms`);
  console.log(
    `  formula column read (kept)    ${m('formula').toFixed(1)} ms   formula / stored = ${(m('formula') / m('stored')).toFixed(2)}  (target <= 3)`,
  );
  console.log(`  stored read after a write     ${m('coldStored').toFixed(1)} ms`);
  console.log(
    `  formula read after a write    ${m('coldFormula').toFixed(1)} ms   (formula computed again) / stored after a write = ${(m('coldFormula') / m('coldStored')).toFixed(2)}; / kept stored read = ${(m('coldFormula') / m('stored')).toFixed(2)}`,
  );
}

async function rollupOncePerRevision(): Promise<void> {
  const parents: CellValue[][] = [['id', 'name']];
  for (let i = 1; i <= PARENTS; i++) parents.push([i, `customer ${i}`]);
  const children: CellValue[][] = [['order_id', 'customer_id', 'amount']];
  for (let i = 1; i <= CHILDREN; i++) children.push([i, 1 + (i % PARENTS), i % 100]);
  const engine = new Engine({
    spreadsheets: new MemorySpreadsheets({ bench: { customers: parents, orders: children } }),
  });
  const customers: Entity = {
    name: 'customers',
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'name', type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'bench', sheet_name: 'customers', origin: { row: 0, col: 0 } },
  };
  await engine.catalog.registerEntity(customers);
  await engine.catalog.registerEntity({
    name: 'orders',
    columns: [
      { name: 'order_id', type: 'NUMBER' },
      { name: 'customer_id', type: 'NUMBER' },
      { name: 'amount', type: 'NUMBER' },
    ],
    primary_key: ['order_id'],
    spreadsheet_config: { spreadsheet_id: 'bench', sheet_name: 'orders', origin: { row: 0, col: 0 } },
  });
  await engine.catalog.createRelationship({
    name: 'orders_customer',
    relationship_type: 'foreign_key',
    source_entity: 'orders',
    target_entity: 'customers',
    foreign_key_config: {
      source_columns: ['customer_id'],
      target_columns: ['id'],
      enforce_foreign_key: false,
    },
  });
  await engine.catalog.putEntity({
    ...customers,
    columns: [
      ...customers.columns,
      {
        name: 'total',
        type: 'NUMBER',
        rollup: { relationship: 'orders_customer', function: 'sum', column: 'amount' },
      },
    ],
  });
  const input = {
    entity_name: 'customers',
    operation: { order_by: [{ column: 'total', direction: 'DESC' as const }] },
    page_size: 10,
  };
  const reads = sized(100, 5);
  const before = engine.catalog.computations;
  let t = performance.now();
  const first = await engine.catalog.getEntity(input);
  const firstMs = performance.now() - t;
  const expectedTop = Array.from({ length: PARENTS }, (_, p) => {
    let sum = 0;
    for (let i = 1; i <= CHILDREN; i++) if (1 + (i % PARENTS) === p + 1) sum += i % 100;
    return sum;
  }).sort((a, b) => b - a)[0];
  checkEqual(first.body.table.rows?.[0]?.[2], expectedTop, 'the rollup sums the child rows');
  t = performance.now();
  for (let r = 0; r < reads; r++) await engine.catalog.getEntity(input);
  const keptMs = (performance.now() - t) / reads;
  const computed = engine.catalog.computations - before;
  checkEqual(computed, 1, `${reads + 1} reads of one revision compute the rollup once`);
  await engine.catalog.append('orders', [{ order_id: CHILDREN + 1, customer_id: 1, amount: 1 }]);
  await engine.catalog.getEntity(input);
  checkEqual(engine.catalog.computations - before, 2, 'a write to the child sheet computes it again, once');
  console.log(
    `rollup (sum) over ${CHILDREN.toLocaleString('en')} child rows into ${PARENTS.toLocaleString('en')} rows`,
  );
  console.log(`  first read (computes)         ${firstMs.toFixed(1)} ms`);
  console.log(
    `  later reads of one revision   ${keptMs.toFixed(2)} ms each; computed ${computed} time(s) in ${reads + 1} reads`,
  );
}

async function asyncMedians(fns: Record<string, () => Promise<unknown>>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const runs = sized(5, 1);
  for (const [name, fn] of Object.entries(fns)) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await fn();
      times.push(performance.now() - t);
    }
    out[name] = median(times);
  }
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  await formulaAgainstStored();
  await rollupOncePerRevision();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
