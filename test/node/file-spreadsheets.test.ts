import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import { Engine, SheetError, ValidationError } from '../../src/index.js';
import { CONTRACT_SPREADSHEET, describeSpreadsheetContract } from '../../src/testing/index.js';
import { seedCsv, seedXlsx, xlsxValues } from './sheet-files.js';

const folders: string[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'stepwire-sheets-'));
  folders.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describeSpreadsheetContract({
  name: 'FileSpreadsheets (.xlsx)',
  capabilities: { write: true, update: true },
  create: async (sheets) => {
    const dir = await freshDir();
    await seedXlsx(dir, CONTRACT_SPREADSHEET, sheets);
    return new FileSpreadsheets({ dir });
  },
});

describeSpreadsheetContract({
  name: 'FileSpreadsheets (.csv)',
  capabilities: { write: true, update: true },
  create: async (sheets) => {
    const dir = await freshDir();
    await seedCsv(dir, CONTRACT_SPREADSHEET, sheets);
    return new FileSpreadsheets({ dir });
  },
});

const people = { spreadsheet_id: 'crm', sheet_name: 'people' };
const entity = {
  name: 'people',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { ...people, origin: { row: 0, col: 0 } },
};

let dir: string;
beforeEach(async () => {
  dir = await freshDir();
});

describe('FileSpreadsheets: where a spreadsheet lives', () => {
  it('reads <id>.xlsx when both it and the folder <id>/ exist, and writes only the workbook', async () => {
    await seedXlsx(dir, 'crm', {
      people: [
        ['id', 'name'],
        [1, 'from xlsx'],
      ],
    });
    await seedCsv(dir, 'crm', {
      people: [
        ['id', 'name'],
        [1, 'from csv'],
      ],
    });
    const sheets = new FileSpreadsheets({ dir });
    expect(await sheets.read([{ ...people, row: 1, col: 0 }])).toEqual([[[1, 'from xlsx']]]);
    await sheets.append({ ...people, row: 2, col: 0, values: [[2, 'new']] });
    expect(await xlsxValues(join(dir, 'crm.xlsx'), 'people')).toEqual([
      ['id', 'name'],
      [1, 'from xlsx'],
      [2, 'new'],
    ]);
    expect(await readFile(join(dir, 'crm/people.csv'), 'utf8')).toBe('id,name\n1,from csv\n');
  });

  it('a sheet in neither place is sheet_not_found for read, append and write, and nothing is created', async () => {
    await seedXlsx(dir, 'book', { first: [['a']] });
    const sheets = new FileSpreadsheets({ dir: join(dir) });
    const missing = [
      { spreadsheet_id: 'nope', sheet_name: 'people' },
      { spreadsheet_id: 'book', sheet_name: 'second' },
    ];
    for (const ref of missing) {
      for (const call of [
        () => sheets.read([{ ...ref, row: 0, col: 0 }]),
        () => sheets.append({ ...ref, row: 0, col: 0, values: [[1]] }),
        () => sheets.write({ ...ref, row: 0, col: 0, values: [[1]] }),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SheetError);
        expect((error as SheetError).code).toBe('sheet_not_found');
        expect((error as SheetError).location).toEqual(ref);
      }
    }
    const error = await sheets.read([{ ...missing[1]!, row: 0, col: 0 }]).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /sheet "second" does not exist .*book\.xlsx \(its sheets: first\)/,
    );
    expect(await sheets.revision(missing[0]!)).toBeUndefined();
    expect((await readdir(dir)).sort()).toEqual(['book.xlsx']);
  });

  it('refuses spreadsheet and sheet names that would leave the folder', async () => {
    await mkdir(join(dir, 'inside'));
    await writeFile(join(dir, 'secret.csv'), 'id\n1\n');
    const sheets = new FileSpreadsheets({ dir: join(dir, 'inside') });
    const bad = [
      { spreadsheet_id: '..', sheet_name: 'secret', field: 'spreadsheet_id' },
      { spreadsheet_id: '../inside', sheet_name: 'x', field: 'spreadsheet_id' },
      { spreadsheet_id: '/etc', sheet_name: 'passwd', field: 'spreadsheet_id' },
      { spreadsheet_id: 'crm', sheet_name: '../../secret', field: 'sheet_name' },
      { spreadsheet_id: 'crm', sheet_name: 'a\\b', field: 'sheet_name' },
      { spreadsheet_id: 'crm', sheet_name: 'x\u0000.csv', field: 'sheet_name' },
      { spreadsheet_id: 'crm', sheet_name: '', field: 'sheet_name' },
    ];
    for (const { field, ...ref } of bad) {
      for (const call of [
        () => sheets.read([{ ...ref, row: 0, col: 0 }]),
        () => sheets.append({ ...ref, row: 0, col: 0, values: [[2]] }),
        () => sheets.revision(ref),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).issues[0]!.path).toBe(field);
      }
    }
    expect(await readFile(join(dir, 'secret.csv'), 'utf8')).toBe('id\n1\n');
  });
});

describe('FileSpreadsheets: reads follow the files', () => {
  it('sees a workbook saved by another program, and so does the engine (revision changes)', async () => {
    await seedXlsx(dir, 'crm', {
      people: [
        ['id', 'name'],
        [1, 'Ada'],
      ],
    });
    const sheets = new FileSpreadsheets({ dir });
    const engine = new Engine({ spreadsheets: sheets });
    await engine.catalog.registerEntity(entity);
    const before = await sheets.revision(people);
    expect(
      (await engine.catalog.getEntity({ entity_name: 'people', operation: {} })).body.table.rows,
    ).toEqual([[1, 'Ada']]);
    expect(await sheets.revision(people)).toBe(before);
    await seedXlsx(dir, 'crm', {
      people: [
        ['id', 'name'],
        [1, 'Ada'],
        [2, 'Grace'],
      ],
    });
    expect(await sheets.revision(people)).not.toBe(before);
    expect(
      (await engine.catalog.getEntity({ entity_name: 'people', operation: {} })).body.table.rows,
    ).toEqual([
      [1, 'Ada'],
      [2, 'Grace'],
    ]);
  });

  it('sees a CSV file edited in place with the same size (modification time and inode tell)', async () => {
    await seedCsv(dir, 'crm', {
      people: [
        ['id', 'name'],
        [1, 'Ada'],
      ],
    });
    const sheets = new FileSpreadsheets({ dir });
    expect(await sheets.read([{ ...people, row: 1, col: 0 }])).toEqual([[[1, 'Ada']]]);
    await writeFile(join(dir, 'crm/people.csv'), 'id,name\n1,Eve\n');
    expect(await sheets.read([{ ...people, row: 1, col: 0 }])).toEqual([[[1, 'Eve']]]);
  });

  it('a CSV that cannot be read is a SheetError naming the file and line; non-UTF-8 text is refused', async () => {
    await seedCsv(dir, 'crm', { people: [] });
    const sheets = new FileSpreadsheets({ dir });
    await writeFile(join(dir, 'crm/people.csv'), 'id,name\n1,"Ada\n');
    const error = await sheets.read([{ ...people, row: 0, col: 0 }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SheetError);
    expect((error as SheetError).code).toBe('invalid_file');
    expect((error as Error).message).toMatch(/crm\/people\.csv .*line 2: a quoted field is not closed/);
    await writeFile(
      join(dir, 'crm/people.csv'),
      new Uint8Array([0x69, 0x64, 0x0a, 0x43, 0x61, 0x66, 0xe9, 0x0a]),
    );
    const latin1 = await sheets.append({ ...people, row: 2, col: 0, values: [[1]] }).catch((e: unknown) => e);
    expect((latin1 as SheetError).code).toBe('invalid_file');
    expect((latin1 as Error).message).toMatch(/not UTF-8/);
    expect(new Uint8Array(await readFile(join(dir, 'crm/people.csv')))).toHaveLength(8);
  });
});

describe('FileSpreadsheets: cell types', () => {
  const row = [4, '=1+1', 0, true, false, null, '42', 'TRUE', '007', 'x, "y"', 'two\nlines', -2.5];

  it('.xlsx keeps numbers, text, booleans and empty cells; "=..." is a text cell, not a formula', async () => {
    await seedXlsx(dir, 'crm', { people: [['id']] });
    const sheets = new FileSpreadsheets({ dir });
    await sheets.append({ ...people, row: 1, col: 0, values: [row] });
    expect(await new FileSpreadsheets({ dir }).read([{ ...people, row: 1, col: 0 }])).toEqual([
      [[4, '=1+1', 0, true, false, null, '42', 'TRUE', '007', 'x, "y"', 'two\nlines', -2.5]],
    ]);
    const [, written] = await xlsxValues(join(dir, 'crm.xlsx'), 'people');
    expect(written![1]).toBe('=1+1'); // exceljs reads a formula as an object { formula }
  });

  it('.xlsx reads cells unformatted: formula results, dates as ISO text, rich text, links, errors, merges', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('people');
    sheet.getRow(1).values = ['computed', 'no result', 'day', 'moment', 'rich', 'link', 'error', 'merged'];
    sheet.getCell('A2').value = { formula: '1+1', result: 2 };
    sheet.getCell('B2').value = { formula: 'NOW()' };
    sheet.getCell('C2').value = new Date(Date.UTC(2026, 2, 1));
    sheet.getCell('D2').value = new Date(Date.UTC(2026, 2, 1, 9, 30, 15));
    sheet.getCell('E2').value = { richText: [{ text: 'bold', font: { bold: true } }, { text: ' plain' }] };
    sheet.getCell('F2').value = { text: 'site', hyperlink: 'https://example.com' };
    sheet.getCell('G2').value = { error: '#N/A' };
    sheet.getCell('H2').value = 'wide';
    sheet.mergeCells('H2:I2');
    await workbook.xlsx.writeFile(join(dir, 'crm.xlsx'));
    expect(await new FileSpreadsheets({ dir }).read([{ ...people, row: 1, col: 0 }])).toEqual([
      [[2, null, '2026-03-01', '2026-03-01T09:30:15', 'bold plain', 'site', '#N/A', 'wide']],
    ]);
  });

  it('.xlsx deletes the row holding a filled-down formula; the formulas below keep their text', async () => {
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('people');
    sheet.addRow(['id', 'amount', 'double']);
    for (const id of [1, 2, 3]) sheet.addRow([id, id * 10]);
    // A fill-down, as Excel stores it: C2 holds the formula, C3:C4 point at it.
    sheet.fillFormula('C2:C4', 'B2*2', [20, 40, 60]);
    await workbook.xlsx.writeFile(join(dir, 'crm.xlsx'));
    const engine = new Engine({ spreadsheets: new FileSpreadsheets({ dir }) });
    await engine.catalog.registerEntity({
      name: 'people',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'amount', type: 'NUMBER' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { ...people, origin: { row: 0, col: 0 } },
    });
    expect(await engine.catalog.delete('people', [{ id: 1 }])).toEqual({ written: 1 });
    const saved = new ExcelJS.Workbook();
    await saved.xlsx.readFile(join(dir, 'crm.xlsx'));
    const after = saved.getWorksheet('people')!;
    expect([2, 3].map((row) => [after.getCell(row, 1).value, after.getCell(row, 3).formula])).toEqual([
      [2, 'B3*2'],
      [3, 'B4*2'],
    ]);
    expect(after.getCell(4, 1).value).toBeNull();
  });

  it('.csv reads back what it wrote, quoting text that would read as a number or boolean', async () => {
    await seedCsv(dir, 'crm', { people: [['id']] });
    const sheets = new FileSpreadsheets({ dir });
    await sheets.append({ ...people, row: 1, col: 0, values: [row] });
    expect(await readFile(join(dir, 'crm/people.csv'), 'utf8')).toBe(
      'id\n4,=1+1,0,TRUE,FALSE,,"42","TRUE",007,"x, ""y""","two\nlines",-2.5\n',
    );
    expect(await new FileSpreadsheets({ dir }).read([{ ...people, row: 1, col: 0 }])).toEqual([[row]]);
  });

  it('.csv: numbers in their usual form are numbers, other text stays text and column types coerce it', async () => {
    await mkdir(join(dir, 'crm'));
    await writeFile(join(dir, 'crm/people.csv'), '\uFEFFid,name\r\n1.50,007\r\n"2",true\r\n1e3,\r\n');
    const sheets = new FileSpreadsheets({ dir });
    expect(await sheets.read([{ ...people, row: 1, col: 0 }])).toEqual([
      [
        ['1.50', '007'],
        ['2', 'true'],
        ['1e3', null],
      ],
    ]);
    const engine = new Engine({ spreadsheets: sheets });
    await engine.catalog.registerEntity(entity);
    const read = await engine.catalog.getEntity({ entity_name: 'people', operation: {} });
    expect(read.body.table.rows).toEqual([
      [1.5, '007'],
      [2, 'true'],
      [1000, null],
    ]);
    await engine.catalog.append('people', [{ id: 4, name: 'Ada' }]);
    // The byte-order mark and CRLF line ends of the file are kept.
    expect(await readFile(join(dir, 'crm/people.csv'), 'utf8')).toBe(
      '\uFEFFid,name\r\n1.50,007\r\n"2",true\r\n1e3,\r\n4,Ada\r\n',
    );
  });

  it('.csv keeps the line end between its rows: CR alone, or LF beside a CRLF inside a quoted field', async () => {
    await mkdir(join(dir, 'crm'));
    const sheets = new FileSpreadsheets({ dir });
    for (const [before, after] of [
      ['id,name\r1,a\r', 'id,name\r1,a\r4,Ada\r'],
      ['id,name\n1,"two\r\nlines"\n', 'id,name\n1,"two\r\nlines"\n4,Ada\n'],
      ['"i\nd",name\r\n1,a\r\n', '"i\nd",name\r\n1,a\r\n4,Ada\r\n'],
    ]) {
      await writeFile(join(dir, 'crm/people.csv'), before!);
      await sheets.append({ ...people, row: 2, col: 0, values: [[4, 'Ada']] });
      expect(await readFile(join(dir, 'crm/people.csv'), 'utf8')).toBe(after);
    }
  });
});
