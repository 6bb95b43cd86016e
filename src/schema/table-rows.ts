/**
 * Rows of a data table as objects by column name, checked: the one conversion `for_each` and every
 * catalog write use.
 * @internal
 * @module
 */
import type { Issue } from '../errors/index.js';
import { describeValue, type CheckResult } from './issues.js';
import { setOwn } from './own.js';

/** Whether `value` is shaped like a data table: an object (not an array) with `columns` and `rows`. @internal */
export function isTableLike(value: unknown): value is { columns: unknown; rows: unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    'columns' in value &&
    'rows' in value
  );
}

/**
 * The column names of a data table whose rows are handed on as they are (a transform's input), or
 * every issue that makes it no such table, as {@link tableRowObjects} finds them.
 * @internal
 */
export function tableShape(table: { columns: unknown; rows: unknown }): CheckResult<string[]> {
  return tableCheck(table, false) as CheckResult<string[]>;
}

/**
 * The rows of a data table as objects keyed by column name (a missing cell is `null`), or every issue
 * that makes it no such table, each at `columns[i]` or `rows[i]`: a column that is neither a non-empty
 * name nor an object with one, a name given twice, a row that is no array or has more cells than
 * there are columns. The one way stepwire reads a data table's rows (`for_each`, writes, transforms).
 * @internal
 */
export function tableRowObjects(table: {
  columns: unknown;
  rows: unknown;
}): CheckResult<Record<string, unknown>[]> {
  return tableCheck(table, true) as CheckResult<Record<string, unknown>[]>;
}

/** Checks a data table in one pass over its rows; with `objects`, makes its row objects as it goes. */
function tableCheck(
  table: { columns: unknown; rows: unknown },
  objects: boolean,
): CheckResult<Record<string, unknown>[] | string[]> {
  const { columns, rows } = table;
  const issues: Issue[] = [];
  if (!Array.isArray(columns))
    issues.push({
      code: 'invalid_type',
      path: 'columns',
      message: `columns must be an array, got ${describeValue(columns)}`,
    });
  if (!Array.isArray(rows))
    issues.push({
      code: 'invalid_type',
      path: 'rows',
      message: `rows must be an array of rows, got ${describeValue(rows)}`,
    });
  if (!Array.isArray(columns) || !Array.isArray(rows)) return { ok: false, issues };
  const names = columnNames(columns, issues);
  const m = names.length;
  const out = objects ? new Array<Record<string, unknown>>(rows.length) : [];
  for (let i = 0; i < rows.length; i++) {
    const row: unknown = rows[i];
    if (!Array.isArray(row)) {
      issues.push({
        code: 'row_shape',
        path: `rows[${i}]`,
        message: `a row of a data table must be an array of cells in column order, got ${describeValue(row)}`,
      });
      continue;
    }
    if (row.length > m) {
      issues.push({
        code: 'row_shape',
        path: `rows[${i}]`,
        message: `the row has ${row.length} cells but the table has ${m} columns`,
      });
      continue;
    }
    if (!objects || issues.length > 0) continue;
    const object: Record<string, unknown> = {};
    for (let c = 0; c < m; c++) setOwn(object, names[c]!, (row[c] as unknown) ?? null);
    out[i] = object;
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: objects ? out : names };
}

/** The names of a table's columns; a column that has none, or repeats one, adds an issue. */
function columnNames(columns: readonly unknown[], issues: Issue[]): string[] {
  const names: string[] = [];
  const seen = new Map<string, number>();
  columns.forEach((column: unknown, c) => {
    const name =
      typeof column === 'string'
        ? column
        : typeof column === 'object' && column !== null && !Array.isArray(column)
          ? (column as { name?: unknown }).name
          : undefined;
    if (typeof name !== 'string' || name === '') {
      issues.push({
        code: 'invalid_column',
        path: `columns[${c}]`,
        message: `a column must be a non-empty name or an object with one in "name", got ${describeValue(column)}`,
      });
      names.push('');
      return;
    }
    const first = seen.get(name);
    if (first !== undefined)
      issues.push({
        code: 'repeated_column',
        path: `columns[${c}]`,
        message: `the column "${name}" is given twice (columns[${first}] and columns[${c}])`,
      });
    else seen.set(name, c);
    names.push(name);
  });
  return names;
}
