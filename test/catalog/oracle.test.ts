/**
 * The oracle: random sequences of appends, upserts, updates and deletes, by a composite key, on
 * every spreadsheet backend, compared after each step with the same operations on a plain
 * in-memory model. The sheet also holds cells that are no entity's (a title, a column inside the
 * table, one left of it, a footer below a blank row): they must stay with their rows, untouched.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import {
  Engine,
  MemorySpreadsheets,
  WriteRejectedError,
  type CellValue,
  type SpreadsheetAdapter,
} from '../../src/index.js';
import { startFakeSheets, type FakeSheets } from '../fakes/google-sheets.js';
import { seedCsv, seedXlsx } from '../node/sheet-files.js';

const entity = {
  name: 'stock',
  columns: [
    { name: 'k1', type: 'STRING' as const },
    { name: 'k2', type: 'NUMBER' as const },
    { name: 'v', type: 'NUMBER' as const },
    { name: 's', type: 'STRING' as const },
  ],
  primary_key: ['k1', 'k2'],
  spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'stock', origin: { row: 1, col: 1 } },
};

/** A row of the model: the entity's values and the cells beside them that no entity owns. */
interface ModelRow {
  k1: string;
  k2: number;
  v: number | null;
  s: string | null;
  tag: string | null;
  note: string | null;
}

const SEED: ModelRow[] = [
  { k1: 'a', k2: 1, v: 1, s: 'x', tag: 'tag a1', note: 'note a1' },
  { k1: 'a', k2: 2, v: null, s: '=1+1', tag: 'tag a2', note: null },
  { k1: 'b', k2: 1, v: -3, s: null, tag: null, note: 'note b1' },
];

/** The sheet: a title, the header at B2 with a column "note" that is no entity column, data, a blank row, a footer. */
function sheetOf(rows: readonly ModelRow[]): CellValue[][] {
  return [
    ['Stock by warehouse'],
    [null, 'k1', 'note', 'k2', 'v', 's'],
    ...rows.map((r) => [r.tag, r.k1, r.note, r.k2, r.v, r.s]),
    [],
    ['footer', null, 'stays below'],
  ];
}

type Key = { k1: string; k2: number };
type Patch = Key & { v?: number | null; s?: string | null };
type Command =
  | { kind: 'append'; rows: (Key & { v: number | null; s: string | null })[] }
  | { kind: 'upsert' | 'update'; rows: Patch[] }
  | { kind: 'delete'; keys: Key[] };

const key = fc.record({ k1: fc.constantFrom('a', 'b'), k2: fc.constantFrom(1, 2, 3) });
const v = fc.option(fc.integer({ min: -5, max: 5 }), { nil: null });
const s = fc.constantFrom('x', '=1+1', 'two words', null);
const full = fc.record({ k1: key.map((k) => k.k1), k2: key.map((k) => k.k2), v, s });
const patch = fc
  .tuple(key, fc.record({ v, s }, { requiredKeys: [] }))
  .map(([k, values]): Patch => ({ ...k, ...values }));
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), rows: fc.array(full, { minLength: 1, maxLength: 3 }) }),
  fc.record({
    kind: fc.constantFrom('upsert' as const, 'update' as const),
    rows: fc.array(patch, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), keys: fc.array(key, { minLength: 1, maxLength: 2 }) }),
);

const same = (a: Key, b: Key) => a.k1 === b.k1 && a.k2 === b.k2;
const repeats = (keys: Key[]) => keys.some((k, i) => keys.findIndex((o) => same(o, k)) !== i);

/** The model's answer to a command: the rows after it, or `conflict` (nothing changes). */
function apply(model: ModelRow[], c: Command): ModelRow[] | 'conflict' {
  const keys = c.kind === 'delete' ? c.keys : c.rows;
  if (repeats(keys)) return 'conflict';
  const at = (k: Key) => model.findIndex((r) => same(r, k));
  switch (c.kind) {
    case 'append':
      if (c.rows.some((r) => at(r) >= 0)) return 'conflict';
      return [...model, ...c.rows.map((r) => ({ ...r, tag: null, note: null }))];
    case 'delete':
      if (c.keys.some((k) => at(k) < 0)) return 'conflict';
      return model.filter((r) => !c.keys.some((k) => same(r, k)));
    default: {
      if (c.kind === 'update' && c.rows.some((r) => at(r) < 0)) return 'conflict';
      const next = model.map((r) => ({ ...r }));
      for (const p of c.rows) {
        const i = at(p);
        if (i >= 0) Object.assign(next[i]!, p);
        else next.push({ k1: p.k1, k2: p.k2, v: p.v ?? null, s: p.s ?? null, tag: null, note: null });
      }
      return next;
    }
  }
}

async function run(engine: Engine, c: Command): Promise<'ok' | 'conflict'> {
  const catalog = engine.catalog;
  const done =
    c.kind === 'append'
      ? catalog.append('stock', c.rows)
      : c.kind === 'delete'
        ? catalog.delete('stock', c.keys)
        : catalog[c.kind]('stock', c.rows);
  try {
    await done;
    return 'ok';
  } catch (error) {
    if (error instanceof WriteRejectedError && error.code === 'write_conflict') return 'conflict';
    throw error;
  }
}

const plain = (cell: CellValue | undefined): CellValue => (cell === undefined || cell === '' ? null : cell);
const trimRow = (row: readonly (CellValue | undefined)[]) => {
  const out = row.map(plain);
  while (out.length > 0 && out.at(-1) === null) out.pop();
  return out;
};

interface Backend {
  name: string;
  runs: number;
  create(cells: CellValue[][]): Promise<SpreadsheetAdapter>;
}

let fake: FakeSheets;
let auth: OAuth2Client;
const dirs: string[] = [];
beforeAll(async () => {
  fake = await startFakeSheets();
  auth = new OAuth2Client();
  auth.setCredentials({ access_token: fake.token });
});
afterAll(async () => {
  await fake.close();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'stepwire-oracle-'));
  dirs.push(dir);
  return dir;
};

const BACKENDS: Backend[] = [
  { name: 'memory', runs: 300, create: async (cells) => new MemorySpreadsheets({ book: { stock: cells } }) },
  {
    name: 'Google Sheets (local fake)',
    runs: 60,
    create: async (cells) => {
      fake.reset();
      fake.addSpreadsheet('book', { stock: cells });
      return new GoogleSheets({ auth, rootUrl: fake.url, retry: { attempts: 2, baseMs: 1, capMs: 2 } });
    },
  },
  {
    name: 'FileSpreadsheets .xlsx',
    runs: 30,
    create: async (cells) => {
      const dir = await freshDir();
      await seedXlsx(dir, 'book', { stock: cells });
      return new FileSpreadsheets({ dir });
    },
  },
  {
    name: 'FileSpreadsheets .csv',
    runs: 50,
    create: async (cells) => {
      const dir = await freshDir();
      await seedCsv(dir, 'book', { stock: cells });
      return new FileSpreadsheets({ dir });
    },
  },
];

describe('writes by key against a model', () => {
  for (const backend of BACKENDS) {
    it(`${backend.name}: every sequence of appends, upserts, updates and deletes ends as the model does`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 6 }), async (commands) => {
          const adapter = await backend.create(sheetOf(SEED));
          const engine = new Engine({ spreadsheets: adapter });
          await engine.catalog.registerEntity(entity);
          let model = SEED;
          for (const c of commands) {
            const expected = apply(model, c);
            expect(await run(engine, c), JSON.stringify(c)).toBe(expected === 'conflict' ? 'conflict' : 'ok');
            if (expected !== 'conflict') model = expected;
            const read = await engine.catalog.getEntity({ entity_name: 'stock', operation: {} });
            expect(read.body.table.rows).toEqual(model.map((r) => [r.k1, r.k2, r.v, r.s]));
          }
          const [cells = []] = await adapter.read([
            { spreadsheet_id: 'book', sheet_name: 'stock', row: 0, col: 0 },
          ]);
          const rows = cells.map(trimRow);
          while (rows.length > 0 && rows.at(-1)!.length === 0) rows.pop();
          expect(rows).toEqual(sheetOf(model).map(trimRow));
        }),
        { numRuns: backend.runs },
      );
    });
  }
});
