import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import { Engine } from '../../src/index.js';
import { seedXlsx } from './sheet-files.js';

// LibreOffice Calc, headless: Debian package `libreoffice-calc-nogui`. In CI it must be there; on a
// machine without it these tests are skipped with a notice.
const SOFFICE = 'soffice';
const available = spawnSync(SOFFICE, ['--version'], { encoding: 'utf8', timeout: 60_000 }).status === 0;
if (!available && !process.env['CI'])
  console.warn(
    'LibreOffice round-trip tests skipped: `soffice` is not installed' +
      ' (apt-get install --no-install-recommends libreoffice-calc-nogui)',
  );

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepwire-libreoffice-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `soffice --headless --convert-to <format>` of a file into `out`, with a profile of its own. */
function convert(file: string, format: string, out: string): void {
  const result = spawnSync(
    SOFFICE,
    [
      `-env:UserInstallation=${pathToFileURL(join(dir, 'profile')).href}`,
      '--headless',
      '--convert-to',
      format,
      '--outdir',
      out,
      file,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (result.status !== 0) throw new Error(`soffice failed (${result.status}): ${result.stderr}`);
}

const entity = {
  name: 'people',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
    { name: 'score', type: 'NUMBER' as const },
    { name: 'active', type: 'BOOLEAN' as const },
    { name: 'note', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'crm', sheet_name: 'people', origin: { row: 0, col: 0 } },
};

describe.skipIf(!available && !process.env['CI'])('FileSpreadsheets and LibreOffice Calc', () => {
  it('soffice is installed (required in CI)', () => {
    expect(available, 'install it with: apt-get install --no-install-recommends libreoffice-calc-nogui').toBe(
      true,
    );
  });

  it(
    'LibreOffice shows what stepwire wrote: "=" text as text, numbers, booleans, empty cells',
    { timeout: 180_000 },
    async () => {
      const workbook = await seedXlsx(dir, 'crm', {
        people: [['id', 'name', 'score', 'active', 'note']],
        other: [['unrelated']],
      });
      const engine = new Engine({ spreadsheets: new FileSpreadsheets({ dir }) });
      await engine.catalog.registerEntity(entity);
      await engine.catalog.append('people', [
        { id: 1, name: '=1+1', score: 9.5, active: true, note: null },
        { id: 2, name: 'Grace, "Amazing"', score: 0, active: false, note: '=SUM(A1:A2)' },
      ]);
      const out = join(dir, 'csv');
      convert(workbook, 'csv', out);
      expect((await readFile(join(out, 'crm.csv'), 'utf8')).trim().split(/\r?\n/)).toEqual([
        'id,name,score,active,note',
        '1,=1+1,9.5,TRUE,',
        '2,"Grace, ""Amazing""",0,FALSE,=SUM(A1:A2)',
      ]);
    },
  );

  it(
    'reads a workbook LibreOffice saved: values, and a formula as its computed result',
    { timeout: 180_000 },
    async () => {
      const source = join(dir, 'source');
      await mkdir(source);
      await writeFile(join(source, 'shop.csv'), 'id,name,amount\n1,Ada,2.5\n2,,=A3*10\n');
      convert(join(source, 'shop.csv'), 'xlsx', dir);
      const sheets = new FileSpreadsheets({ dir });
      // A workbook converted from CSV names its one sheet after the file.
      const [rows] = await sheets.read([{ spreadsheet_id: 'shop', sheet_name: 'shop', row: 0, col: 0 }]);
      expect(rows).toEqual([
        ['id', 'name', 'amount'],
        [1, 'Ada', 2.5],
        [2, null, 20],
      ]);
    },
  );
});
