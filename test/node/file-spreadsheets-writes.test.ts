import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { chmod, lstat, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import { SheetError } from '../../src/index.js';
import { runScript, seedCsv, seedXlsx, xlsxValues } from './sheet-files.js';

const people = { spreadsheet_id: 'crm', sheet_name: 'people' };
const APPEND_ROWS = 'test/node/fixtures/append-rows.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepwire-sheet-writes-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Seeds `crm` in one format with a header row `tag, i`. */
async function seed(format: 'xlsx' | 'csv'): Promise<string> {
  if (format === 'xlsx') return seedXlsx(dir, 'crm', { people: [['tag', 'i']] });
  await seedCsv(dir, 'crm', { people: [['tag', 'i']] });
  return join(dir, 'crm/people.csv');
}

async function dataRows(sheets: FileSpreadsheets) {
  const [rows = []] = await sheets.read([{ ...people, row: 1, col: 0 }]);
  return rows;
}

describe.each(['xlsx', 'csv'] as const)('FileSpreadsheets writes (.%s)', (format) => {
  it('replaces the file leaving no temporary or lock file, keeping its permissions and symbolic link', async () => {
    const real = await seed(format);
    const folder = format === 'xlsx' ? dir : join(dir, 'crm');
    await chmod(real, 0o640);
    const before = await readdir(folder);
    const sheets = new FileSpreadsheets({ dir });
    await sheets.append({ ...people, row: 1, col: 0, values: [['a', 1]] });
    await sheets.write({ ...people, row: 1, col: 1, values: [[2]] });
    expect(await readdir(folder)).toEqual(before);
    expect((await stat(real)).mode & 0o777).toBe(0o640);
    expect(await dataRows(sheets)).toEqual([['a', 2]]);

    // A spreadsheet reached through a link: the link stays, the file it points to changes.
    const linked = join(dir, 'linked');
    await rm(linked, { recursive: true, force: true });
    await symlink(format === 'xlsx' ? real : folder, format === 'xlsx' ? `${linked}.xlsx` : linked);
    const ref = { spreadsheet_id: 'linked', sheet_name: 'people' };
    await sheets.append({ ...ref, row: 2, col: 0, values: [['b', 3]] });
    expect((await lstat(format === 'xlsx' ? `${linked}.xlsx` : linked)).isSymbolicLink()).toBe(true);
    expect(await dataRows(new FileSpreadsheets({ dir }))).toEqual([
      ['a', 2],
      ['b', 3],
    ]);
  });

  it('keeps every character of text: control characters, \\r, U+FFFF, escape-like text, a lone surrogate in .xlsx', async () => {
    await seed(format);
    const texts = [
      'bell\u0007',
      'nul\u0000',
      'cr\r\nlf',
      'non\uFFFE\uFFFF',
      'lone\uD800x',
      '_x0041_ and _x005f_',
      'tab\tend',
    ];
    const sheets = new FileSpreadsheets({ dir });
    await sheets.append({ ...people, row: 1, col: 0, values: texts.map((text, i) => [text, i]) });
    // A new adapter reads the file itself, and a later write keeps the file readable.
    await new FileSpreadsheets({ dir }).append({
      ...people,
      row: 1 + texts.length,
      col: 0,
      values: [['last', 9]],
    });
    // A UTF-8 file cannot hold a lone surrogate (no character): a CSV file has U+FFFD in its place.
    const kept = texts.map((text) => (format === 'csv' ? text.replace('\uD800', '\uFFFD') : text));
    expect(await dataRows(new FileSpreadsheets({ dir }))).toEqual([
      ...kept.map((text, i) => [text, i]),
      ['last', 9],
    ]);
  });

  it('serializes concurrent appends in one process, also across adapter instances', async () => {
    await seed(format);
    const instances = [new FileSpreadsheets({ dir }), new FileSpreadsheets({ dir })];
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        instances[i % 2]!.append({ ...people, row: 1, col: 0, values: [['x', i]] }),
      ),
    );
    const rows = await dataRows(instances[0]!);
    expect(rows.map((row) => row[1]).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 12 }, (_, i) => i),
    );
  });

  it('serializes appends of two processes through the lock file', { timeout: 120_000 }, async () => {
    await seed(format);
    // Enough appends each that the two processes overlap (.csv writes are fast), few enough to be quick.
    const count = format === 'csv' ? 100 : 10;
    const writers = ['p', 'q'].map((tag) =>
      runScript(APPEND_ROWS, [dir, 'crm', 'people', tag, String(count)]),
    );
    const results = await Promise.all(writers.map((w) => w.done));
    expect(
      results.map((r) => r.code),
      results.map((r) => r.stderr).join('\n'),
    ).toEqual([0, 0]);
    const rows = await dataRows(new FileSpreadsheets({ dir }));
    for (const tag of ['p', 'q'])
      expect(
        rows
          .filter((row) => row[0] === tag)
          .map((row) => row[1])
          .sort((a, b) => Number(a) - Number(b)),
      ).toEqual(Array.from({ length: count }, (_, i) => i));
  });

  it('a writer killed at any moment leaves the file whole, and its stale lock is taken over', async () => {
    const path = await seed(format);
    const writer = runScript(APPEND_ROWS, [dir, 'crm', 'people', 'k', '100000']);
    const sheets = new FileSpreadsheets({ dir });
    const deadline = Date.now() + 60_000;
    while ((await dataRows(sheets)).length < 4 && Date.now() < deadline) await sleep(20);
    writer.kill();
    expect((await writer.done).signal).toBe('SIGKILL');
    const rows = await dataRows(new FileSpreadsheets({ dir }));
    expect(rows.length).toBeGreaterThanOrEqual(4);
    expect(rows).toEqual(rows.map((_, i) => ['k', i]));
    // If the kill came inside a write, `<file>.lock` names a process that is gone: the next write waits for nobody.
    const started = Date.now();
    await new FileSpreadsheets({ dir, lockTimeoutMs: 5_000 }).append({
      ...people,
      row: rows.length + 1,
      col: 0,
      values: [['after', 0]],
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await dataRows(new FileSpreadsheets({ dir }))).at(-1)).toEqual(['after', 0]);
    expect(await readFile(path)).toBeTruthy();
  });
});

describe('FileSpreadsheets write lock', () => {
  it('waits for a lock held by a running process, then fails naming it; the file is unchanged', async () => {
    const path = await seed('csv');
    await writeFile(`${path}.lock`, `${process.pid}\n`);
    const sheets = new FileSpreadsheets({ dir, lockTimeoutMs: 150 });
    const started = Date.now();
    const error = await sheets
      .append({ ...people, row: 1, col: 0, values: [['x', 1]] })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(error).toBeInstanceOf(SheetError);
    expect((error as SheetError).code).toBe('locked');
    expect((error as Error).message).toContain(`held by process ${process.pid}`);
    expect(await readFile(path, 'utf8')).toBe('tag,i\n');
  });

  it('takes over a lock whose process has ended', async () => {
    const path = await seed('csv');
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await writeFile(`${path}.lock`, `${ended.stdout.toString()}\n`);
    await new FileSpreadsheets({ dir, lockTimeoutMs: 0 }).append({
      ...people,
      row: 1,
      col: 0,
      values: [['x', 1]],
    });
    expect(await readFile(path, 'utf8')).toBe('tag,i\nx,1\n');
    expect(await readdir(join(dir, 'crm'))).toEqual(['people.csv']);
  });

  it('lets one writer at a time in when several take over the lock of a dead process at once', async () => {
    const counter = join(dir, 'counter');
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    // Threads with module instances of their own: their locks meet only in the lock file, as processes do.
    const fixture = new URL('./fixtures/lock-thread.mjs', import.meta.url);
    const threads = [0, 1, 2, 3].map(() => new Worker(fixture, { workerData: { counter } }));
    const answer = (thread: Worker) => new Promise((done) => thread.once('message', done));
    try {
      await Promise.all(threads.map(answer));
      let lost = 0;
      for (let round = 0; round < 40; round++) {
        await writeFile(counter, '0');
        await writeFile(`${counter}.lock`, `${ended.stdout.toString()}\n`);
        await Promise.all(threads.map((thread) => (thread.postMessage(round), answer(thread))));
        if (Number(await readFile(counter, 'utf8')) !== threads.length) lost++;
      }
      expect(lost).toBe(0);
      expect(await readdir(dir)).toEqual(['counter']);
    } finally {
      await Promise.all(threads.map((thread) => thread.terminate()));
    }
  });

  it('waits, within lockTimeoutMs, on a takeover turn left by a waiter that died in it, then takes over', async () => {
    const path = await seed('csv');
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const dead = `${ended.stdout.toString()}\n`;
    await writeFile(`${path}.lock`, dead);
    await writeFile(`${path}.lock.takeover`, dead);
    const row = { ...people, row: 1, col: 0, values: [['x', 1]] };
    const error = await new FileSpreadsheets({ dir, lockTimeoutMs: 200 })
      .append(row)
      .catch((e: unknown) => e);
    expect((error as SheetError).code).toBe('locked');
    expect(await readFile(path, 'utf8')).toBe('tag,i\n');
    // The turn is over after a second: the next writer takes the dead lock over and writes.
    await new FileSpreadsheets({ dir, lockTimeoutMs: 5_000 }).append(row);
    expect(await readFile(path, 'utf8')).toBe('tag,i\nx,1\n');
    expect(await readdir(join(dir, 'crm'))).toEqual(['people.csv']);
  });

  it('an aborted write changes nothing', async () => {
    const path = await seed('xlsx');
    const controller = new AbortController();
    controller.abort();
    const sheets = new FileSpreadsheets({ dir });
    await expect(
      sheets.append({ ...people, row: 1, col: 0, values: [['x', 1]] }, { signal: controller.signal }),
    ).rejects.toThrow();
    expect(await xlsxValues(path, 'people')).toEqual([['tag', 'i']]);
  });
});

describe('FileSpreadsheets without exceljs', () => {
  it(
    'reads CSV folders, and names the package to install when a workbook needs it',
    { timeout: 60_000 },
    async () => {
      await seedXlsx(dir, 'book', { s: [['a']] });
      await seedCsv(dir, 'crm', { people: [['tag', 'i']] });
      const hooks = ['--import', './test/node/fixtures/without-exceljs.mjs'];
      const read = (id: string, sheet: string) =>
        runScript('test/node/fixtures/read-sheet.ts', [dir, id, sheet], { afterImport: hooks }).done;
      const [workbook, csv] = await Promise.all([read('book', 's'), read('crm', 'people')]);
      expect(JSON.parse(workbook.stderr)).toEqual({
        name: 'StepwireError',
        code: 'missing_dependency',
        message: expect.stringContaining('needs the package "exceljs", which is not installed') as unknown,
      });
      expect(JSON.parse(workbook.stderr).message).toContain('npm install exceljs');
      expect(JSON.parse(csv.stderr)).toEqual({ rows: [[['tag', 'i']]] });
    },
  );
});
