import type { Column, DataTable } from '../schema/data-table.js';
import { cleanText } from './clean-text.js';
import { formatCell, isNumberColumn, safeLink } from './format.js';
import type { Inline, PdfTable, TableBlock, TableCell } from './types.js';

export type { PdfTable } from './types.js';
import type { ValueFormatter } from './value-format.js';

/** Text of a cell: the column's `format` when it applies to the value, else its column config. @internal */
export function cellText(
  value: unknown,
  column: Column | undefined,
  format: ValueFormatter | undefined,
): string {
  if (value === null || value === undefined) return '';
  return format?.format(value) ?? formatCell(value, column);
}

/** Label of the totals row, in the first column that is not summed. */
const TOTAL_LABEL = 'Total';

function textCell(text: string, bold: boolean, link: string | undefined): TableCell {
  if (!/[\t\f\r\n]|^ | $| {2}/.test(text)) {
    return { inlines: text === '' ? [] : [{ kind: 'text', text, bold, italic: false, link }], colspan: 1 };
  }
  const inlines: Inline[] = [];
  text
    .replace(/[\t\f]/g, ' ')
    .split(/\r\n|\r|\n/)
    .forEach((line, i) => {
      if (i > 0) inlines.push({ kind: 'break' });
      if (line !== '') inlines.push({ kind: 'text', text: line, bold, italic: false, link });
    });
  return { inlines, colspan: 1 };
}

/** Number of columns: the declared columns, else the widest row. */
function columnCount(table: DataTable): number {
  if (table.columns && table.columns.length > 0) return table.columns.length;
  let widest = 0;
  for (const row of table.rows ?? []) widest = Math.max(widest, row.length);
  return widest;
}

/**
 * Turns a `TABLE` value into a table block: column names as the header row, cells formatted by their
 * column config (number step, latin digits, dates, `is_url` links). Rows shorter than the columns are
 * padded with empty cells; extra cells are dropped. A table without columns has no header row.
 * @internal
 */
export function dataTableBlock(value: PdfTable): TableBlock {
  const { table, formats, totals } = value;
  const columns: (Column | undefined)[] = table.columns ?? [];
  const count = columnCount(table);
  const header =
    table.columns && table.columns.length > 0
      ? [table.columns.map((c) => textCell(c.name, true, undefined))]
      : [];
  const numeric: (boolean | undefined)[] = [];
  for (let c = 0; c < count; c++)
    numeric.push(isNumberColumn(columns[c]) || formats[c]?.kind === 'number' ? true : undefined);
  const body: TableCell[][] = [];
  for (const row of table.rows ?? []) {
    const cells: TableCell[] = new Array<TableCell>(count);
    for (let c = 0; c < count; c++) {
      const column = columns[c];
      const value = row[c];
      const text = cleanText(cellText(value, column, formats[c]));
      const link = column?.string?.is_url ? safeLink(text) : undefined;
      cells[c] = textCell(text, false, link);
    }
    body.push(cells);
  }
  let totalsRow: TableCell[] | undefined;
  if (totals) {
    totalsRow = [];
    let labelled = false;
    for (let c = 0; c < count; c++) {
      const sum = totals[c];
      let text = '';
      if (sum !== undefined) text = cleanText(cellText(sum, columns[c], formats[c]));
      else if (!labelled) {
        text = TOTAL_LABEL;
        labelled = true;
      }
      totalsRow.push(textCell(text, true, undefined));
    }
  }
  if (header.length === 0 && body.length === 0 && !totalsRow) {
    body.push([
      {
        inlines: [{ kind: 'text', text: '(no data)', bold: false, italic: true, link: undefined }],
        colspan: 1,
      },
    ]);
  }
  const block: TableBlock = { kind: 'table', header, body, numeric };
  if (totalsRow) block.footer = [totalsRow];
  return block;
}

/** Lines of text for a `TABLE` value placed inside a table cell (no nested tables): cells joined by ` | `. @internal */
export function tableAsLines(value: PdfTable): string[] {
  const { table, formats, totals } = value;
  const columns: (Column | undefined)[] = table.columns ?? [];
  const count = columnCount(table);
  const lines: string[] = [];
  if (table.columns && table.columns.length > 0) lines.push(table.columns.map((c) => c.name).join(' | '));
  for (const row of table.rows ?? []) {
    const cells: string[] = [];
    for (let c = 0; c < count; c++) cells.push(cellText(row[c], columns[c], formats[c]));
    lines.push(cells.join(' | '));
  }
  if (totals) {
    const cells: string[] = [];
    for (let c = 0; c < count; c++)
      cells.push(totals[c] === undefined ? '' : cellText(totals[c], columns[c], formats[c]));
    lines.push(`${TOTAL_LABEL}: ${cells.filter((cell) => cell !== '').join(' | ')}`);
  }
  return lines;
}
