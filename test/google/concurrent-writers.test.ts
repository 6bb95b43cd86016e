import { beforeEach, describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { Engine, WriteRejectedError, type CellValue } from '../../src/index.js';
import { type RecordedRequest } from '../fakes/google-sheets.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();

const customers = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
    { name: 'city', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'crm', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

const COUNT = 30;

beforeEach(() => {
  api.fake.reset();
  const rows: CellValue[][] = [['id', 'name', 'city', 'notes']];
  for (let id = 1; id <= COUNT; id++) rows.push([id, `Customer ${id}`, 'Unknown', `note ${id}`]);
  api.fake.addSpreadsheet('crm', { customers: rows });
});

/** An engine of its own (its own adapter, lock and cache) on the shared api.fake, like another process. */
async function engine(): Promise<Engine> {
  const spreadsheets = new GoogleSheets({
    auth: api.auth,
    rootUrl: api.fake.url,
    retry: { attempts: 3, baseMs: 1, capMs: 5 },
  });
  const created = new Engine({ spreadsheets });
  await created.catalog.registerEntity(customers);
  return created;
}

/** The adapter looks at the key cells again right before writing: a small box of column A. */
const isKeyCheck = (r: RecordedRequest): boolean => r.method === 'GET' && /!A\d+:A\d+$/.test(r.path);

describe('two engines writing one Google sheet', () => {
  it('update different keys at the same time and lose nothing', async () => {
    const [a, b] = await Promise.all([engine(), engine()]);
    const writer = async (e: Engine, ids: number[], city: string) => {
      for (const id of ids) await e.catalog.update('customers', [{ id, city: `${city} ${id}` }]);
    };
    const odd = Array.from({ length: COUNT / 2 }, (_, i) => 2 * i + 1);
    const even = odd.map((id) => id + 1);
    await Promise.all([writer(a, odd, 'Oslo'), writer(b, even, 'Rome')]);
    const cells = api.fake.sheet('crm', 'customers')!.cells;
    expect(cells).toHaveLength(COUNT + 1);
    for (let id = 1; id <= COUNT; id++)
      expect(cells[id]).toEqual([id, `Customer ${id}`, `${id % 2 ? 'Oslo' : 'Rome'} ${id}`, `note ${id}`]);
  });

  it('finds a key again when another writer moved its row between the check and the write', async () => {
    const [a] = await Promise.all([engine()]);
    let once = false;
    api.fake.arrivals.push((r) => {
      if (once || !isKeyCheck(r)) return;
      once = true;
      api.fake.edit('crm', 'customers', (sheet) => {
        sheet.cells.splice(1, 0, [100, 'Inserted', 'Elsewhere']);
        sheet.rowCount++;
      });
    });
    await a.catalog.update('customers', [{ id: 5, city: 'Lisbon' }]);
    const cells = api.fake.sheet('crm', 'customers')!.cells;
    expect(cells[6]).toEqual([5, 'Customer 5', 'Lisbon', 'note 5']);
    expect(cells.filter((row) => row[2] === 'Lisbon')).toHaveLength(1);
  });

  it('reports a key that vanished between the check and the write, and writes no other row', async () => {
    const a = await engine();
    api.fake.arrivals.push((r) => {
      if (isKeyCheck(r))
        api.fake.edit('crm', 'customers', (sheet) => {
          const at = sheet.cells.findIndex((row) => row[0] === 5);
          if (at > 0) sheet.cells.splice(at, 1);
        });
    });
    const before = api.fake.sheet('crm', 'customers')!.cells.filter((row) => row[0] !== 5);
    const error = await a.catalog.update('customers', [{ id: 5, city: 'Lisbon' }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WriteRejectedError);
    expect((error as WriteRejectedError).code).toBe('write_conflict');
    expect((error as WriteRejectedError).issues[0]!.message).toContain(
      '(id=5), which no row of "customers" holds',
    );
    expect(api.fake.sheet('crm', 'customers')!.cells).toEqual(before);
  });
});
