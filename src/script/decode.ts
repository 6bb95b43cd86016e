/**
 * Reading what a script passes to `writeEntity` back into host row objects: either one JSON
 * string, or a column-wise packing (JSON header plus Float64Array / Uint32Array buffers). The
 * payload is treated as hostile: everything is checked before a row is built.
 * @internal
 * @module
 */

import { objectsOf } from './entity-data.js';
import { ColumnKind } from './marshal.js';

/** Rows of one `writeEntity` call after decoding, or the message the script sees. @internal */
export type DecodedWrite = { rows: Record<string, unknown>[] } | { problem: string };

const FORBIDDEN_KEY = '__proto__';

/**
 * Parses and validates one JSON `writeEntity` payload. `kind` 0 is an array of objects, 1 is
 * `{"c":[column names],"r":[[...]]}`. `JSON.parse` only creates own data properties, so a
 * `"__proto__"` key cannot change a prototype here; such keys are still refused, since later
 * code may copy rows with plain assignment.
 * @internal
 */
export function decodeWrite(entity: string, kind: number, json: string): DecodedWrite {
  const where = `writeEntity("${entity}")`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { problem: `${where}: the rows could not be read back (their toJSON gave no JSON value)` };
  }
  if (kind === 0) {
    if (!Array.isArray(parsed)) {
      return {
        problem: `${where}: rows must be an array of objects keyed by column name; their toJSON gave ${describe(parsed)}`,
      };
    }
    const rows = parsed as unknown[];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (row === null || typeof row !== 'object' || Array.isArray(row)) {
        return { problem: `${where}: row ${i} is ${describe(row)}, expected an object keyed by column name` };
      }
      if (Object.hasOwn(row, FORBIDDEN_KEY)) {
        return { problem: `${where}: row ${i} has the column name "__proto__", which is not allowed` };
      }
    }
    return { rows: rows as Record<string, unknown>[] };
  }
  const table = parsed as { c?: unknown; r?: unknown } | null;
  if (table === null || typeof table !== 'object' || !Array.isArray(table.c)) {
    return {
      problem: `${where}: the columns of the data table must be an array; their toJSON gave another value`,
    };
  }
  if (!Array.isArray(table.r)) {
    return {
      problem: `${where}: the rows of the data table must be an array of rows; their toJSON gave ${describe(table.r)}`,
    };
  }
  const { c: columns, r: tableRows } = table as { c: unknown[]; r: unknown[] };
  const names: string[] = [];
  const seen = new Set<string>();
  for (let j = 0; j < columns.length; j++) {
    const name = columns[j];
    if (typeof name !== 'string' || name === '') {
      return { problem: `${where}: columns[${j}] has no name; give each column a non-empty name` };
    }
    if (name === FORBIDDEN_KEY) return { problem: `${where}: the column name "__proto__" is not allowed` };
    if (seen.has(name)) return { problem: `${where}: the column "${name}" appears twice` };
    seen.add(name);
    names.push(name);
  }
  const rows: Record<string, unknown>[] = new Array<Record<string, unknown>>(tableRows.length);
  for (let i = 0; i < tableRows.length; i++) {
    const cells = tableRows[i];
    if (!Array.isArray(cells)) {
      return { problem: `${where}: rows[${i}] is ${describe(cells)}, expected an array of cell values` };
    }
    if (cells.length > names.length) {
      return {
        problem: `${where}: rows[${i}] has ${cells.length} cells but the table has ${names.length} columns`,
      };
    }
    const row: Record<string, unknown> = {};
    for (let j = 0; j < names.length; j++) {
      const cell: unknown = cells[j];
      row[names[j] as string] = cell === undefined ? null : cell;
    }
    rows[i] = row;
  }
  return { rows };
}

/**
 * Decodes a column-wise `writeEntity` payload: `header` is JSON
 * `{"c":[keys],"n":rows,"k":[kinds],"d":[per column: dictionary, values or 0]}` and `buffers`
 * holds, in column order, the bytes of each `F64`, `F64_NULLS` and `DICT` column. Non-finite
 * numbers become `null` and -0 becomes 0, as JSON would make them.
 * @internal
 */
export function decodePacked(entity: string, header: string, buffers: readonly Uint8Array[]): DecodedWrite {
  const where = `writeEntity("${entity}")`;
  const malformed = { problem: `${where}: the rows could not be read back (malformed column data)` };
  let parsed: { c?: unknown; n?: unknown; k?: unknown; d?: unknown } | null;
  try {
    parsed = JSON.parse(header) as typeof parsed;
  } catch {
    return malformed;
  }
  if (parsed === null || typeof parsed !== 'object') return malformed;
  const { c: keys, n, k: kinds, d: extra } = parsed;
  if (!Array.isArray(keys) || !Array.isArray(kinds) || !Array.isArray(extra)) return malformed;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return malformed;
  const m = keys.length;
  if (kinds.length !== m || extra.length !== m) return malformed;
  const seen = new Set<string>();
  for (const key of keys) {
    if (typeof key !== 'string' || seen.has(key)) return malformed;
    if (key === FORBIDDEN_KEY)
      return { problem: `${where}: row 0 has the column name "__proto__", which is not allowed` };
    seen.add(key);
  }
  // Per column: the value of each row, resolved once, so rows are built in one plain pass.
  const columns: ArrayLike<unknown>[] = [];
  let next = 0;
  for (let j = 0; j < m; j++) {
    const kind: unknown = kinds[j];
    if (kind === ColumnKind.F64 || kind === ColumnKind.F64_NULLS) {
      const bytes = buffers[next++];
      if (bytes === undefined || bytes.byteLength !== n * 8 || bytes.byteOffset % 8 !== 0) return malformed;
      // As JSON would: non-finite numbers become null (NaN, read as null below) and -0 becomes 0.
      const values = new Float64Array(bytes.buffer, bytes.byteOffset, n);
      for (let i = 0; i < n; i++) {
        const value = values[i]!;
        if (value === 0) values[i] = 0;
        else if (value - value !== 0) values[i] = NaN;
      }
      columns.push(values);
    } else if (kind === ColumnKind.DICT) {
      const bytes = buffers[next++];
      const dictionary: unknown = extra[j];
      if (bytes === undefined || bytes.byteLength !== n * 4 || bytes.byteOffset % 4 !== 0) return malformed;
      if (!Array.isArray(dictionary)) return malformed;
      const indexes = new Uint32Array(bytes.buffer, bytes.byteOffset, n);
      const values = new Array<unknown>(n);
      for (let i = 0; i < n; i++) {
        const index = indexes[i]!;
        if (index >= dictionary.length) return malformed;
        values[i] = dictionary[index] as unknown;
      }
      columns.push(values);
    } else if (kind === ColumnKind.VALUES) {
      const values: unknown = extra[j];
      if (!Array.isArray(values) || values.length !== n) return malformed;
      columns.push(values as unknown[]);
    } else return malformed;
  }
  if (next !== buffers.length) return malformed;
  return { rows: objectsOf(keys as string[], columns, n) };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
