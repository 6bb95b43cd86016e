import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import {
  Engine,
  MemorySpreadsheets,
  MemoryStorage,
  type RangeRequest,
  type StorageAdapter,
} from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
const temp = mkdtempSync(join(tmpdir(), 'stepwire-cache-redefine-'));
afterAll(async () => {
  rmSync(temp, { recursive: true, force: true });
  await schemas.drop();
});

/** Entity `items`: a `code` key column of the given type, on sheet `sheet` of spreadsheet `book`. */
const items = (type: 'STRING' | 'NUMBER', sheet = 's') => ({
  name: 'items',
  columns: [
    { name: 'code', type },
    { name: 'name', type: 'STRING' as const },
  ],
  primary_key: ['code'],
  spreadsheet_config: { spreadsheet_id: 'book', sheet_name: sheet, origin: { row: 0, col: 0 } },
});

const readAll = { entity_name: 'items', operation: {} };

async function columnTypes(engine: Engine): Promise<(string | undefined)[] | undefined> {
  const { body } = await engine.catalog.getEntity(readAll);
  return body.table.columns?.map((c) => c.type);
}

/** Appends `{ code: 7 }`; resolves to the error code when the write is refused. */
async function appendSeven(engine: Engine): Promise<string> {
  return engine.catalog.append('items', [{ code: 7, name: 'dup' }]).then(
    () => 'written',
    (e: { code?: string }) => e.code ?? 'error',
  );
}

/** The memory adapter; a read started while `slow` is set takes 50 ms to answer. */
class SlowReads extends MemorySpreadsheets {
  slow = false;
  override read(ranges: readonly RangeRequest[]): never {
    const out = super.read(ranges);
    if (!this.slow) return out as never;
    this.slow = false;
    return new Promise((resolve) => setTimeout(() => resolve(out), 50)) as never;
  }
}

/** `storage` without the optional `getText`. */
function withoutText(storage: StorageAdapter): StorageAdapter {
  return {
    get: (collection, key) => storage.get(collection, key),
    put: (collection, key, value, options) => storage.put(collection, key, value, options),
    delete: (collection, key) => storage.delete(collection, key),
    list: (collection) => storage.list(collection),
  };
}

describe('an entity redefined while its sheet stays the same', () => {
  it('is read and checked by the new definition, even when a read was under way during the change', async () => {
    const sheets = new SlowReads({
      book: {
        s: [
          ['code', 'name'],
          ['7', 'seven'],
        ],
      },
    });
    const engine = new Engine({ spreadsheets: sheets });
    await engine.catalog.registerEntity(items('STRING'));
    sheets.slow = true;
    const inFlight = engine.catalog.getEntity(readAll);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await engine.catalog.upsertEntity(items('NUMBER'));
    // The read under way answers by the definition it started with ...
    expect((await inFlight).body.table.rows).toEqual([['7', 'seven']]);
    // ... but what it read is not kept for the new definition.
    expect(await columnTypes(engine)).toEqual(['NUMBER', 'STRING']);
    expect((await engine.catalog.getEntity(readAll)).body.table.rows).toEqual([[7, 'seven']]);
    expect(await appendSeven(engine)).toBe('write_conflict');
    expect(sheets.cells('book', 's')).toEqual([
      ['code', 'name'],
      ['7', 'seven'],
    ]);
  });

  it.each([
    ['the in-memory storage', () => new MemoryStorage()],
    ['a storage that gives no JSON text', () => withoutText(new MemoryStorage())],
  ])('is seen by another engine sharing %s: retyped key column', async (_, storageOf) => {
    const storage = storageOf();
    const sheets = new MemorySpreadsheets({
      book: {
        s: [
          ['code', 'name'],
          ['7', 'seven'],
        ],
      },
    });
    const a = new Engine({ storage, spreadsheets: sheets });
    const b = new Engine({ storage, spreadsheets: sheets });
    await a.catalog.registerEntity(items('STRING'));
    expect(await columnTypes(b)).toEqual(['STRING', 'STRING']);
    await a.catalog.upsertEntity(items('NUMBER'));
    expect(await columnTypes(b)).toEqual(['NUMBER', 'STRING']);
    expect(await appendSeven(b)).toBe('write_conflict');
    expect(sheets.cells('book', 's')).toHaveLength(2);
  });

  it('is seen by another engine sharing the storage: entity moved to another sheet', async () => {
    const storage = new MemoryStorage();
    const sheets = new MemorySpreadsheets({
      book: {
        old: [
          ['code', 'name'],
          [1, 'old-1'],
          [2, 'old-2'],
        ],
        new: [
          ['code', 'name'],
          [1, 'new-1'],
        ],
      },
    });
    const a = new Engine({ storage, spreadsheets: sheets });
    const b = new Engine({ storage, spreadsheets: sheets });
    await a.catalog.registerEntity(items('NUMBER', 'old'));
    expect((await b.catalog.getEntity(readAll)).body.table.rows).toEqual([
      [1, 'old-1'],
      [2, 'old-2'],
    ]);
    await a.catalog.upsertEntity(items('NUMBER', 'new'));
    expect((await b.catalog.getEntity(readAll)).body.table.rows).toEqual([[1, 'new-1']]);
    await b.catalog.append('items', [{ code: 3, name: 'from b' }]);
    expect(sheets.cells('book', 'new')).toEqual([
      ['code', 'name'],
      [1, 'new-1'],
      [3, 'from b'],
    ]);
    expect((await a.catalog.getEntity(readAll)).body.table.rows).toEqual([
      [1, 'new-1'],
      [3, 'from b'],
    ]);
  });

  it.each([
    ['the in-memory storage', () => new MemoryStorage()],
    ['a storage that gives no JSON text', () => withoutText(new MemoryStorage())],
  ])('keeps one table while the definition in %s is unchanged', async (_, storageOf) => {
    let reads = 0;
    class Counting extends MemorySpreadsheets {
      override read(ranges: readonly RangeRequest[]) {
        reads++;
        return super.read(ranges);
      }
    }
    const storage = storageOf();
    const sheets = new Counting({
      book: {
        s: [
          ['code', 'name'],
          [1, 'one'],
        ],
      },
    });
    const a = new Engine({ storage, spreadsheets: sheets });
    const b = new Engine({ storage, spreadsheets: sheets });
    await a.catalog.registerEntity(items('NUMBER'));
    // Registration reads the header row once, to check it names the columns.
    expect(reads).toBe(1);
    for (let i = 0; i < 3; i++) await b.catalog.getEntity(readAll);
    await b.catalog.append('items', [{ code: 2, name: 'two' }]);
    for (let i = 0; i < 3; i++) await b.catalog.getEntity(readAll);
    // One read for the first call; the append keeps the table in step.
    expect(reads).toBe(2);
    // Storing the same definition again changes nothing the table depends on (but its header check).
    await a.catalog.upsertEntity(items('NUMBER'));
    await b.catalog.getEntity(readAll);
    expect(reads).toBe(3);
  });
});

describe.skipIf(url === undefined)(
  'two engines on one PostgreSQL database and one folder of CSV files',
  () => {
    it('the engine that did not retype the key column reads and checks by the new type', async () => {
      const dir = join(temp, 'pg');
      mkdirSync(join(dir, 'book'), { recursive: true });
      writeFileSync(join(dir, 'book', 's.csv'), 'code,name\n"7",seven\n');
      const schema = schemas.next();
      const dbA = await openPostgres(url!, { schema });
      const dbB = await openPostgres(url!, { schema });
      try {
        const engine = (storage: StorageAdapter) =>
          new Engine({ storage, spreadsheets: new FileSpreadsheets({ dir }) });
        const a = engine(dbA.storage);
        const b = engine(dbB.storage);
        await a.catalog.registerEntity(items('STRING'));
        expect((await b.catalog.getEntity(readAll)).body.table.rows).toEqual([['7', 'seven']]);
        await a.catalog.upsertEntity(items('NUMBER'));
        expect(await columnTypes(b)).toEqual(['NUMBER', 'STRING']);
        expect((await b.catalog.getEntity(readAll)).body.table.rows).toEqual([[7, 'seven']]);
        expect(await appendSeven(b)).toBe('write_conflict');
        expect(readFileSync(join(dir, 'book', 's.csv'), 'utf8')).toBe('code,name\n"7",seven\n');
      } finally {
        await dbA.close();
        await dbB.close();
      }
    });
  },
);
