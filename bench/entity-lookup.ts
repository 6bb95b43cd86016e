/**
 * Part of `bench/entity-read.ts`: reads by key of the 1,000,000-row entity, answered from the `id`
 * column's hash index once it is built, against a plain `Map.get`; and the first read of the
 * sheet through the catalog (the in-memory adapter's read, the mapping, the index, the query)
 * against a plain copy and scan of the same rows.
 */
import type { CellValue } from '../src/adapters/types.js';
import { Engine, MemorySpreadsheets } from '../src/index.js';
import { executeRead, type EntityTable } from '../src/query/index.js';
import type { Entity } from '../src/schema/entity.js';
import { check, checkEqual, median, medians, sized, time } from './util.js';

const LOOKUPS = sized(2_000, 50);
const FIRST_READS = sized(5, 1);
const LIMITS = { maxPageSize: 10_000, defaultPageSize: 100 };

/** `LOOKUPS` ids spread over the rows (ids are 1..rows). */
function keys(rows: number): number[] {
  return Array.from({ length: LOOKUPS }, (_, i) => 1 + ((i * 7_919 + 13) % rows));
}

const byId = (entity: Entity, id: number) => ({
  entity_name: entity.name,
  operation: { filters: [{ column: 'id', operator: 'EQUALS' as const, value: id }] },
});

const ms = (x: number, digits = 1): string => `${x.toFixed(digits)} ms`;

/**
 * Times reads by key on a mapped table: the first (which builds the index) against building a
 * plain `Map` of the ids, then the later ones against `Map.get` and a copy of the row found.
 */
export function timeKeyLookups(entity: Entity, table: EntityTable, raw: CellValue[][]): void {
  const ids = keys(table.length);
  const inputs = ids.map((id) => byId(entity, id));
  const first = performance.now();
  const found = executeRead(entity.name, table, inputs[0], LIMITS).body.table.rows;
  const firstUse = performance.now() - first;
  check(found?.[0]?.[0] === ids[0], 'the read by key finds its row');
  const build = performance.now();
  const map = new Map<CellValue, number>();
  for (let i = 0; i < raw.length; i++) map.set(raw[i]![0]!, i);
  const mapBuild = performance.now() - build;
  for (const [i, id] of ids.entries())
    checkEqual(
      executeRead(entity.name, table, inputs[i], LIMITS).body.table.rows,
      [raw[map.get(id)!]],
      `the read by key ${id} finds its row, whole`,
    );
  const sink: unknown[] = [];
  const { indexed, plain } = medians(
    {
      indexed: () => {
        for (const input of inputs) sink[0] = executeRead(entity.name, table, input, LIMITS);
      },
      plain: () => {
        for (const id of ids) sink[0] = [raw[map.get(id)!]!.slice()];
      },
    },
    9,
    2,
  ) as { indexed: number; plain: number };
  const scan = median(
    inputs.slice(0, 5).map((input) => {
      const start = performance.now();
      executeRead(entity.name, table, input, LIMITS, { indexes: false });
      return performance.now() - start;
    }),
  );
  const lookup = indexed / LOOKUPS;
  const base = plain / LOOKUPS;
  console.log(
    `key lookup (id EQUALS, after first use)   ${ms(lookup, 4)}   plain Map.get + row copy ${ms(base, 4)}   ratio ${(lookup / base).toFixed(0)}x  (goal <= 0.1 ms)`,
  );
  console.log(
    `  first use, building the index       ${ms(firstUse)}   new Map of the ${table.length.toLocaleString('en')} ids ${ms(mapBuild)}   ratio ${(firstUse / mapBuild).toFixed(2)}`,
  );
  console.log(
    `  same lookup by scan (no index)      ${ms(scan)}   index / scan = ${(lookup / scan).toFixed(4)}`,
  );
}

/**
 * Times the first read of the sheet through the catalog, with the in-memory adapter: cold (the
 * very first), then the median of reads after the cache was dropped; against copying every row
 * (as any sheet read hands rows over) and scanning them for the key. Then reads by key through
 * the catalog once the table and its index are cached.
 */
export async function timeFirstRead(entity: Entity, header: CellValue[], raw: CellValue[][]): Promise<void> {
  const sheets = new MemorySpreadsheets({
    [entity.spreadsheet_config.spreadsheet_id]: { [entity.spreadsheet_config.sheet_name]: [header, ...raw] },
  });
  const engine = new Engine({ spreadsheets: sheets });
  await engine.catalog.registerEntity(entity);
  const id = Math.floor(raw.length / 2);
  const read = () => engine.catalog.getEntity(byId(entity, id));
  const cold = await time(read);
  const warm: number[] = [];
  for (let i = 0; i < FIRST_READS; i++) {
    engine.catalog.invalidate(entity.name);
    warm.push(await time(read));
  }
  const output = await read();
  check(output.body.table.rows?.[0]?.[0] === id, 'the first read finds its row');
  const scans: number[] = [];
  for (let i = 0; i < FIRST_READS; i++)
    scans.push(
      await time(() => {
        const copy = new Array<CellValue[]>(raw.length);
        for (let r = 0; r < raw.length; r++) copy[r] = raw[r]!.slice();
        return copy.find((row) => row[0] === id);
      }),
    );
  const first = median(warm);
  const base = median(scans);
  console.log(
    `first read (load + map + index + query), in-memory adapter: ${ms(first)} (very first ${ms(cold)})   copy + scan of the rows ${ms(base)}   ratio ${(first / base).toFixed(2)}  (goal <= 300 ms)`,
  );
  const ids = keys(raw.length);
  const start = performance.now();
  for (const key of ids) await engine.catalog.getEntity(byId(entity, key));
  const each = (performance.now() - start) / LOOKUPS;
  for (const key of ids) {
    const rows = (await engine.catalog.getEntity(byId(entity, key))).body.table.rows;
    checkEqual(
      rows?.map((row) => row[0]),
      [key],
      `engine.catalog.getEntity by key ${key} finds its row`,
    );
  }
  // The baseline: an awaited Map.get and a copy of the row found.
  const map = new Map<CellValue, CellValue[]>();
  for (const row of raw) map.set(row[0]!, row);
  const plainStart = performance.now();
  for (const key of ids) await Promise.resolve([map.get(key)!.slice()]);
  const plain = (performance.now() - plainStart) / LOOKUPS;
  console.log(
    `  then engine.catalog.getEntity by key: ${ms(each, 4)} a read   awaited Map.get + row copy ${ms(plain, 4)}   ratio ${(each / plain).toFixed(0)}x  (goal <= 0.1 ms)`,
  );
}
