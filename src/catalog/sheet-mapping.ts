/**
 * Reading an entity's sheet into an {@link EntityTable}: the header row names the columns,
 * data rows follow it and end at the first row whose entity columns are all empty, and every cell is
 * coerced to its column's type.
 * @module
 */
import type { CellRows, CellValue } from '../adapters/types.js';
import { SheetError } from '../errors/index.js';
import type { ColumnType, Entity } from '../schema/entity.js';
import { BOOLEAN_NULL, createTable, type EntityTable } from '../query/entity-table.js';
import { coerceCell } from '../query/coerce.js';
import { sheetCell, toA1, toA1Range } from './a1.js';
import { listNames, quoteName } from '../schema/issues.js';

export { columnLetters, toA1, toA1Range, sheetCell } from './a1.js';
export { coerceCell, cellFromValue, isEmptyCell, type Coerced } from '../query/coerce.js';
export {
  appendRows,
  tableRow,
  BOOLEAN_NULL,
  type EntityTable,
  type ColumnData,
} from '../query/entity-table.js';

/**
 * The column name a header cell gives: its text trimmed, or the text a number or boolean cell shows
 * (`2024`, `TRUE`), as a `STRING` column reads it; `undefined` for an empty cell.
 */
function headerName(cell: CellValue | undefined): string | undefined {
  const text = coerceCell('STRING', cell);
  return text.ok && typeof text.value === 'string' ? text.value.trim() : undefined;
}

/**
 * Where each entity column sits in the header row: `indexes[c]` is the position (relative to the
 * origin column) of entity column `c`. Header cells match a column when their text, trimmed, equals
 * the column name exactly (case-sensitive; both in Unicode NFC). Headers of no entity column are ignored.
 * @throws {@link SheetError} `missing_column` naming the header range and the missing columns, or
 * `duplicate_column` naming the second cell that repeats a column's name.
 */
export function headerIndexes(entity: Entity, header: readonly CellValue[]): number[] {
  const config = entity.spreadsheet_config;
  const where = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
  const { row, col } = config.origin;
  // Names compare in Unicode NFC: `Café` typed with a combining accent is the same name.
  const byName = new Map<string, number>(
    entity.columns.map((column, c) => [column.name.normalize('NFC'), c]),
  );
  const indexes = new Array<number>(entity.columns.length).fill(-1);
  for (let h = 0; h < header.length; h++) {
    const name = headerName(header[h]);
    if (name === undefined) continue;
    const c = byName.get(name.normalize('NFC'));
    if (c === undefined) continue;
    if (indexes[c] !== -1) {
      const first = toA1(row, col + indexes[c]!);
      const cellName = toA1(row, col + h);
      throw new SheetError(
        `The header row of entity "${entity.name}" names column "${name}" twice: ${sheetCell(config.sheet_name, first)} and ${sheetCell(config.sheet_name, cellName)}; each column must appear once`,
        { ...where, cell: cellName },
        { code: 'duplicate_column' },
      );
    }
    indexes[c] = h;
  }
  const missing = entity.columns.filter((_, c) => indexes[c] === -1).map((column) => `"${column.name}"`);
  if (missing.length > 0) {
    const range = toA1Range(row, col, row, col + Math.max(header.length, 1) - 1);
    const found = header
      .map(headerName)
      .filter((name) => name !== undefined && name !== '')
      .map((name) => quoteName(name!));
    throw new SheetError(
      `The header row ${sheetCell(config.sheet_name, range)} of entity "${entity.name}" is missing ${missing.length === 1 ? 'column' : 'columns'} ${missing.join(', ')} (found: ${found.length > 0 ? listNames(found) : 'no headers'})`,
      { ...where, range },
      { code: 'missing_column' },
    );
  }
  return indexes;
}

/**
 * The first row of `[from, to)` whose entity cells are all empty (it ends the data), else `to`.
 * Rows count from the first data row (row 0 is `cells[1]`).
 */
function blankRow(cells: CellRows, indexes: readonly number[], from: number, to: number): number {
  for (let r = from; r < to; r++) {
    const line = cells[r + 1];
    if (line === undefined) return r;
    let empty = true;
    for (let c = 0; c < indexes.length; c++) {
      const value = line[indexes[c]!];
      if (
        value !== null &&
        value !== undefined &&
        value !== '' &&
        !(typeof value === 'string' && value.trim() === '')
      ) {
        empty = false;
        break;
      }
    }
    if (empty) return r;
  }
  return to;
}

/**
 * Maps the rows read from an entity's origin (row 0 is the header row, cell 0 is at the origin column)
 * to a columnar table, coercing each cell by its column type (see `coerceCell`).
 * @throws {@link SheetError} for a missing or repeated header column, or a cell that cannot be read as
 * its column's type (code `invalid_cell`, `location.cell` in A1 notation; the top-most such cell).
 */
export function mapSheet(entity: Entity, cells: CellRows): EntityTable {
  const indexes = headerIndexes(entity, cells[0] ?? []);
  const capacity = Math.max(cells.length - 1, 0);
  const { data } = createTable(entity.columns, capacity);
  let length = capacity;
  let failure: { row: number; c: number } | undefined;
  // Block by block: the block's end of data found, then every column of it in turn, so each row's
  // cells are read while they are at hand.
  for (let from = 0; from < length && !failure; from += BLOCK_ROWS) {
    let to = blankRow(cells, indexes, from, Math.min(from + BLOCK_ROWS, length));
    if (to < from + BLOCK_ROWS) length = to;
    for (let c = 0; c < entity.columns.length; c++) {
      const h = indexes[c]!;
      const column = data[c]!;
      const bad =
        column instanceof Float64Array
          ? fillNumbers(column, cells, h, from, to)
          : column instanceof Uint8Array
            ? fillBooleans(column, cells, h, from, to)
            : fillTexts(column, cells, h, from, to, entity.columns[c]!.type);
      if (bad >= 0) {
        failure = { row: bad, c };
        to = bad; // later columns need only be checked above this row
      }
    }
  }
  if (failure)
    throw cellError(entity, indexes, failure.row, failure.c, cells[failure.row + 1]![indexes[failure.c]!]);
  return { columns: entity.columns, length, data, buffers: { filled: length } };
}

/** Rows mapped at a time, column by column. */
const BLOCK_ROWS = 2048;

// One loop per column encoding, each with a fast path for the usual cell; the first row that cannot
// be coerced is returned (-1 when none).

function fillNumbers(data: Float64Array, cells: CellRows, h: number, from: number, to: number): number {
  for (let r = from; r < to; r++) {
    const value = cells[r + 1]![h];
    if (typeof value === 'number' && value - value === 0) {
      data[r] = value;
      continue;
    }
    const result = coerceCell('NUMBER', value);
    if (!result.ok) return r;
    data[r] = result.value === null ? NaN : (result.value as number);
  }
  return -1;
}

function fillBooleans(data: Uint8Array, cells: CellRows, h: number, from: number, to: number): number {
  for (let r = from; r < to; r++) {
    const value = cells[r + 1]![h];
    if (typeof value === 'boolean') {
      data[r] = value ? 1 : 0;
      continue;
    }
    const result = coerceCell('BOOLEAN', value);
    if (!result.ok) return r;
    data[r] = result.value === null ? BOOLEAN_NULL : result.value ? 1 : 0;
  }
  return -1;
}

function fillTexts(
  data: (string | null)[],
  cells: CellRows,
  h: number,
  from: number,
  to: number,
  type: ColumnType,
): number {
  const plain = type === 'STRING';
  for (let r = from; r < to; r++) {
    const value = cells[r + 1]![h];
    if (value === null || value === undefined) {
      data[r] = null;
      continue;
    }
    if (plain && typeof value === 'string' && visibleAscii(value.charCodeAt(0))) {
      data[r] = value;
      continue;
    }
    const result = coerceCell(type, value);
    if (!result.ok) return r;
    data[r] = result.value as string | null;
  }
  return -1;
}
/** A printable ASCII character: a string starting with one is never blank. */
function visibleAscii(code: number): boolean {
  return code > 32 && code < 127;
}

function cellError(
  entity: Entity,
  indexes: readonly number[],
  r: number,
  c: number,
  value: CellValue | undefined,
): SheetError {
  const config = entity.spreadsheet_config;
  const column = entity.columns[c]!;
  const cell = toA1(config.origin.row + 1 + r, config.origin.col + indexes[c]!);
  const shown =
    typeof value === 'string'
      ? JSON.stringify(value.length > 60 ? value.slice(0, 60) + '…' : value)
      : String(value);
  return new SheetError(
    `Cell ${sheetCell(config.sheet_name, cell)} of entity "${entity.name}" holds ${shown}, which is not a valid ${column.type} for column "${column.name}"${HINTS[column.type]}`,
    { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name, cell },
    { code: 'invalid_cell' },
  );
}

const HINTS: Record<string, string> = {
  NUMBER: ' (expected a number or plain decimal text such as "12", "-3.5", "1e3")',
  STRING: '',
  BOOLEAN: ' (expected TRUE or FALSE)',
  DATE: ' (expected YYYY-MM-DD or a date cell)',
  DATETIME: ' (expected ISO 8601 such as 2024-05-01T13:45:00Z, or a date-time cell)',
};
