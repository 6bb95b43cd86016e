import { describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { Engine } from '../../src/index.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();

// Date cells as Google holds them in an en_US spreadsheet with the default date formats.
const DAY = { serial: 45306, text: '1/15/2024' };
const AT = { serial: 45306.572916666664, text: '1/15/2024 13:45:00' };

describe('GoogleSheets date cells', () => {
  it('reads date cells as serial numbers, so DATE and DATETIME columns read them and STRING columns get the serial as text', async () => {
    api.fake.addSpreadsheet('book', {
      S: [
        ['id', 'day', 'at', 'note'],
        [1, DAY, AT, DAY],
        [2, '2024-02-01', '2024-02-01T08:00:00Z', 'text'],
      ],
    });
    const engine = new Engine({
      spreadsheets: new GoogleSheets({ auth: api.auth, rootUrl: api.fake.url }),
    });
    await engine.catalog.registerEntity({
      name: 'e',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'day', type: 'DATE' },
        { name: 'at', type: 'DATETIME' },
        { name: 'note', type: 'STRING' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'S', origin: { row: 0, col: 0 } },
    });
    const out = await engine.catalog.getEntity({ entity_name: 'e', operation: {} });
    expect(out.body.error?.is_error ?? false).toBe(false);
    expect(out.body.table.rows).toEqual([
      [1, '2024-01-15', '2024-01-15T13:45:00.000Z', '45306'],
      [2, '2024-02-01', '2024-02-01T08:00:00.000Z', 'text'],
    ]);
    const read = api.fake.requests.find((r) => r.path.includes('/values'))!;
    expect(read.query.valueRenderOption).toEqual(['UNFORMATTED_VALUE']);
    expect(read.query.dateTimeRenderOption).toEqual(['SERIAL_NUMBER']);
  });
});
