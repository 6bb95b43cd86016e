import { z } from 'zod';
import type { Issue } from '../errors/index.js';
import { describeValue, type CheckResult } from './issues.js';
import { setOwn } from './own.js';

/** Configuration of a `string` column of a data table. */
export const StringConfigSchema = z.object({
  /** The text holds JSON. */
  is_json: z.boolean(),
  /** The text is a URL (rendered as a link). */
  is_url: z.boolean(),
});

/** Configuration of a `number` column of a data table. */
export const NumberConfigSchema = z.object({
  /** Render with latin (ASCII) digits. */
  latin_numbering: z.boolean(),
  min: z.number().int().optional(),
  max: z.number().int().optional(),
  step: z.number().optional(),
});

/** Configuration without fields (`boolean`, `date`, `datetime`). */
export const EmptyConfigSchema = z.object({});

/** A column of a data table. */
export const ColumnSchema = z.object({
  name: z.string(),
  type: z.string().optional(),
  string: StringConfigSchema.optional(),
  number: NumberConfigSchema.optional(),
  boolean: EmptyConfigSchema.optional(),
  date: EmptyConfigSchema.optional(),
  datetime: EmptyConfigSchema.optional(),
});

/** A data table: the result of entity reads. Both fields are null when there is no data. */
export const DataTableSchema = z.object({
  columns: z.array(ColumnSchema).nullable(),
  rows: z.array(z.array(z.unknown())).nullable(),
});

/** A column of a data table. */
export type Column = z.infer<typeof ColumnSchema>;
/** A data table: `columns` and `rows` (arrays of cell values in column order). */
export type DataTable = z.infer<typeof DataTableSchema>;
/** `string` column configuration. */
export type StringConfig = z.infer<typeof StringConfigSchema>;
/** `number` column configuration. */
export type NumberConfig = z.infer<typeof NumberConfigSchema>;

/** A column of a data table as rows are given (to write, or to loop over): a name, or an object with a `name`. */
export type TableColumn = string | { readonly name: string };

/** Rows given as a data table: columns as names or `{ name }`, rows as arrays of cells in column order. */
export interface RowsTable {
  columns: readonly TableColumn[];
  rows: readonly (readonly unknown[])[];
}

/** Whether `value` is shaped like a data table: an object (not an array) with `columns` and `rows`. */
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
 * The rows of a data table as objects keyed by column name (a missing cell is `null`), or every issue
 * that makes it no such table, each at `columns[i]` or `rows[i]`: a column that is neither a non-empty
 * name nor an object with one, a name given twice, a row that is no array or has more cells than
 * there are columns. The one way stepwire reads a data table's rows (`for_each`, writes).
 */
export function tableRowObjects(table: {
  columns: unknown;
  rows: unknown;
}): CheckResult<Record<string, unknown>[]> {
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
  const out = new Array<Record<string, unknown>>(rows.length);
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
    if (issues.length > 0) continue;
    const object: Record<string, unknown> = {};
    for (let c = 0; c < m; c++) setOwn(object, names[c]!, (row[c] as unknown) ?? null);
    out[i] = object;
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value: out };
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
