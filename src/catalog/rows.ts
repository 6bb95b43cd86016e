import type { Issue } from '../errors/index.js';
import type { Entity, WriteRows } from '../schema/index.js';
import { brokenNumberRule } from '../schema/number-rules.js';
import { setOwn } from '../schema/own.js';
import { coerceCell } from './sheet-mapping.js';

/** Rows to write to one entity: objects keyed by column name, or arrays in column order. */
export type EntityRows = readonly (Readonly<Record<string, unknown>> | readonly unknown[])[];

/** Columns of a data table as given: names, or objects with a `name`. */
type TableColumns = readonly (string | { name: string })[];

/**
 * The rows of a data table as objects keyed by column name (a missing cell is `null`), the way the
 * catalog takes them.
 */
export function tableRowObjects(table: {
  columns: TableColumns;
  rows: readonly (readonly unknown[])[];
}): Record<string, unknown>[] {
  const names = table.columns.map((column) => (typeof column === 'string' ? column : column.name));
  return table.rows.map((row) => {
    const out: Record<string, unknown> = {};
    names.forEach((name, i) => setOwn(out, name, row[i] ?? null));
    return out;
  });
}

/** Rows to write as the catalog takes them: a data table becomes objects, arrays stay as they are. */
export function entityRowsOf(rows: WriteRows): EntityRows {
  return Array.isArray(rows) ? rows : tableRowObjects(rows);
}

/** A written row, coerced: values in column order, and which columns the caller gave. @internal */
export interface CoercedRow {
  values: unknown[];
  /** `given[c]` is false for a column an object row left out (a patch keeps that cell). */
  given: boolean[];
}

/**
 * Checks and coerces rows to the entity's column types, in column order. A row with a problem is
 * `undefined` in the result and its problems are added to `issues`, each naming the row.
 * @internal
 */
export function coerceRows(entity: Entity, rows: EntityRows, issues: Issue[]): (unknown[] | undefined)[] {
  return rows.map((input, i) => {
    const row = coerceRow(entity, input, i, issues, false);
    if (row && row.values.every((v) => v === null)) {
      issues.push({
        code: 'empty_row',
        path: `${entity.name}[${i}]`,
        message: `row ${i + 1} of "${entity.name}" is empty; an empty row would end the table in the sheet`,
      });
      return undefined;
    }
    return row?.values;
  });
}

/**
 * Checks and coerces rows that change rows by key (upsert, update): an object row may leave out
 * columns, which then keep their cells; every primary-key column must be given and not empty.
 * @internal
 */
export function coercePatches(entity: Entity, rows: EntityRows, issues: Issue[]): (CoercedRow | undefined)[] {
  return rows.map((input, i) => {
    const row = coerceRow(entity, input, i, issues, true);
    return row && keyGiven(entity, row, i, issues) ? row : undefined;
  });
}

/**
 * Checks and coerces keys (delete): objects holding every primary-key column; other columns of the
 * entity are ignored, so whole rows read from the entity serve as keys too.
 * @internal
 */
export function coerceKeys(entity: Entity, keys: EntityRows, issues: Issue[]): (unknown[] | undefined)[] {
  const keyNames = new Set(entity.primary_key);
  return keys.map((input, i) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      issues.push({
        code: 'row_shape',
        path: `${entity.name}[${i}]`,
        message: `key ${i + 1} of "${entity.name}" must be an object of the primary-key columns (${entity.primary_key.join(', ')})`,
      });
      return undefined;
    }
    const record = input as Record<string, unknown>;
    const columns = new Set(entity.columns.map((c) => c.name));
    // Unknown names stay in, so coerceRow reports them; other columns of the entity are dropped.
    const key = Object.fromEntries(
      Object.entries(record).filter(([name]) => keyNames.has(name) || !columns.has(name)),
    );
    const row = coerceRow(entity, key, i, issues, true);
    return row && keyGiven(entity, row, i, issues) ? row.values : undefined;
  });
}

function coerceRow(
  entity: Entity,
  input: Readonly<Record<string, unknown>> | readonly unknown[],
  i: number,
  issues: Issue[],
  partial: boolean,
): CoercedRow | undefined {
  const names = entity.columns.map((c) => c.name);
  const label = `row ${i + 1} of "${entity.name}"`;
  let values: readonly unknown[];
  let given: boolean[];
  if (Array.isArray(input)) {
    if (input.length !== names.length) {
      issues.push({
        code: 'row_shape',
        path: `${entity.name}[${i}]`,
        message: `${label} has ${input.length} values but the entity has ${names.length} columns (${names.join(', ')})`,
      });
      return undefined;
    }
    values = input;
    given = names.map(() => true);
  } else if (typeof input === 'object' && input !== null) {
    const record = input as Record<string, unknown>;
    const unknown = Object.keys(record).filter((k) => !names.includes(k));
    if (unknown.length > 0) {
      issues.push({
        code: 'unknown_column',
        path: `${entity.name}[${i}]`,
        message: `${label} has ${unknown.map((k) => `"${k}"`).join(', ')}, not ${unknown.length === 1 ? 'a column' : 'columns'} of the entity (columns: ${names.join(', ')})`,
      });
      return undefined;
    }
    given = names.map((n) => !partial || (Object.hasOwn(record, n) && record[n] !== undefined));
    values = names.map((n) => (Object.hasOwn(record, n) ? record[n] : null));
  } else {
    issues.push({
      code: 'row_shape',
      path: `${entity.name}[${i}]`,
      message: `${label} must be an object keyed by column name or an array of values`,
    });
    return undefined;
  }
  const out: unknown[] = [];
  let bad = false;
  entity.columns.forEach((column, c) => {
    const raw = values[c] === undefined ? null : values[c];
    const result = coerceCell(column.type, raw);
    if (!result.ok) {
      bad = true;
      issues.push({
        code: 'invalid_type',
        path: `${entity.name}[${i}].${column.name}`,
        message: `${label}: column "${column.name}" must be ${column.type}, got ${JSON.stringify(values[c])}`,
      });
      return;
    }
    const broken =
      column.number && typeof result.value === 'number'
        ? brokenNumberRule(result.value, column.number)
        : undefined;
    if (broken && given[c]) {
      bad = true;
      issues.push({
        code: broken.code,
        path: `${entity.name}[${i}].${column.name}`,
        message: `${label}: column "${column.name}" ${broken.rule}, got ${result.value}`,
      });
    }
    out.push(result.value);
  });
  return bad ? undefined : { values: out, given };
}

/** True when every primary-key column is given and not empty; else adds the issue. */
function keyGiven(entity: Entity, row: CoercedRow, i: number, issues: Issue[]): boolean {
  const missing = entity.primary_key.filter((name) => {
    const c = entity.columns.findIndex((column) => column.name === name);
    return !row.given[c] || row.values[c] === null;
  });
  if (missing.length === 0) return true;
  issues.push({
    code: 'null_key',
    path: `${entity.name}[${i}]`,
    message: `row ${i + 1} of "${entity.name}" has no value for primary key ${missing.length === 1 ? 'column' : 'columns'} ${missing.map((n) => `"${n}"`).join(', ')}`,
  });
  return false;
}

/** A comparable key of the values of `columns` in a row. @internal */
export function keyOf(row: readonly unknown[], columns: readonly number[]): string {
  return JSON.stringify(columns.map((c) => row[c] ?? null));
}

/** `(a=1, b="x")` for messages. @internal */
export function describeKey(
  names: readonly string[],
  columns: readonly number[],
  row: readonly unknown[],
): string {
  return `(${names.map((n, i) => `${n}=${JSON.stringify(row[columns[i]!] ?? null)}`).join(', ')})`;
}
