import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'vitest';
import { findTool, POPPLER } from '../helpers/tools.js';

/** Whether poppler-utils (`pdftotext`, `pdfinfo`, `pdftoppm`) is installed; see `findTool`. */
export const HAS_POPPLER = findTool(POPPLER) !== undefined;

/** `it` for a test that reads a PDF back with poppler: skipped without it outside CI. */
export const itWithPoppler = it.skipIf(!HAS_POPPLER);

const dir = mkdtempSync(join(tmpdir(), 'stepwire-pdf-'));
let counter = 0;

/** Writes PDF bytes to a temp file and returns its path. */
export function writePdf(bytes: Uint8Array): string {
  const file = join(dir, `doc-${counter++}.pdf`);
  writeFileSync(file, bytes);
  return file;
}

/** `pdftotext -layout` of the whole document, or of pages `first..last`. */
export function pdfText(bytes: Uint8Array, pages?: { first: number; last: number }): string {
  const args = ['-layout', '-enc', 'UTF-8'];
  if (pages) args.push('-f', String(pages.first), '-l', String(pages.last));
  return execFileSync('pdftotext', [...args, writePdf(bytes), '-'], { encoding: 'utf8', timeout: 20_000 });
}

/** `pdfinfo` fields (Pages, Page size, Producer...). */
export function pdfInfo(bytes: Uint8Array): Record<string, string> {
  const out = execFileSync('pdfinfo', [writePdf(bytes)], { encoding: 'utf8', timeout: 20_000 });
  const info: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) info[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return info;
}

/** Lines of text without blank ones, each trimmed and with runs of spaces collapsed. */
export function textLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim().replace(/\s+/g, ' '))
    .filter((line) => line !== '');
}
