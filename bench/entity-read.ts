/**
 * Benchmark of the entity read: 1,000,000 rows x 6 columns, two filters, one sort key, three columns,
 * page 2 of 100, timed against two hand-written loops over the raw row arrays; a group-by with three
 * aggregates over every row against a hand-written loop computing the same; reads by key and the
 * first read of the sheet through the catalog (see `entity-lookup.ts`); the mapping of a
 * 100,000-row sheet; and the memory of the mapped table against the raw arrays.
 *
 * Run: `npx tsx bench/entity-read.ts` (or `node --expose-gc --import tsx bench/entity-read.ts`).
 */
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CellValue } from '../src/adapters/types.js';
import { mapSheet } from '../src/catalog/sheet-mapping.js';
import { executeRead } from '../src/query/index.js';
import type { Entity } from '../src/schema/entity.js';
import { timeFirstRead, timeKeyLookups } from './entity-lookup.js';
import { check, checkEqual, medians, sized } from './util.js';

const ROWS = sized(1_000_000, 3_000);
const SHEET_ROWS = sized(100_000, 500);
const PAGE_SIZE = 100;
const PAGE_NUMBER = 2;
const LIMITS = { maxPageSize: 10_000, defaultPageSize: 100 };

const entity: Entity = {
  name: 'orders',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'customer', type: 'STRING' },
    { name: 'amount', type: 'NUMBER' },
    { name: 'city', type: 'STRING' },
    { name: 'quantity', type: 'NUMBER' },
    { name: 'status', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'bench', sheet_name: 'Orders', origin: { row: 0, col: 0 } },
};
const HEADER: CellValue[] = entity.columns.map((c) => c.name);
const CITIES = Array.from({ length: 50 }, (_, i) => `city-${i}`);
const STATUSES = ['open', 'paid', 'shipped', 'cancelled'];

/** Rows as a spreadsheet read gives them (parsed from JSON, so strings are flat): one array per row, every 97th amount empty. */
function rawRows(count: number): CellValue[][] {
  let seed = 12345;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const rows: CellValue[][] = new Array<CellValue[]>(count);
  for (let i = 0; i < count; i++) {
    rows[i] = [
      i + 1,
      `customer ${i % 20_011}-${i}`,
      i % 97 === 0 ? null : Math.round(random() * 1_000_000) / 100,
      CITIES[i % CITIES.length]!,
      1 + (i % 9),
      STATUSES[Math.floor(random() * 4)]!,
    ];
  }
  return JSON.parse(JSON.stringify(rows)) as CellValue[][];
}

const QUERY = {
  entity_name: 'orders',
  operation: {
    select_columns: [{ column: 'id' }, { column: 'customer', alias: 'who' }, { column: 'amount' }],
    filters: [
      { column: 'amount', operator: 'GREATER_THAN', value: 2500 },
      { column: 'status', operator: 'EQUALS', value: 'open' },
    ],
    order_by: [{ column: 'amount', direction: 'DESC' }],
  },
  page_size: PAGE_SIZE,
  page_number: PAGE_NUMBER,
};

/** amount DESC, empty last, then sheet order. */
function compareRaw(a: { row: CellValue[]; i: number }, b: { row: CellValue[]; i: number }): number {
  const x = a.row[2] as number | null;
  const y = b.row[2] as number | null;
  if (x !== y) {
    if (x === null) return 1;
    if (y === null) return -1;
    return y - x;
  }
  return a.i - b.i;
}

const keep = (row: CellValue[]): boolean => row[5] === 'open' && row[2] !== null && (row[2] as number) > 2500;
const project = (row: CellValue[]): unknown[] => [row[0], row[1], row[2]];

/** Hand-written (a): filter, sort every match, slice the page. */
function filterThenSort(rows: CellValue[][]): unknown[][] {
  const matches: { row: CellValue[]; i: number }[] = [];
  for (let i = 0; i < rows.length; i++) if (keep(rows[i]!)) matches.push({ row: rows[i]!, i });
  matches.sort(compareRaw);
  return matches.slice((PAGE_NUMBER - 1) * PAGE_SIZE, PAGE_NUMBER * PAGE_SIZE).map((m) => project(m.row));
}

/** Hand-written (b): filter into a bounded max-heap of the indexes of the best page_number x page_size rows. */
function filterTopK(rows: CellValue[][]): unknown[][] {
  const k = PAGE_NUMBER * PAGE_SIZE;
  // amount DESC, empty last, then sheet order: negative when row i comes before row j.
  const compare = (i: number, j: number): number => {
    const x = rows[i]![2] as number | null;
    const y = rows[j]![2] as number | null;
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      return y - x;
    }
    return i - j;
  };
  const heap: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    if (!keep(rows[i]!)) continue;
    if (heap.length < k) {
      let at = heap.length;
      heap.push(i);
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (compare(heap[parent]!, i) >= 0) break;
        heap[at] = heap[parent]!;
        at = parent;
      }
      heap[at] = i;
    } else if (compare(i, heap[0]!) < 0) {
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        if (left >= k) break;
        const child = left + 1 < k && compare(heap[left + 1]!, heap[left]!) > 0 ? left + 1 : left;
        if (compare(heap[child]!, i) <= 0) break;
        heap[at] = heap[child]!;
        at = child;
      }
      heap[at] = i;
    }
  }
  return heap
    .sort(compare)
    .slice((PAGE_NUMBER - 1) * PAGE_SIZE)
    .map((i) => project(rows[i]!));
}

/** By city: rows, sum and average of the amounts (empty amounts skipped); groups by first row; ordered by the sum. */
const GROUPED = {
  entity_name: 'orders',
  operation: {
    group_by: ['city'],
    aggregates: [
      { function: 'count', alias: 'orders' },
      { function: 'sum', column: 'amount', alias: 'total' },
      { function: 'avg', column: 'amount', alias: 'mean' },
    ],
  },
  page_size: 1000,
};

/** Hand-written: the same groups and aggregates in one pass over the raw rows, a `Map` by city. */
function groupByLoop(rows: CellValue[][]): unknown[][] {
  const groups = new Map<CellValue, { orders: number; total: number; counted: number }>();
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const city = row[3]!;
    let group = groups.get(city);
    if (group === undefined) {
      group = { orders: 0, total: 0, counted: 0 };
      groups.set(city, group);
    }
    group.orders++;
    const amount = row[2];
    if (typeof amount === 'number') {
      group.total += amount;
      group.counted++;
    }
  }
  const out: unknown[][] = [];
  for (const [city, g] of groups)
    out.push([city, g.orders, g.counted > 0 ? g.total : null, g.counted > 0 ? g.total / g.counted : null]);
  return out;
}

/** Times the group-by read against the hand-written loop, in the same run. */
function timeGroupBy(table: ReturnType<typeof mapSheet>, raw: CellValue[][]): void {
  const expected = groupByLoop(raw);
  check(expected.length === CITIES.length, 'every city is a group');
  const output = executeRead('orders', table, GROUPED, LIMITS);
  checkEqual(output.body.table.rows, expected, 'the group-by read answers as the hand-written loop');
  const { grouped, loop } = medians({
    grouped: () => executeRead('orders', table, GROUPED, LIMITS),
    loop: () => groupByLoop(raw),
  }) as { grouped: number; loop: number };
  console.log(
    `  group by city, 3 aggregates ${grouped.toFixed(1)} ms   hand-written loop ${loop.toFixed(1)} ms   read / loop = ${(grouped / loop).toFixed(2)}  (target <= 2)`,
  );
}

/** `gc` from `--expose-gc`, else switched on at run time (works on Node; without it memory figures are rough). */
const gc = ((globalThis as { gc?: () => void }).gc ?? exposeGc()) as (() => void) | undefined;
function exposeGc(): unknown {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc');
  } catch {
    return undefined;
  }
}
function heapUsed(): number {
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers; // typed-array buffers live outside the JS heap
}
const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;

/**
 * Maps raw rows in a frame of its own: a temporary (the `[HEADER, ...raw]` array) left in the caller's
 * frame would keep every raw row alive and spoil the memory figure.
 */
function mapRows(raw: CellValue[][]): ReturnType<typeof mapSheet> {
  return mapSheet(entity, [HEADER, ...raw]);
}

/** Builds the raw rows and maps them; when this frame is gone, only the table stays reachable. */
function buildTable(): { table: ReturnType<typeof mapSheet>; rawBytes: number; before: number } {
  const before = heapUsed();
  const raw = rawRows(ROWS);
  const rawBytes = heapUsed() - before;
  return { table: mapRows(raw), rawBytes, before };
}

/** Times the read against the hand-written loops (in its own scope, so `raw` can be freed after). */
function timeReads(table: ReturnType<typeof mapSheet>, raw: CellValue[][]): void {
  const expected = filterTopK(raw);
  check(expected.length === PAGE_SIZE, 'the page is full');
  const output = executeRead('orders', table, QUERY, LIMITS);
  checkEqual(output.body.table.rows, expected, 'the read answers as the hand-written top-k loop');
  checkEqual(filterThenSort(raw), expected, 'the hand-written loops agree');
  checkEqual(
    executeRead('orders', table, QUERY, LIMITS, { indexes: false }).body.table.rows,
    expected,
    'the read answers the same by scan alone',
  );
  const noOrder = { ...QUERY, operation: { ...QUERY.operation, order_by: [] } };
  checkEqual(
    executeRead('orders', table, noOrder, LIMITS).body.table.rows,
    raw
      .filter(keep)
      .slice((PAGE_NUMBER - 1) * PAGE_SIZE, PAGE_NUMBER * PAGE_SIZE)
      .map(project),
    'the read without order_by answers in sheet order',
  );
  const { read, topK, unordered, scanned } = medians({
    read: () => executeRead('orders', table, QUERY, LIMITS),
    topK: () => filterTopK(raw),
    unordered: () => executeRead('orders', table, noOrder, LIMITS),
    scanned: () => executeRead('orders', table, QUERY, LIMITS, { indexes: false }),
  }) as { read: number; topK: number; unordered: number; scanned: number };
  const { sorted } = medians({ sorted: () => filterThenSort(raw) }, 5, 1) as { sorted: number };
  console.log(`  read (executeRead)          ${read.toFixed(1)} ms`);
  console.log(
    `  (a) filter + sort all       ${sorted.toFixed(1)} ms   read / (a) = ${(read / sorted).toFixed(2)}`,
  );
  console.log(
    `  (b) filter + top-k heap     ${topK.toFixed(1)} ms   read / (b) = ${(read / topK).toFixed(2)}  (target <= 2)`,
  );
  console.log(
    `  same read without order_by  ${unordered.toFixed(1)} ms   / (b) = ${(unordered / topK).toFixed(2)}`,
  );
  console.log(
    `  same read, scans only       ${scanned.toFixed(1)} ms   (no index for status EQUALS) / (b) = ${(scanned / topK).toFixed(2)}`,
  );
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  console.log(
    `entity read: ${ROWS.toLocaleString('en')} rows x 6 columns, 2 filters, order by 1 key, 3 columns, page ${PAGE_NUMBER} of ${PAGE_SIZE}`,
  );
  // Memory first, before any timing can keep the raw rows reachable.
  const { table, rawBytes, before } = buildTable();
  const tableBytes = heapUsed() - before;
  const raw = rawRows(ROWS);
  timeReads(table, raw);
  timeGroupBy(table, raw);
  timeKeyLookups(entity, table, raw);
  await timeFirstRead(entity, HEADER, raw);
  console.log(
    `memory${gc ? '' : ' (no --expose-gc: rough)'}: raw row arrays ${mb(rawBytes)}; mapped table alone ${mb(tableBytes)} (with the strings it keeps); table / raw = ${(tableBytes / rawBytes).toFixed(2)} (target <= 2)`,
  );
  checkEqual(table.length, ROWS, 'the mapped table has every row');

  const sheet: CellValue[][] = [HEADER, ...rawRows(SHEET_ROWS)];
  checkEqual(mapSheet(entity, sheet).length, SHEET_ROWS, 'the mapped sheet has every row');
  const { mapping, copy } = medians(
    {
      mapping: () => mapSheet(entity, sheet),
      // The baseline: a copy of every row, as a read that hands rows over would make.
      copy: () => sheet.map((row) => row.slice()),
    },
    7,
    2,
  ) as { mapping: number; copy: number };
  console.log(
    `sheet mapping: ${SHEET_ROWS.toLocaleString('en')} rows x 6 columns in ${mapping.toFixed(1)} ms (${((mapping * 1e6) / SHEET_ROWS).toFixed(0)} ns per row)   copy of the rows ${copy.toFixed(1)} ms   ratio ${(mapping / copy).toFixed(2)}`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
