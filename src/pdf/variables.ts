import { ValidationError, type Issue } from '../errors/index.js';
import { DataTableSchema } from '../schema/data-table.js';
import { toIssues } from '../schema/issues.js';
import { formatDate, formatNumber, toDate } from './format.js';
import { cellText, type PdfTable } from './table-value.js';
import type { PdfVariable } from './types.js';
import { decimalSum, makeFormatter, type ValueFormatter } from './value-format.js';

/**
 * A variable checked against its `value_type`, ready to place: `text` or `table` where a marker
 * stands alone, and `view`, what template sections and names see (strings, booleans, row objects).
 * @internal
 */
export type ResolvedValue =
  | { kind: 'text'; text: string; view: unknown }
  | { kind: 'table'; table: PdfTable; view: unknown }
  | { kind: 'data'; view: unknown };

/** Marks the view of a `TABLE` (an array of row objects) with the table it came from. @internal */
export const TABLE_VIEW = Symbol('stepwire.pdf.table');

const VALUE_TYPES = new Set(['NUMBER', 'STRING', 'TABLE', 'BOOLEAN', 'DATE', 'LIST', 'OBJECT']);
/** How deep a `LIST` or `OBJECT` value may nest. */
const MAX_VIEW_DEPTH = 32;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a Date';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Checks every variable (name, value_type, value) and returns them by name.
 * @throws ValidationError listing every problem, each naming the variable.
 * @internal
 */
export function resolveVariables(variables: unknown): Map<string, ResolvedValue> {
  const resolved = new Map<string, ResolvedValue>();
  if (variables === undefined || variables === null) return resolved;
  if (!Array.isArray(variables)) {
    throw new ValidationError([
      {
        code: 'invalid_type',
        path: 'variables',
        message: 'variables must be an array of {name, value_type, value}',
      },
    ]);
  }
  const issues: Issue[] = [];
  variables.forEach((variable: unknown, index) => {
    const path = `variables[${index}]`;
    if (typeof variable !== 'object' || variable === null) {
      issues.push({
        code: 'invalid_type',
        path,
        message: 'a variable must be an object {name, value_type, value}',
      });
      return;
    }
    const { name, value_type: type, value } = variable as Partial<PdfVariable>;
    if (typeof name !== 'string' || name === '') {
      issues.push({
        code: 'invalid_type',
        path: `${path}.name`,
        message: 'a variable needs a non-empty string name',
      });
      return;
    }
    if (resolved.has(name)) {
      issues.push({
        code: 'duplicate_variable',
        path: `${path}.name`,
        message: `variable "${name}" is given twice`,
      });
      return;
    }
    if (typeof type !== 'string' || !VALUE_TYPES.has(type)) {
      issues.push({
        code: 'invalid_value',
        path: `${path}.value_type`,
        message: `variable "${name}" has value_type ${JSON.stringify(type)}; expected NUMBER, STRING, TABLE, BOOLEAN, DATE, LIST or OBJECT`,
      });
      return;
    }
    const { format, totals } = variable as Partial<PdfVariable>;
    const formatter =
      type === 'NUMBER' || type === 'DATE'
        ? makeFormatter(
            format,
            type === 'NUMBER' ? 'number' : 'date',
            `${path}.format`,
            issues,
            `variable "${name}"`,
          )
        : undefined;
    if (totals !== undefined && type !== 'TABLE')
      issues.push({
        code: 'invalid_value',
        path: `${path}.totals`,
        message: `variable "${name}": totals is only for TABLE variables`,
      });
    const result = resolveValue(
      name,
      type as PdfVariable['value_type'],
      value,
      `${path}.value`,
      issues,
      formatter,
      totals,
      path,
      type === 'TABLE' ? format : undefined,
    );
    if (result) resolved.set(name, result);
  });
  if (issues.length > 0) throw new ValidationError(issues);
  return resolved;
}

function text(value: string, view: unknown = value): ResolvedValue {
  return { kind: 'text', text: value, view };
}

function resolveValue(
  name: string,
  type: PdfVariable['value_type'],
  value: unknown,
  path: string,
  issues: Issue[],
  formatter: ValueFormatter | undefined,
  totals: unknown,
  variablePath: string,
  columnFormats: unknown,
): ResolvedValue | undefined {
  const mismatch = (expected: string): undefined => {
    issues.push({
      code: 'invalid_type',
      path,
      message: `variable "${name}" is ${type} but its value is ${describe(value)}; expected ${expected}`,
    });
    return undefined;
  };
  if (value === null || value === undefined) {
    if (type === 'TABLE') value = { columns: null, rows: null };
    else return type === 'LIST' ? { kind: 'data', view: [] } : text('', null);
  }
  switch (type) {
    case 'NUMBER': {
      let plain: string | undefined;
      if (typeof value === 'number' && Number.isFinite(value)) plain = formatNumber(value);
      else if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
        plain = value.trim();
      else return mismatch('a finite number');
      return text(formatter?.format(plain) ?? plain);
    }
    case 'STRING':
      return typeof value === 'string' ? text(value) : mismatch('a string');
    case 'BOOLEAN':
      return typeof value === 'boolean' ? text(value ? 'true' : 'false', value) : mismatch('true or false');
    case 'DATE': {
      const plain = toDate(value) ? formatDate(value) : undefined;
      if (plain === undefined) return mismatch('an ISO 8601 date string, a Date or epoch milliseconds');
      return text(formatter?.format(value) ?? plain);
    }
    case 'LIST':
      return Array.isArray(value) ? data(name, value, path, issues) : mismatch('an array');
    case 'OBJECT':
      return typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
        ? data(name, value, path, issues)
        : mismatch('an object');
    case 'TABLE':
      return resolveTable(name, value, path, issues, totals, variablePath, columnFormats);
  }
}

/**
 * What templates see of a `LIST` or `OBJECT`: a copy whose objects have no prototype (so a name such
 * as `constructor` finds nothing) and whose numbers are text (printed as given).
 */
function data(name: string, value: unknown, path: string, issues: Issue[]): ResolvedValue | undefined {
  const convert = (item: unknown, depth: number): unknown => {
    if (depth > MAX_VIEW_DEPTH) throw new RangeError('too deep');
    if (typeof item === 'number') return formatNumber(item);
    if (item === null || typeof item !== 'object') return item;
    if (item instanceof Date) return formatDate(item);
    if (Array.isArray(item)) return item.map((entry) => convert(entry, depth + 1));
    const out = Object.create(null) as Record<string, unknown>;
    for (const [key, entry] of Object.entries(item)) out[key] = convert(entry, depth + 1);
    return out;
  };
  try {
    return { kind: 'data', view: convert(value, 0) };
  } catch {
    issues.push({
      code: 'too_deep',
      path,
      message: `variable "${name}" nests more than ${MAX_VIEW_DEPTH} levels deep`,
    });
    return undefined;
  }
}

/**
 * Checks a data table: the columns with the schema, the rows by hand so a large table is neither
 * copied nor walked twice.
 */
function resolveTable(
  name: string,
  value: unknown,
  path: string,
  issues: Issue[],
  totals: unknown,
  variablePath: string,
  columnFormats: unknown,
): ResolvedValue | undefined {
  const before = issues.length;
  const add = (at: string, code: string, message: string): void => {
    issues.push({
      code,
      path: at === '' ? path : `${path}${at.startsWith('[') ? '' : '.'}${at}`,
      message: `variable "${name}" is TABLE: ${message}`,
    });
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    add('', 'invalid_type', `its value is ${describe(value)}; expected a data table {columns, rows}`);
    return undefined;
  }
  const { columns, rows } = value as { columns?: unknown; rows?: unknown };
  const parsed = DataTableSchema.safeParse({ columns, rows: [] });
  if (!parsed.success)
    for (const issue of parsed.error.issues)
      for (const converted of toIssues(issue, { columns, rows: [] }))
        add(converted.path, converted.code, converted.message);
  if (rows !== null && !Array.isArray(rows))
    add('rows', 'invalid_type', 'rows must be an array of rows or null');
  else if (rows) {
    for (let r = 0; r < rows.length; r++) {
      if (!Array.isArray(rows[r])) {
        add(`rows[${r}]`, 'invalid_type', `row ${r} must be an array of cell values`);
        if (issues.length - before >= 20) break;
      }
    }
  }
  const names = parsed.success ? (parsed.data.columns ?? []).map((column) => column.name) : [];
  // The variable's `format`: formats by column name, for a table that comes from a read.
  const byName = new Map<string, unknown>();
  if (columnFormats !== undefined && columnFormats !== null) {
    if (typeof columnFormats !== 'object' || Array.isArray(columnFormats))
      issues.push({
        code: 'invalid_type',
        path: `${variablePath}.format`,
        message: `variable "${name}" is TABLE: its format is an object of formats by column name`,
      });
    else
      for (const [column, given] of Object.entries(columnFormats)) {
        if (!names.includes(column))
          issues.push({
            code: 'unknown_column',
            path: `${variablePath}.format.${column}`,
            message: `variable "${name}": format names column "${column}", which the table does not have (columns: ${names.join(', ') || 'none'})`,
          });
        byName.set(column, given);
      }
  }
  // A column's `format` (the column schema keeps only the fields it knows); the variable's wins.
  const formats: (ValueFormatter | undefined)[] = [];
  if (Array.isArray(columns))
    columns.forEach((column: unknown, c) => {
      const own = byName.get(names[c] ?? '');
      const given = own ?? (column as { format?: unknown } | null)?.format;
      const type = String((column as { type?: unknown } | null)?.type ?? '').toLowerCase();
      const kind = type === 'date' || type === 'datetime' ? 'date' : type === 'number' ? 'number' : 'auto';
      const at = own === undefined ? `${path}.columns[${c}].format` : `${variablePath}.format.${names[c]}`;
      formats[c] = makeFormatter(given, kind, at, issues, `variable "${name}"`);
    });
  let sums: (string | undefined)[] | undefined;
  if (totals !== undefined) {
    if (!Array.isArray(totals) || totals.some((column) => typeof column !== 'string'))
      add('', 'invalid_type', 'totals must be an array of column names');
    else {
      sums = [];
      for (const column of totals as string[]) {
        const index = names.indexOf(column);
        if (index < 0) {
          issues.push({
            code: 'unknown_column',
            path: `${variablePath}.totals`,
            message: `variable "${name}": totals names column "${column}", which the table does not have (columns: ${names.join(', ') || 'none'})`,
          });
          continue;
        }
        sums[index] = decimalSum(((rows ?? []) as unknown[][]).map((row) => row?.[index]));
      }
    }
  }
  if (issues.length > before || !parsed.success) return undefined;
  const table: PdfTable = {
    table: { columns: parsed.data.columns, rows: (rows ?? null) as unknown[][] | null },
    formats,
    totals: sums,
  };
  // The row objects are made only when a template section reads them (a table placed whole never is).
  let view: unknown[] | undefined;
  return {
    kind: 'table',
    table,
    // Made once a document, not per call: its lazy getter costs nothing worth a class.
    // eslint-disable-next-line no-restricted-syntax
    get view(): unknown[] {
      return (view ??= tableView(table));
    },
  };
}

/** Rows as objects keyed by column name (cells as printed), with `totals` by column name. */
function tableView(value: PdfTable): unknown[] {
  const columns = value.table.columns ?? [];
  const view = (value.table.rows ?? []).map((row) => {
    const out = Object.create(null) as Record<string, unknown>;
    columns.forEach((column, c) => {
      const cell = row[c];
      out[column.name] =
        cell === null || cell === undefined ? null : cellText(cell, column, value.formats[c]);
    });
    return out;
  }) as unknown[] & { totals?: Record<string, string>; [TABLE_VIEW]?: PdfTable };
  const totals = Object.create(null) as Record<string, string>;
  columns.forEach((column, c) => {
    const sum = value.totals?.[c];
    if (sum !== undefined) totals[column.name] = cellText(sum, column, value.formats[c]);
  });
  view.totals = totals;
  view[TABLE_VIEW] = value;
  return view;
}
