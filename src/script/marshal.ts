/**
 * Copying data across the sandbox boundary as JSON: one string per input entity in, one string
 * per `writeEntity` call out. Nothing is shared by reference, and parsed output is validated
 * before the host uses it.
 * @internal
 * @module
 */

import type { EntityData } from './types.js';

/**
 * Encodes an entity as column-major JSON `{"c":[names],"n":rowCount,"v":[[...],...]}`; the guest
 * prelude turns it into row objects. Missing cells become `null`.
 * @internal
 */
export function encodeEntity(entity: EntityData): string {
  const names = entity.columns.map((column) => column.name);
  const rowCount = entity.rows.length;
  const values: unknown[][] = names.map(() => new Array<unknown>(rowCount));
  for (let r = 0; r < rowCount; r++) {
    const row = entity.rows[r] as readonly unknown[];
    for (let c = 0; c < values.length; c++) {
      const cell = row[c];
      (values[c] as unknown[])[r] = cell === undefined ? null : cell;
    }
  }
  return JSON.stringify({ c: names, n: rowCount, v: values });
}

/** Rows of one `writeEntity` call after parsing, or the message the script sees. @internal */
export type DecodedWrite = { rows: Record<string, unknown>[] } | { problem: string };

const FORBIDDEN_KEY = '__proto__';

/**
 * Parses and validates one `writeEntity` payload. `kind` 0 is an array of objects, 1 is
 * `{"c":[column names],"r":[[...]]}`. `JSON.parse` only creates own data properties, so a
 * `"__proto__"` key cannot change a prototype here; such keys are still refused, since later
 * code may copy rows with plain assignment.
 * @internal
 */
export function decodeWrite(entity: string, kind: number, json: string): DecodedWrite {
  const where = `writeEntity("${entity}")`;
  const parsed: unknown = JSON.parse(json);
  if (kind === 0) {
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
  const table = parsed as { c: unknown[]; r: unknown[] };
  const names: string[] = [];
  const seen = new Set<string>();
  for (let j = 0; j < table.c.length; j++) {
    const name = table.c[j];
    if (typeof name !== 'string' || name === '') {
      return { problem: `${where}: columns[${j}] has no name; give each column a non-empty name` };
    }
    if (name === FORBIDDEN_KEY) return { problem: `${where}: the column name "__proto__" is not allowed` };
    if (seen.has(name)) return { problem: `${where}: the column "${name}" appears twice` };
    seen.add(name);
    names.push(name);
  }
  const rows: Record<string, unknown>[] = new Array<Record<string, unknown>>(table.r.length);
  for (let i = 0; i < table.r.length; i++) {
    const cells = table.r[i];
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

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
