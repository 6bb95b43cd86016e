import type { Issue } from '../errors/index.js';
import type { Entity } from '../schema/index.js';
import { coerceCell } from './sheet-mapping.js';

/** Rows to write to one entity: objects keyed by column name, or arrays in column order. */
export type EntityRows = readonly (Readonly<Record<string, unknown>> | readonly unknown[])[];

/**
 * Checks and coerces rows to the entity's column types, in column order. A row with a problem is
 * `undefined` in the result and its problems are added to `issues`, each naming the row.
 * @internal
 */
export function coerceRows(entity: Entity, rows: EntityRows, issues: Issue[]): (unknown[] | undefined)[] {
  const names = entity.columns.map((c) => c.name);
  return rows.map((input, i) => {
    const label = `row ${i + 1} of "${entity.name}"`;
    let values: readonly unknown[];
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
      values = names.map((n) => (Object.prototype.hasOwnProperty.call(record, n) ? record[n] : null));
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
      const result = coerceCell(column.type, values[c] === undefined ? null : values[c]);
      if (result.ok) out.push(result.value);
      else {
        bad = true;
        issues.push({
          code: 'invalid_type',
          path: `${entity.name}[${i}].${column.name}`,
          message: `${label}: column "${column.name}" must be ${column.type}, got ${JSON.stringify(values[c])}`,
        });
      }
    });
    if (bad) return undefined;
    if (out.every((v) => v === null)) {
      issues.push({
        code: 'empty_row',
        path: `${entity.name}[${i}]`,
        message: `${label} is empty; an empty row would end the table in the sheet`,
      });
      return undefined;
    }
    return out;
  });
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
