import { WriteRejectedError, issuesUnder, type Issue } from '../errors/index.js';
import type { CheckResult, Entity, RowsTable } from '../schema/index.js';
import { isTableLike, tableRowObjects } from '../schema/table-rows.js';
import { describeValue, listNames, quoteName } from '../schema/issues.js';
import { brokenNumberRule } from '../schema/number-rules.js';
import { coerceCell } from './sheet-mapping.js';
import { computedColumnsOf } from '../computed/columns.js';

/** Rows to write to one entity: objects keyed by column name, or arrays in column order. */
export type EntityRows = readonly (Readonly<Record<string, unknown>> | readonly unknown[])[];

/**
 * Rows to write as a caller gives them: objects keyed by column name, arrays in column order, or a
 * data table `{ columns, rows }` (a column is a name or `{ name }`), e.g. the `table` of an entity read.
 */
export type WritableRows = EntityRows | RowsTable;

/**
 * Rows to write as the catalog takes them: an array stays as it is, a data table becomes objects by
 * column name. Anything else, or a table with a bad column or row, throws a
 * {@link WriteRejectedError} (`write_rejected`) whose issues are at `path` (the argument's name).
 */
export function entityRowsOf(rows: unknown, path = 'rows'): EntityRows {
  const taken = rowsOf(rows, path);
  if (taken.ok) return taken.value;
  throw new WriteRejectedError(taken.issues);
}

/** {@link entityRowsOf} without the throw: the rows, or every issue. @internal */
export function rowsOf(rows: unknown, path: string): CheckResult<EntityRows> {
  if (Array.isArray(rows)) return { ok: true, value: rows as EntityRows };
  if (isTableLike(rows)) {
    const table = tableRowObjects(rows);
    return table.ok ? table : { ok: false, issues: issuesUnder(table.issues, path) };
  }
  return {
    ok: false,
    issues: [
      {
        code: 'invalid_type',
        path,
        message: `${path} must be an array of rows (objects keyed by column name, or arrays in column order) or a data table { columns, rows }, got ${describeValue(rows)}`,
      },
    ],
  };
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
  const check = rowChecker(entity);
  const out = new Array<unknown[] | undefined>(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = check.row(rows[i], i, issues);
  return out;
}

/**
 * Checks and coerces rows that change rows by key (upsert, update): an object row may leave out
 * columns, which then keep their cells; every primary-key column must be given and not empty.
 * @internal
 */
export function coercePatches(entity: Entity, rows: EntityRows, issues: Issue[]): (CoercedRow | undefined)[] {
  const check = rowChecker(entity);
  return rows.map((input, i) => {
    const row = check.coerce(input, i, issues, true);
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
  const columns = new Set(entity.columns.map((c) => c.name));
  const check = rowChecker(entity);
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
    // Unknown names stay in, so the check reports them; other columns of the entity are dropped.
    const key = Object.fromEntries(
      Object.entries(record).filter(
        ([name]) => keyNames.has(name) || (!columns.has(name) && !computedColumnsOf(entity)?.has(name)),
      ),
    );
    const row = check.coerce(key, i, issues, true);
    return row && keyGiven(entity, row, i, issues) ? row.values : undefined;
  });
}

/** Checks and coerces the rows of one write to one entity; see {@link rowChecker}. @internal */
export interface RowChecker {
  /**
   * A whole row (append, replace): its values in column order, or `undefined` with its problems
   * (an empty row among them) added to `issues`.
   */
  row(input: unknown, i: number, issues: Issue[]): unknown[] | undefined;
  /** A row, whole or (`partial`) a patch whose left-out columns are not given. */
  coerce(input: unknown, i: number, issues: Issue[], partial: boolean): CoercedRow | undefined;
}

/**
 * The row checks of one entity, with what they need worked out once per write: column positions by
 * name, and the column positions of the last object row's keys, reused while rows share their keys
 * (as rows made by one loop do). Each row is read, checked and coerced in one pass.
 * @internal
 */
export function rowChecker(entity: Entity): RowChecker {
  const columns = entity.columns;
  const m = columns.length;
  const names = columns.map((c) => c.name);
  const position = new Map(names.map((name, c) => [name, c]));
  const allGiven = allGivenOf(m);
  /** Whether plain objects inherit an enumerable key (`Object.prototype` was added to). */
  let inheritsKeys = false;
  for (const _ in Object.prototype) inheritsKeys = true;
  let lastKeys: string[] = [];
  let lastAt: number[] = [];

  /** Column positions of `keys`, or `undefined` when one is not a column. */
  function positions(keys: string[]): number[] | undefined {
    if (keys.length === lastKeys.length) {
      let same = true;
      for (let k = 0; k < keys.length; k++)
        if (keys[k] !== lastKeys[k]) {
          same = false;
          break;
        }
      if (same) return lastAt;
    }
    const at = new Array<number>(keys.length);
    for (let k = 0; k < keys.length; k++) {
      const c = position.get(keys[k]!);
      if (c === undefined) return undefined;
      at[k] = c;
    }
    lastKeys = keys;
    lastAt = at;
    return at;
  }

  /** `given` of the last row {@link values} coerced. */
  let lastGiven: boolean[] = allGiven;

  /** A row's values, coerced; its `given` is left in `lastGiven` (no object per row). */
  function values(input: unknown, i: number, issues: Issue[], partial: boolean): unknown[] | undefined {
    const raw = new Array<unknown>(m);
    let given: boolean[] | undefined;
    if (Array.isArray(input)) {
      if (input.length !== m) {
        issues.push({
          code: 'row_shape',
          path: `${entity.name}[${i}]`,
          message: `row ${i + 1} of "${entity.name}" has ${input.length} values but the entity has ${m} columns (${listNames(names)})`,
        });
        return undefined;
      }
      for (let c = 0; c < m; c++) raw[c] = input[c] as unknown;
    } else if (typeof input === 'object' && input !== null) {
      const record = input as Record<string, unknown>;
      if (sameKeys(record)) {
        // The last row's keys: read in one walk of the keys V8 keeps for the shape (no arrays).
        const at = lastAt;
        if (at.length < m) raw.fill(null);
        if (partial) given = new Array<boolean>(m).fill(false);
        let k = 0;
        for (const key in record) {
          const value = record[key];
          raw[at[k]!] = value;
          if (given) given[at[k]!] = value !== undefined;
          k++;
        }
        return checked(raw, given, i, issues);
      }
      const keys = Object.keys(record);
      const at = positions(keys);
      if (at === undefined) {
        const unknown = keys.filter((k) => !position.has(k));
        const computed = computedColumnsOf(entity);
        const named = unknown.find((k) => computed?.has(k));
        if (named !== undefined) {
          issues.push({
            code: 'read_only_column',
            path: `${entity.name}[${i}].${named}`,
            message: `row ${i + 1} of "${entity.name}" gives column ${quoteName(named)}, which is computed (${computed!.get(named)!}) and cannot be written`,
          });
          return undefined;
        }
        issues.push({
          code: 'unknown_column',
          path: `${entity.name}[${i}]`,
          message: `row ${i + 1} of "${entity.name}" has ${listNames(unknown.map(quoteName))}, not ${unknown.length === 1 ? 'a column' : 'columns'} of the entity (columns: ${listNames(names)})`,
        });
        return undefined;
      }
      if (keys.length < m) raw.fill(null);
      if (partial) given = new Array<boolean>(m).fill(false);
      // One native call reads every value in the order of the keys; should a getter add or remove
      // a property on the way, the values are read again by key.
      const read = Object.values(record);
      const same = read.length === keys.length;
      for (let k = 0; k < keys.length; k++) {
        const value = same ? read[k] : record[keys[k]!];
        raw[at[k]!] = value;
        if (given) given[at[k]!] = value !== undefined;
      }
    } else {
      issues.push({
        code: 'row_shape',
        path: `${entity.name}[${i}]`,
        message: `row ${i + 1} of "${entity.name}" must be an object keyed by column name or an array of values`,
      });
      return undefined;
    }
    return checked(raw, given, i, issues);
  }

  /**
   * Whether `record`'s own enumerable keys are the last object row's, in order, found without
   * making an array: a `for…in` walk, which sees exactly the own keys when the prototype is
   * `Object.prototype` (or none) and `Object.prototype` has no enumerable property.
   */
  function sameKeys(record: object): boolean {
    const proto: unknown = Object.getPrototypeOf(record);
    if ((proto !== Object.prototype && proto !== null) || inheritsKeys) return false;
    let k = 0;
    for (const key in record) {
      if (key !== lastKeys[k]) return false;
      k++;
    }
    return k === lastKeys.length;
  }

  /** Checks and coerces the values of a row in column order, in place; `undefined` on a problem. */
  function checked(
    raw: unknown[],
    given: boolean[] | undefined,
    i: number,
    issues: Issue[],
  ): unknown[] | undefined {
    let bad = false;
    for (let c = 0; c < m; c++) {
      const column = columns[c]!;
      let value = raw[c];
      let cell: unknown;
      // A Date given in code is the text a date cell reads as: its UTC date (DATE) or ISO time.
      if (value instanceof Date && !Number.isNaN(value.getTime()) && column.type !== 'NUMBER')
        value = column.type === 'DATE' ? value.toISOString().slice(0, 10) : value.toISOString();
      if (value === null || value === undefined) cell = null;
      else if (column.type === 'NUMBER' && typeof value === 'number' && value - value === 0) cell = value;
      else if (column.type === 'STRING' && typeof value === 'string' && visible(value)) cell = value;
      else {
        const result = coerceCell(column.type, value);
        if (!result.ok) {
          bad = true;
          issues.push({
            code: 'invalid_type',
            path: `${entity.name}[${i}].${column.name}`,
            message: `row ${i + 1} of "${entity.name}": column "${column.name}" must be ${column.type}, got ${cellText(value)}`,
          });
          continue;
        }
        cell = result.value;
      }
      if (column.number && typeof cell === 'number' && (given === undefined || given[c])) {
        const broken = brokenNumberRule(cell, column.number);
        if (broken) {
          bad = true;
          issues.push({
            code: broken.code,
            path: `${entity.name}[${i}].${column.name}`,
            message: `row ${i + 1} of "${entity.name}": column "${column.name}" ${broken.rule}, got ${cell}`,
          });
        }
      }
      raw[c] = cell;
    }
    if (bad) return undefined;
    lastGiven = given ?? allGiven;
    return raw;
  }

  return {
    coerce(input, i, issues, partial) {
      const row = values(input, i, issues, partial);
      return row && { values: row, given: lastGiven };
    },
    row(input, i, issues) {
      const row = values(input, i, issues, false);
      if (row === undefined) return undefined;
      for (let c = 0; c < m; c++) if (row[c] !== null) return row;
      issues.push({
        code: 'empty_row',
        path: `${entity.name}[${i}]`,
        message: `row ${i + 1} of "${entity.name}" is empty; an empty row would end the table in the sheet`,
      });
      return undefined;
    },
  };
}

/** `given` of a whole row: every column (shared and frozen). */
function allGivenOf(m: number): boolean[] {
  let given = allGiven.get(m);
  if (given === undefined)
    allGiven.set(m, (given = Object.freeze(new Array<boolean>(m).fill(true)) as boolean[]));
  return given;
}
const allGiven = new Map<number, boolean[]>();

/**
 * A cell value as a message shows it: as JSON cut after 200 characters (a value can be any size),
 * NaN and Infinity as themselves, a big integer with its `n`, a value JSON cannot hold (a cycle, a
 * big integer inside) by its kind.
 */
function cellText(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : 'a Date';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    return describeValue(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A string starting with a printable ASCII character, so never blank: kept as it is. */
function visible(text: string): boolean {
  const code = text.charCodeAt(0);
  return code > 32 && code < 127;
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

/**
 * A comparable key of the values of `columns` in a coerced row, as a `Map` key: the value itself for
 * a one-column key (coerced values of a column are all of one type, never NaN), else {@link keyOf}.
 * Two rows have equal keys exactly when their `keyOf` texts are equal.
 * @internal
 */
export function rowKey(row: readonly unknown[], columns: readonly number[]): unknown {
  if (columns.length === 1) {
    const value = row[columns[0]!] ?? null;
    return value === null ? NULL_KEY : typeof value === 'object' ? keyOf(row, columns) : value;
  }
  return keyOf(row, columns);
}

const NULL_KEY = Symbol('null key');

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
  return `(${names.map((n, i) => `${n}=${keyText(row[columns[i]!] ?? null)}`).join(', ')})`;
}

/** A key value as a message shows it: as JSON, text cut after 200 characters. */
function keyText(value: unknown): string {
  return typeof value === 'string' ? quoteName(value) : (JSON.stringify(value) ?? String(value));
}
