import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, WriteRejectedError } from '../../src/index.js';

/** An engine with entity `e` (id, d DATE, dt DATETIME, s STRING) on an empty in-memory sheet. */
async function engineWithE() {
  const sheets = new MemorySpreadsheets({ b: { s: [['id', 'd', 'dt', 's']] } });
  const engine = new Engine({ spreadsheets: sheets });
  await engine.catalog.registerEntity({
    name: 'e',
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'd', type: 'DATE' },
      { name: 'dt', type: 'DATETIME' },
      { name: 's', type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'b', sheet_name: 's', origin: { row: 0, col: 0 } },
  });
  return { engine, sheets };
}

async function rejection(work: Promise<unknown>): Promise<WriteRejectedError> {
  const error = await work.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(WriteRejectedError);
  return error as WriteRejectedError;
}

describe('values given in code', () => {
  it('takes a Date for a DATE (its UTC date) or DATETIME (ISO time) column, and reads it back', async () => {
    const { engine } = await engineWithE();
    const at = new Date('2024-01-15T13:45:00.000Z');
    await engine.catalog.append('e', [{ id: 1, d: at, dt: at, s: at }]);
    const read = await engine.catalog.getEntity({ entity_name: 'e', operation: {} });
    expect(read.body.table.rows).toEqual([
      [1, '2024-01-15', '2024-01-15T13:45:00.000Z', '2024-01-15T13:45:00.000Z'],
    ]);
  });

  it('refuses an invalid Date, and a Date for a NUMBER column, saying so', async () => {
    const { engine, sheets } = await engineWithE();
    const error = await rejection(engine.catalog.append('e', [{ id: new Date(0), d: new Date(Number.NaN) }]));
    expect(error.issues.map((issue) => issue.message)).toEqual([
      'row 1 of "e": column "id" must be NUMBER, got a Date',
      'row 1 of "e": column "d" must be DATE, got an invalid Date',
    ]);
    expect(sheets.cells('b', 's')).toEqual([['id', 'd', 'dt', 's']]);
  });
});

describe('the size of what a refused write says', () => {
  it('spells out the first 20 problems in the message and keeps every one in issues', async () => {
    const { engine } = await engineWithE();
    const rows = Array.from({ length: 500 }, (_, i) => ({ id: i, zz: 1 }));
    const error = await rejection(engine.catalog.append('e', rows));
    expect(error.issues).toHaveLength(500);
    expect(error.message.endsWith('; and 480 more problems')).toBe(true);
    expect(error.message.split('; ')).toHaveLength(21);
  });

  it('cuts a long unknown key or key value, and a long list of column names', async () => {
    const sheets = new MemorySpreadsheets({ b: { s: [Array.from({ length: 40 }, (_, i) => `c${i}`)] } });
    const engine = new Engine({ spreadsheets: sheets });
    await engine.catalog.registerEntity({
      name: 'wide',
      columns: Array.from({ length: 40 }, (_, i) => ({ name: `c${i}`, type: 'STRING' as const })),
      primary_key: ['c0'],
      spreadsheet_config: { spreadsheet_id: 'b', sheet_name: 's', origin: { row: 0, col: 0 } },
    });
    const long = 'k'.repeat(50_000);
    const unknown = await rejection(engine.catalog.append('wide', [{ c0: 'a', [long]: 1 }]));
    const names = Array.from({ length: 20 }, (_, i) => `c${i}`).join(', ');
    expect(unknown.issues[0]!.message).toBe(
      `row 1 of "wide" has "${'k'.repeat(200)}…", not a column of the entity (columns: ${names}, … (40 in all))`,
    );
    await engine.catalog.append('wide', [{ c0: long }]);
    const duplicate = await rejection(engine.catalog.append('wide', [{ c0: long }]));
    expect(duplicate.issues[0]!.message).toBe(
      `row 1 of "wide" repeats primary key (c0="${'k'.repeat(200)}…") of row 2 of sheet "s"`,
    );
  });

  it('cuts a long wrong value after 200 characters', async () => {
    const { engine } = await engineWithE();
    const error = await rejection(engine.catalog.upsert('e', [{ id: 'x'.repeat(100_000) }]));
    expect(error.issues[0]!.message).toBe(
      `row 1 of "e": column "id" must be NUMBER, got "${'x'.repeat(199)}…`,
    );
  });
});

describe('values JSON cannot hold', () => {
  it('refuses a cycle or a big integer inside a cell value as write_rejected, naming the column', async () => {
    const { engine, sheets } = await engineWithE();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const write of [
      () => engine.catalog.upsert('e', [{ id: 1, s: cycle }]),
      () =>
        engine.catalog.append('e', [
          { id: 1, s: 'fine' },
          { id: 2, s: { n: 1n } },
        ]),
      () => engine.catalog.append('e', [{ id: 1, s: [2n] }]),
    ]) {
      const error = await rejection(write());
      expect(error.code).toBe('write_rejected');
      expect(error.message).toMatch(/column "s" must be STRING, got an (object|array)$/);
    }
    const bigint = await rejection(engine.catalog.append('e', [{ id: 5n }]));
    expect(bigint.issues[0]!.message).toBe('row 1 of "e": column "id" must be NUMBER, got 5n');
    expect(sheets.cells('b', 's')).toEqual([['id', 'd', 'dt', 's']]);
  });
});
