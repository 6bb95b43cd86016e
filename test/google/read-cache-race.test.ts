import { beforeEach, describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { Engine } from '../../src/index.js';
import { type RecordedRequest } from '../fakes/google-sheets.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();
beforeEach(() => {
  api.fake.reset();
  api.fake.addSpreadsheet('book', {
    S: [
      ['id', 'name'],
      [1, 'a'],
    ],
  });
});

const isValuesGet = (r: RecordedRequest): boolean => r.method === 'GET' && r.path.includes('/values');

async function arrived(match: (r: RecordedRequest) => boolean): Promise<void> {
  for (let i = 0; i < 200 && !api.fake.requests.some(match); i++) await new Promise((r) => setTimeout(r, 5));
}

describe('GoogleSheets read cache and writes in flight', () => {
  it('does not cache a read answered after an append of the same sheet, so the append shows and its key is enforced', async () => {
    const engine = new Engine({
      spreadsheets: new GoogleSheets({
        auth: api.auth,
        rootUrl: api.fake.url,
        cache: { ttlMs: 60_000 },
      }),
    });
    await engine.catalog.registerEntity({
      name: 'e',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'name', type: 'STRING' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'S', origin: { row: 0, col: 0 } },
    });
    api.fake.requests.length = 0;
    // The read reaches Google before the append, and its answer (the rows before the append) comes back after it.
    api.fake.faults.push({ match: isValuesGet, late: true, delayMs: 300 });
    const slowRead = engine.catalog.getEntity({ entity_name: 'e', operation: {} });
    await arrived(isValuesGet);
    expect(await engine.catalog.append('e', [{ id: 2, name: 'b' }])).toEqual({ written: 1 });
    expect((await slowRead).body.table.rows).toEqual([[1, 'a']]);

    const after = await engine.catalog.getEntity({ entity_name: 'e', operation: {} });
    expect(after.body.table.rows).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    const again = await engine.catalog.append('e', [{ id: 2, name: 'dup' }]).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'write_conflict' });
    expect(api.fake.sheet('book', 'S')!.cells).toEqual([
      ['id', 'name'],
      [1, 'a'],
      [2, 'b'],
    ]);
  });

  it('still caches a read answered before any write', async () => {
    const sheets = new GoogleSheets({
      auth: api.auth,
      rootUrl: api.fake.url,
      cache: { ttlMs: 60_000 },
    });
    const range = { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 };
    api.fake.faults.push({ match: isValuesGet, late: true, delayMs: 50 });
    await sheets.read([range]);
    expect(await sheets.read([range])).toEqual([
      [
        ['id', 'name'],
        [1, 'a'],
      ],
    ]);
    expect(api.fake.requests.filter(isValuesGet)).toHaveLength(1);
  });
});
