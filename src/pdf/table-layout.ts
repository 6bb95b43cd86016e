import type { FaceSet } from './fonts.js';
import { ASCENT, DESCENT, type PageWriter } from './page-writer.js';
import { measureInlines, normalizeInlines, singleLine, wrapInlines, type Line } from './text-layout.js';
import type { Inline, TableBlock, TableCell } from './types.js';

/** Table look: 9 pt text, padded cells, shaded bold header with a rule below, thin row rules. */
const SIZE = 9;
const LINE_HEIGHT = SIZE * 1.3;
const PAD_X = 5;
const PAD_Y = 3.5;
const HEADER_FILL = 0.9;
const RULE_GRAY = 0.8;
const BORDER_GRAY = 0.55;

interface MeasuredCell {
  inlines: readonly Inline[];
  colspan: number;
  natural: number;
  minWord: number;
  hasBreak: boolean;
}

interface RowLayout {
  cells: { lines: Line[]; x: number; width: number; right: boolean }[];
  lineCount: number;
}

const NUMERIC = /^[-+\u2212(]?\s*[^\d\s]{0,3}\s*\d[\d\s.,']*\s*(%|[^\d\s]{0,3})\)?$/u;

/** A cell looks numeric when it holds one number, maybe signed, with currency or `%`. */
function looksNumeric(cell: MeasuredCell): boolean {
  if (cell.inlines.length !== 1) return false;
  const first = cell.inlines[0]!;
  return first.kind === 'text' && /\d/.test(first.text) && NUMERIC.test(first.text.trim());
}

function measureRows(rows: readonly TableCell[][], faces: FaceSet, bold: boolean): MeasuredCell[][] {
  return rows.map((row) =>
    row.map((cell) => {
      const inlines = normalizeInlines(cell.inlines);
      return { inlines, colspan: cell.colspan, ...measureInlines(inlines, faces, SIZE, bold) };
    }),
  );
}

/** Column widths from content: natural widths if they fit, else shrink toward the widest words. */
function columnWidths(
  rows: readonly MeasuredCell[][],
  count: number,
  available: number,
  numeric: readonly boolean[],
): number[] {
  const max = new Array<number>(count).fill(2 * PAD_X + 8);
  const min = new Array<number>(count).fill(2 * PAD_X + 8);
  for (const row of rows) {
    let c = 0;
    for (const cell of row) {
      if (cell.colspan === 1 && c < count) {
        max[c] = Math.max(max[c]!, cell.natural + 2 * PAD_X);
        min[c] = Math.max(min[c]!, cell.minWord + 2 * PAD_X);
      }
      c += cell.colspan;
    }
  }
  // Numbers never wrap: their column asks for its full width before text columns shrink.
  for (let c = 0; c < count; c++) if (numeric[c]) min[c] = max[c]!;
  const sumMax = max.reduce((a, b) => a + b, 0);
  const sumMin = min.reduce((a, b) => a + b, 0);
  if (sumMax <= available) return max.map((w) => w + ((available - sumMax) * w) / sumMax);
  if (sumMin <= available) {
    const share = (available - sumMin) / (sumMax - sumMin);
    return max.map((w, c) => min[c]! + (w - min[c]!) * share);
  }
  return min.map((w) => (available * w) / sumMin);
}

/** A column is right-aligned when declared numeric, or when every filled body cell looks numeric. */
function numericColumns(block: TableBlock, body: readonly MeasuredCell[][], count: number): boolean[] {
  // One pass over the cells (a pass per column would cost columns x cells: 40,000 cells of
  // colspan 64 in one row took minutes).
  const seen = new Array<boolean>(count).fill(false);
  const numeric = new Array<boolean>(count).fill(true);
  for (const row of body) {
    let col = 0;
    for (const cell of row) {
      if (col >= count) break;
      if (cell.colspan === 1 && cell.inlines.length > 0 && block.numeric[col] === undefined && numeric[col]) {
        seen[col] = true;
        if (!looksNumeric(cell)) numeric[col] = false;
      }
      col += cell.colspan;
    }
  }
  return seen.map((filled, c) => block.numeric[c] ?? (filled && numeric[c]!));
}

function layoutRow(
  row: readonly MeasuredCell[],
  faces: FaceSet,
  bold: boolean,
  starts: readonly number[],
  widths: readonly number[],
  numeric: readonly boolean[],
): RowLayout {
  const cells: RowLayout['cells'] = [];
  let lineCount = 1;
  let c = 0;
  for (const cell of row) {
    if (c >= widths.length) break;
    const span = Math.min(cell.colspan, widths.length - c);
    let width = 0;
    for (let k = c; k < c + span; k++) width += widths[k]!;
    const inner = width - 2 * PAD_X;
    const lines =
      !cell.hasBreak && cell.natural <= inner + 0.001
        ? [singleLine(cell.inlines, faces, SIZE, bold)]
        : wrapInlines(cell.inlines, faces, SIZE, bold, inner);
    const right = span === 1 ? numeric[c]! : looksNumeric(cell);
    cells.push({ lines, x: starts[c]!, width, right });
    lineCount = Math.max(lineCount, lines.length);
    c += span;
  }
  return { cells, lineCount };
}

/**
 * Draws a table across pages: header rows repeat at the top of every page, rows never split unless
 * taller than a page, numeric columns align right.
 * @internal
 */
export async function drawTable(block: TableBlock, writer: PageWriter, faces: FaceSet): Promise<void> {
  const header = measureRows(block.header, faces, true);
  const body = measureRows(block.body, faces, false);
  const footer = measureRows(block.footer ?? [], faces, true);
  let count = 0;
  for (const row of [...header, ...body, ...footer])
    count = Math.max(
      count,
      row.reduce((n, cell) => n + cell.colspan, 0),
    );
  if (count === 0) return;
  const left = writer.left;
  const total = writer.width;
  const numeric = numericColumns(block, body, count);
  const widths = columnWidths([...header, ...body, ...footer], count, total, numeric);
  const starts: number[] = [];
  widths.reduce((x, w) => (starts.push(x), x + w), left);
  const headerRows = header.map((row) => layoutRow(row, faces, true, starts, widths, numeric));
  const headerHeight = headerRows.reduce((h, row) => h + row.lineCount * LINE_HEIGHT + 2 * PAD_Y, 0);
  let segmentTop = writer.y;

  const drawRow = (row: RowLayout, from: number, to: number): void => {
    const top = writer.y;
    for (const cell of row.cells) {
      for (let i = from; i < to && i < cell.lines.length; i++) {
        const line = cell.lines[i]!;
        const baseline =
          top -
          PAD_Y -
          (i - from) * LINE_HEIGHT -
          (LINE_HEIGHT - (ASCENT + DESCENT) * SIZE) / 2 -
          ASCENT * SIZE;
        const x = cell.right ? cell.x + cell.width - PAD_X - line.width : cell.x + PAD_X;
        writer.textLine(x, baseline, SIZE, line.segments);
      }
    }
    writer.y = top - (to - from) * LINE_HEIGHT - 2 * PAD_Y;
  };
  const startSegment = (): void => {
    segmentTop = writer.y;
    if (headerRows.length === 0) return;
    writer.fillRect(left, writer.y - headerHeight, total, headerHeight, HEADER_FILL);
    for (const row of headerRows) drawRow(row, 0, row.lineCount);
    writer.line(left, writer.y, left + total, writer.y, 0.8, BORDER_GRAY);
  };
  const endSegment = (): void => {
    writer.line(left, segmentTop, left + total, segmentTop, 0.8, BORDER_GRAY);
    writer.line(left, writer.y, left + total, writer.y, 0.8, BORDER_GRAY);
    writer.line(left, segmentTop, left, writer.y, 0.8, BORDER_GRAY);
    writer.line(left + total, segmentTop, left + total, writer.y, 0.8, BORDER_GRAY);
  };
  const nextPage = async (): Promise<void> => {
    endSegment();
    await writer.newPage();
    startSegment();
  };

  const firstRowHeight = body[0] ? LINE_HEIGHT + 2 * PAD_Y : 0;
  if (!writer.fits(headerHeight + firstRowHeight) && !writer.atTop()) await writer.newPage();
  startSegment();
  let rowsOnPage = 0;
  for (let r = 0; r < body.length; r++) {
    const row = layoutRow(body[r]!, faces, false, starts, widths, numeric);
    let from = 0;
    while (from < row.lineCount) {
      const fitLines = Math.floor((writer.y - writer.bottom - 2 * PAD_Y + 0.01) / LINE_HEIGHT);
      const rest = row.lineCount - from;
      if (fitLines >= rest) {
        drawRow(row, from, row.lineCount);
        break;
      }
      const pageIsFresh = rowsOnPage === 0 && segmentTop >= writer.top - 0.01;
      if (!pageIsFresh) {
        await nextPage();
        rowsOnPage = 0;
        continue;
      }
      // Taller than a page: split between lines (at least one line per page, so this ends).
      const take = Math.max(1, fitLines);
      drawRow(row, from, from + take);
      from += take;
      if (from < row.lineCount) await nextPage();
    }
    rowsOnPage++;
    if (r < body.length - 1) writer.line(left, writer.y, left + total, writer.y, 0.4, RULE_GRAY);
  }
  // Totals: bold, under a darker rule, kept whole (on the next page, under the header, if need be).
  for (const cells of footer) {
    const row = layoutRow(cells, faces, true, starts, widths, numeric);
    const height = row.lineCount * LINE_HEIGHT + 2 * PAD_Y;
    if (!writer.fits(height) && !(rowsOnPage === 0 && segmentTop >= writer.top - 0.01)) await nextPage();
    writer.line(left, writer.y, left + total, writer.y, 0.8, BORDER_GRAY);
    drawRow(row, 0, row.lineCount);
  }
  endSegment();
}
