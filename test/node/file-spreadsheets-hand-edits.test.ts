import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import { parseCsv } from '../../src/adapters/node/csv.js';
import { Engine, SheetError } from '../../src/index.js';
import { seedCsv, seedXlsx, xlsxValues } from './sheet-files.js';

const notes = { spreadsheet_id: 'log', sheet_name: 'notes' };
const entity = {
  name: 'notes',
  columns: [
    { name: 'id', type: 'STRING' as const },
    { name: 'by', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { ...notes, origin: { row: 0, col: 0 } },
};
const HAND_APPEND = new URL('./fixtures/hand-append.mjs', import.meta.url).pathname;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepwire-hand-edits-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function csvPath(): string {
  return join(dir, 'log', 'notes.csv');
}

async function ids(sheets: FileSpreadsheets): Promise<unknown[]> {
  const [rows = []] = await sheets.read([{ ...notes, row: 1, col: 0 }]);
  return rows.map((row) => row[0]);
}

/** A workbook saved by another program: loaded, a row added at the end, saved in place or by rename. */
async function saveXlsxByHand(path: string, row: string[], how: 'in place' | 'by rename'): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  workbook.getWorksheet('notes')!.addRow(row);
  if (how === 'in place') return workbook.xlsx.writeFile(path);
  await workbook.xlsx.writeFile(`${path}.saving`);
  await rename(`${path}.saving`, path);
}

/** Hooks that make `edit` once, at the first time they are called. */
function once(edit: () => unknown): () => Promise<void> {
  let pending: (() => unknown) | undefined = edit;
  return async () => {
    const now = pending;
    pending = undefined;
    await now?.();
  };
}

const appendB = {
  ...notes,
  row: 2,
  col: 0,
  values: [['b', 'api']],
  expect: [{ row: 1, col: 0, values: ['a'] }],
};

describe('FileSpreadsheets keeps an edit made between its read and its rename', () => {
  it('.csv: a line appended in place is copied after the write, which does not start over', async () => {
    await seedCsv(dir, 'log', {
      notes: [
        ['id', 'by'],
        ['a', 'api'],
      ],
    });
    const path = csvPath();
    let calls = 0;
    const sheets = new FileSpreadsheets({
      dir,
      hooks: {
        beforeCheck: async () => {
          if (++calls === 1) await appendFile(path, 'h1,hand\nh2,hand\n');
        },
      },
    });
    await sheets.append(appendB);
    expect(calls).toBe(1);
    expect(await readFile(path, 'utf8')).toBe('id,by\na,api\nb,api\nh1,hand\nh2,hand\n');
  });

  it('.csv: a file saved by rename, or rewritten in place, makes the write start over from it', async () => {
    await seedCsv(dir, 'log', {
      notes: [
        ['id', 'by'],
        ['a', 'api'],
      ],
    });
    const path = csvPath();
    const edits = [
      async () => {
        await writeFile(`${path}.saving`, 'id,by\na,api\nh1,hand\n');
        await rename(`${path}.saving`, path);
      },
      // Truncated and written again, same inode: the first row changed, so this is no append.
      () => writeFile(path, 'id,by\na,hand too\nh1,hand\n'),
    ];
    let calls = 0;
    const sheets = new FileSpreadsheets({
      dir,
      hooks: {
        beforeCheck: async () => {
          calls++;
          await edits.shift()?.();
        },
      },
    });
    await sheets.append(appendB);
    expect(calls).toBe(3);
    expect(await readFile(path, 'utf8')).toBe('id,by\na,hand too\nb,api\nh1,hand\n');
  });

  it('.csv: lines appended, in the instant between the check and the rename, to the file replaced', async () => {
    await seedCsv(dir, 'log', {
      notes: [
        ['id', 'by'],
        ['a', 'api'],
      ],
    });
    const path = csvPath();
    const sheets = new FileSpreadsheets({
      dir,
      // The path still names the file being replaced: the line goes into it, after the check.
      hooks: { afterCheck: once(() => appendFileSync(path, 'h1,hand\n')) },
    });
    await sheets.append(appendB);
    expect(await readFile(path, 'utf8')).toBe('id,by\na,api\nb,api\nh1,hand\n');
  });

  it('.csv: the file replaced rewritten in that instant: the write is made again from it', async () => {
    await seedCsv(dir, 'log', {
      notes: [
        ['id', 'by'],
        ['a', 'api'],
      ],
    });
    const path = csvPath();
    const sheets = new FileSpreadsheets({
      dir,
      hooks: { afterCheck: once(() => writeFileSync(path, 'id,by\na,hand\n')) },
    });
    await sheets.append(appendB);
    expect(await readFile(path, 'utf8')).toBe('id,by\na,hand\nb,api\n');
  });

  it('.csv: the edit lost: the file replaced rewritten in that instant, and the new file edited too', async () => {
    await seedCsv(dir, 'log', {
      notes: [
        ['id', 'by'],
        ['a', 'api'],
      ],
    });
    const path = csvPath();
    let calls = 0;
    const sheets = new FileSpreadsheets({
      dir,
      hooks: {
        afterCheck: once(() => writeFileSync(path, 'id,by\na,hand\n')),
        // Called again when the write is made again from the file replaced: the new file is edited now.
        beforeCheck: () => (++calls === 2 ? appendFile(path, 'h2,hand\n') : undefined),
      },
    });
    await sheets.append(appendB);
    // This write and the later edit are kept; the rewrite of the file replaced is not.
    expect(calls).toBe(2);
    expect(await readFile(path, 'utf8')).toBe('id,by\na,api\nb,api\nh2,hand\n');
  });

  it('.csv: an edit that changes the last row makes the append refuse, and the engine plans it again', async () => {
    await seedCsv(dir, 'log', {
      notes: [
        ['id', 'by'],
        ['a', 'api'],
        ['b', 'api'],
      ],
    });
    const path = csvPath();
    const sheets = new FileSpreadsheets({
      dir,
      // Written in place, as an editor that truncates and rewrites the file does: same inode.
      hooks: { beforeCheck: once(() => writeFile(path, 'id,by\na,api\nb2,hand\nh1,hand\n')) },
    });
    const engine = new Engine({ spreadsheets: sheets });
    await engine.catalog.registerEntity(entity);
    expect(await engine.catalog.append('notes', [{ id: 'c', by: 'api' }])).toEqual({ written: 1 });
    expect(await readFile(path, 'utf8')).toBe('id,by\na,api\nb2,hand\nh1,hand\nc,api\n');
  });

  it('gives up after 5 attempts when the file is saved again every time, with rows_moved; nothing is written', async () => {
    await seedCsv(dir, 'log', { notes: [['id', 'by']] });
    const path = csvPath();
    let calls = 0;
    const sheets = new FileSpreadsheets({
      dir,
      hooks: {
        beforeCheck: async () => {
          await writeFile(`${path}.saving`, `${await readFile(path, 'utf8')}h${++calls},hand\n`);
          await rename(`${path}.saving`, path);
        },
      },
    });
    const error = await sheets
      .append({ ...notes, row: 1, col: 0, values: [['a', 'api']] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SheetError);
    expect((error as SheetError).code).toBe('rows_moved');
    // Named under the folder's own name, never by the absolute path.
    expect((error as Error).message).toContain(
      `${basename(dir)}/log/notes.csv changed 5 times while it was being written`,
    );
    expect((error as Error).message).not.toContain(dir);
    expect(calls).toBe(5);
    expect(await ids(new FileSpreadsheets({ dir }))).toEqual(['h1', 'h2', 'h3', 'h4', 'h5']);
  });

  it.each(['in place', 'by rename'] as const)(
    '.xlsx: a workbook saved %s survives beside the append',
    async (how) => {
      const path = await seedXlsx(dir, 'log', {
        notes: [
          ['id', 'by'],
          ['a', 'api'],
        ],
      });
      const sheets = new FileSpreadsheets({
        dir,
        hooks: { beforeCheck: once(() => saveXlsxByHand(path, ['h1', 'hand'], how)) },
      });
      await sheets.append(appendB);
      await sheets.update({
        ...notes,
        cells: [{ row: 3, col: 1, values: ['api too'] }],
        deleteRows: [],
        expect: [{ row: 3, col: 0, values: ['h1'] }],
      });
      expect(await xlsxValues(path, 'notes')).toEqual([
        ['id', 'by'],
        ['a', 'api'],
        ['b', 'api'],
        ['h1', 'api too'],
      ]);
    },
  );
});

describe('FileSpreadsheets while a person appends lines by hand', () => {
  it(
    '.csv: every line appended by hand and every row appended through the engine is kept',
    { timeout: 120_000 },
    async () => {
      await seedCsv(dir, 'log', { notes: [['id', 'by']] });
      const path = csvPath();
      const engine = new Engine({ spreadsheets: new FileSpreadsheets({ dir }) });
      await engine.catalog.registerEntity(entity);
      const HAND = 200;
      // A line every 5 ms on average (2 to 8): a script, more often than a write here takes.
      const hand = spawn(process.execPath, [HAND_APPEND, path, 'hand', String(HAND), '5'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      hand.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      let exit: number | null | undefined;
      const exited = new Promise<void>((done) =>
        hand.once('close', (code) => {
          exit = code;
          done();
        }),
      );
      let api = 0;
      const deadline = Date.now() + 90_000;
      // Appends through the API until the person is done, and at least 20 rows.
      while ((exit === undefined || api < 20) && Date.now() < deadline) {
        await engine.catalog.append('notes', [{ id: `api-${api}`, by: 'api' }]);
        api++;
      }
      await exited;
      expect(exit, stderr).toBe(0);
      const kept = new Set(await ids(new FileSpreadsheets({ dir })));
      const lostHand = Array.from({ length: HAND }, (_, i) => `hand-${i}`).filter((id) => !kept.has(id));
      const lostApi = Array.from({ length: api }, (_, i) => `api-${i}`).filter((id) => !kept.has(id));
      expect({ lostHand, lostApi }).toEqual({ lostHand: [], lostApi: [] });
      expect(kept.size).toBe(HAND + api);
    },
  );
});

describe('CSV line ends: each line is a row, whatever its end', () => {
  it('parses LF, CRLF and CR lines of one file as rows; a line break inside quotes stays in its cell', () => {
    expect(parseCsv('id,by\r\na,1\nb,2\rc,3\r\n')).toEqual([
      ['id', 'by'],
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
    ]);
    expect(parseCsv('id,by\n"x\r\ny",1\r\n"p\nq\rr",2\n')).toEqual([
      ['id', 'by'],
      ['x\r\ny', '1'],
      ['p\nq\rr', '2'],
    ]);
    // A blank line of either end is a row of one empty field, as before.
    expect(parseCsv('a\r\n\nb\n\r\nc')).toEqual([['a'], [''], ['b'], [''], ['c']]);
  });

  it('names the line of a broken quote in a file of mixed line ends', () => {
    expect(() => parseCsv('id,by\r\na,1\nb,2\r\n"c,3\n')).toThrow(
      expect.objectContaining({ issues: [expect.objectContaining({ path: 'line 4' })] }),
    );
  });

  it('.csv: LF lines appended by hand to a CRLF file read as rows, and a write keeps the file CRLF', async () => {
    await seedCsv(dir, 'log', { notes: [] });
    const path = csvPath();
    await writeFile(path, 'id,by\r\na,api\r\n');
    await appendFile(path, 'h1,hand\nh2,"two\nlines"\n');
    const sheets = new FileSpreadsheets({ dir });
    const [rows] = await sheets.read([{ ...notes, row: 0, col: 0 }]);
    expect(rows).toEqual([
      ['id', 'by'],
      ['a', 'api'],
      ['h1', 'hand'],
      ['h2', 'two\nlines'],
    ]);
    await sheets.append({ ...notes, row: 4, col: 0, values: [['b', 'api']] });
    expect(await readFile(path, 'utf8')).toBe('id,by\r\na,api\r\nh1,hand\r\nh2,"two\nlines"\r\nb,api\r\n');

    // And CRLF lines appended to an LF file: no stray \r at the end of a cell.
    await writeFile(path, 'id,by\na,api\n');
    await appendFile(path, 'h1,hand\r\n');
    await sheets.append({ ...notes, row: 3, col: 0, values: [['b', 'api']] });
    expect(await readFile(path, 'utf8')).toBe('id,by\na,api\nh1,hand\nb,api\n');
  });
});
