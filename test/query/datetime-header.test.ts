import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets } from '../../src/index.js';

const at = (sheet_name: string) => ({ spreadsheet_id: 'book', sheet_name, origin: { row: 0, col: 0 } });

describe('DATETIME columns compare as instants', () => {
  // The same instant as a serial number, as UTC text, as text with an offset and with milliseconds.
  const cells = [
    ['id', 'at'],
    [1, 45292.5],
    [2, '2024-01-01T12:00:00Z'],
    [3, '2024-01-01T14:00:00+02:00'],
    [4, '2024-01-01T12:00:00.000Z'],
    [5, '2024-01-01T10:00:00.5Z'],
    [6, '2024-01-01T10:00:00Z'],
  ];

  async function engine(): Promise<Engine> {
    const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ book: { events: cells } }) });
    await engine.catalog.registerEntity({
      name: 'events',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'at', type: 'DATETIME' },
      ],
      primary_key: ['id'],
      spreadsheet_config: at('events'),
    });
    return engine;
  }

  it('reads every form of one instant as the same UTC text, and filters and orders by time', async () => {
    const catalog = (await engine()).catalog;
    const read = async (operation: object) =>
      (await catalog.getEntity({ entity_name: 'events', operation })).body.table.rows;
    expect(await read({})).toEqual([
      [1, '2024-01-01T12:00:00.000Z'],
      [2, '2024-01-01T12:00:00.000Z'],
      [3, '2024-01-01T12:00:00.000Z'],
      [4, '2024-01-01T12:00:00.000Z'],
      [5, '2024-01-01T10:00:00.500Z'],
      [6, '2024-01-01T10:00:00.000Z'],
    ]);
    const ids = async (operation: object) => ((await read(operation)) ?? []).map((row) => row[0]);
    expect(
      await ids({ filters: [{ column: 'at', operator: 'EQUALS', value: '2024-01-01T13:00:00+01:00' }] }),
    ).toEqual([1, 2, 3, 4]);
    expect(
      await ids({ filters: [{ column: 'at', operator: 'GREATER_THAN', value: '2024-01-01T12:30:00Z' }] }),
    ).toEqual([]);
    expect(
      await ids({ filters: [{ column: 'at', operator: 'LESS_THAN', value: '2024-01-01 10:00:00.4' }] }),
    ).toEqual([6]);
    expect(await ids({ order_by: [{ column: 'at', direction: 'ASC' }] })).toEqual([6, 5, 1, 2, 3, 4]);
  });

  it('finds a row by a DATETIME key written in another form of the same instant', async () => {
    const engine = new Engine({
      spreadsheets: new MemorySpreadsheets({
        book: {
          slots: [
            ['at', 'room'],
            ['2024-03-01T09:00:00Z', 'A'],
          ],
        },
      }),
    });
    await engine.catalog.registerEntity({
      name: 'slots',
      columns: [
        { name: 'at', type: 'DATETIME' },
        { name: 'room', type: 'STRING' },
      ],
      primary_key: ['at'],
      spreadsheet_config: at('slots'),
    });
    await engine.catalog.upsert('slots', [{ at: '2024-03-01T10:00:00+01:00', room: 'B' }]);
    const read = await engine.catalog.getEntity({ entity_name: 'slots', operation: {} });
    expect(read.body.table.rows).toEqual([['2024-03-01T09:00:00.000Z', 'B']]);
  });
});

describe('header cells', () => {
  it('names a column by a number or boolean header cell, as the cell shows it', async () => {
    const engine = new Engine({
      spreadsheets: new MemorySpreadsheets({
        book: {
          years: [
            ['region', 2024, true],
            ['eu', 10, 'yes'],
          ],
        },
      }),
    });
    await engine.catalog.registerEntity({
      name: 'years',
      columns: [
        { name: 'region', type: 'STRING' },
        { name: '2024', type: 'NUMBER' },
        { name: 'TRUE', type: 'STRING' },
      ],
      primary_key: ['region'],
      spreadsheet_config: at('years'),
    });
    const read = await engine.catalog.getEntity({ entity_name: 'years', operation: {} });
    expect(read.body.table.rows).toEqual([['eu', 10, 'yes']]);
  });

  it('matches a header to a column in Unicode NFC: "Café" with a combining accent is "Café"', async () => {
    const decomposed = 'Cafe\u0301';
    const engine = new Engine({
      spreadsheets: new MemorySpreadsheets({
        book: {
          menu: [
            ['id', decomposed],
            [1, 'open'],
          ],
        },
      }),
    });
    await engine.catalog.registerEntity({
      name: 'menu',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'Caf\u00e9', type: 'STRING' },
      ],
      primary_key: ['id'],
      spreadsheet_config: at('menu'),
    });
    const read = await engine.catalog.getEntity({ entity_name: 'menu', operation: {} });
    expect(read.body.error).toEqual({ is_error: false, errors: [] });
    expect(read.body.table.rows).toEqual([[1, 'open']]);
  });
});
