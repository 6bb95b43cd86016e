import { ValidationError, type Issue } from '../errors/index.js';
import { DataTableSchema, type DataTable } from '../schema/data-table.js';
import { toIssues } from '../schema/issues.js';
import { formatDate, formatNumber, toDate } from './format.js';
import type { PdfVariable } from './types.js';

/** A variable checked against its `value_type`, ready to place. @internal */
export type ResolvedValue = { kind: 'text'; text: string } | { kind: 'table'; table: DataTable };

const VALUE_TYPES = new Set(['NUMBER', 'STRING', 'TABLE', 'BOOLEAN', 'DATE']);

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
        message: `variable "${name}" has value_type ${JSON.stringify(type)}; expected NUMBER, STRING, TABLE, BOOLEAN or DATE`,
      });
      return;
    }
    const result = resolveValue(name, type as PdfVariable['value_type'], value, `${path}.value`, issues);
    if (result) resolved.set(name, result);
  });
  if (issues.length > 0) throw new ValidationError(issues);
  return resolved;
}

function resolveValue(
  name: string,
  type: PdfVariable['value_type'],
  value: unknown,
  path: string,
  issues: Issue[],
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
    return type === 'TABLE'
      ? { kind: 'table', table: { columns: null, rows: null } }
      : { kind: 'text', text: '' };
  }
  switch (type) {
    case 'NUMBER': {
      if (typeof value === 'number' && Number.isFinite(value))
        return { kind: 'text', text: formatNumber(value) };
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
        return { kind: 'text', text: value.trim() };
      }
      return mismatch('a finite number');
    }
    case 'STRING':
      return typeof value === 'string' ? { kind: 'text', text: value } : mismatch('a string');
    case 'BOOLEAN':
      return typeof value === 'boolean'
        ? { kind: 'text', text: value ? 'true' : 'false' }
        : mismatch('true or false');
    case 'DATE': {
      const text = toDate(value) ? formatDate(value) : undefined;
      return text === undefined
        ? mismatch('an ISO 8601 date string, a Date or epoch milliseconds')
        : { kind: 'text', text };
    }
    case 'TABLE':
      return resolveTable(name, value, path, issues);
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
  if (issues.length > before || !parsed.success) return undefined;
  return {
    kind: 'table',
    table: { columns: parsed.data.columns, rows: (rows ?? null) as unknown[][] | null },
  };
}
