import type { Column, DataTable } from '../schema/data-table.js';
import { cleanText } from './clean-text.js';
import { formatCell, isNumberColumn, safeLink } from './format.js';
import type { Inline, TableBlock, TableCell } from './types.js';

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
export function dataTableBlock(table: DataTable): TableBlock {
  const columns: (Column | undefined)[] = table.columns ?? [];
  const count = columnCount(table);
  const header =
    table.columns && table.columns.length > 0
      ? [table.columns.map((c) => textCell(c.name, true, undefined))]
      : [];
  const numeric: (boolean | undefined)[] = [];
  for (let c = 0; c < count; c++) numeric.push(isNumberColumn(columns[c]) ? true : undefined);
  const body: TableCell[][] = [];
  for (const row of table.rows ?? []) {
    const cells: TableCell[] = new Array<TableCell>(count);
    for (let c = 0; c < count; c++) {
      const column = columns[c];
      const value = row[c];
      const text = cleanText(formatCell(value, column));
      const link = column?.string?.is_url ? safeLink(text) : undefined;
      cells[c] = textCell(text, false, link);
    }
    body.push(cells);
  }
  if (header.length === 0 && body.length === 0) {
    body.push([
      {
        inlines: [{ kind: 'text', text: '(no data)', bold: false, italic: true, link: undefined }],
        colspan: 1,
      },
    ]);
  }
  return { kind: 'table', header, body, numeric };
}

/** Lines of text for a `TABLE` value placed inside a table cell (no nested tables): cells joined by ` | `. @internal */
export function tableAsLines(table: DataTable): string[] {
  const columns: (Column | undefined)[] = table.columns ?? [];
  const count = columnCount(table);
  const lines: string[] = [];
  if (table.columns && table.columns.length > 0) lines.push(table.columns.map((c) => c.name).join(' | '));
  for (const row of table.rows ?? []) {
    const cells: string[] = [];
    for (let c = 0; c < count; c++) cells.push(formatCell(row[c], columns[c]));
    lines.push(cells.join(' | '));
  }
  return lines;
}
