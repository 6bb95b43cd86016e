import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import ExcelJS from 'exceljs';
import type { CellValue } from '../../src/adapters/types.js';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** Writes `<dir>/<id>.xlsx` with exceljs, as another program would: one worksheet per sheet. */
export async function seedXlsx(
  dir: string,
  id: string,
  sheets: Record<string, CellValue[][]>,
): Promise<string> {
  const workbook = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) {
    const sheet = workbook.addWorksheet(name);
    rows.forEach((row, r) =>
      row.forEach((value, c) => {
        if (value !== null) sheet.getCell(r + 1, c + 1).value = value;
      }),
    );
  }
  const path = join(dir, `${id}.xlsx`);
  await workbook.xlsx.writeFile(path);
  return path;
}

/** Writes `<dir>/<id>/<sheet>.csv` by hand: cells joined by commas, text quoted only when needed. */
export async function seedCsv(dir: string, id: string, sheets: Record<string, CellValue[][]>): Promise<void> {
  await mkdir(join(dir, id), { recursive: true });
  for (const [name, rows] of Object.entries(sheets)) {
    const text = rows.map((row) => row.map(csvField).join(',')).join('\n') + '\n';
    await writeFile(join(dir, id, `${name}.csv`), text);
  }
}

function csvField(value: CellValue): string {
  if (value === null) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Every cell value of every used row of a worksheet, as exceljs reads the file (1-based). */
export async function xlsxValues(path: string, sheet: string): Promise<unknown[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  const rows: unknown[][] = [];
  workbook.getWorksheet(sheet)!.eachRow((row, n) => {
    rows[n - 1] = (row.values as unknown[]).slice(1);
  });
  return Array.from(rows, (row) => row ?? []);
}

/**
 * Runs `node --import tsx [afterImport] <script> <args>` from the repository root; `done` resolves with
 * its exit and what it wrote on stderr.
 */
export function runScript(
  script: string,
  args: string[],
  options: { afterImport?: string[] } = {},
): { done: Promise<{ code: number | null; signal: string | null; stderr: string }>; kill: () => void } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', ...(options.afterImport ?? []), script, ...args],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolveDone) =>
    child.once('close', (code, signal) => resolveDone({ code, signal, stderr })),
  );
  return { done, kill: () => child.kill('SIGKILL') };
}
