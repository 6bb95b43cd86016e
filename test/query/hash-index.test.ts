import { describe, expect, it } from 'vitest';
import type { CellValue } from '../../src/adapters/types.js';
import { mapSheet } from '../../src/catalog/sheet-mapping.js';
import { columnIndex, hasColumnIndex, rowsWithKey } from '../../src/query/hash-index.js';
import { appendRows, executeRead, type EntityTable } from '../../src/query/index.js';
import type { Entity } from '../../src/schema/entity.js';
import type { Filter } from '../../src/schema/get-entity.js';

const items: Entity = {
  name: 'items',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'price', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
    { name: 'ok', type: 'BOOLEAN' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'doc', sheet_name: 'Items', origin: { row: 0, col: 0 } },
};

function tableOf(rows: CellValue[][]): EntityTable {
  return mapSheet(items, [['id', 'price', 'name', 'ok'], ...rows]);
}

/** The ids of the rows a read with these filters returns, with the indexes and with scans only. */
function ids(table: EntityTable, ...filters: Filter[]): unknown[] {
  const input = { entity_name: 'items', operation: { filters, select_columns: [{ column: 'id' }] } };
  const limits = { maxPageSize: 10_000, defaultPageSize: 10_000 };
  const indexed = executeRead('items', table, input, limits);
  expect(executeRead('items', table, input, limits, { indexes: false })).toEqual(indexed);
  expect(indexed.body.error).toEqual({ is_error: false, errors: [] });
  return indexed.body.table.rows!.map((row) => row[0]);
}

const table = tableOf([
  [1, 2 ** 40, 'pen', true],
  [2, 0.1, 'ink', false],
  [3, -0, 'Pen', null],
  [4, null, 'pen', true],
  [5, 1e21, null, true],
  [0, 0.1, '', false],
  [-3, null, null, null],
]);

describe('hash indexes', () => {
  it('find numbers as the EQUALS filter compares them: exactly, 0 and -0 alike, empty cells never', () => {
    expect(ids(table, { column: 'id', operator: 'EQUALS', value: 3 })).toEqual([3]);
    expect(ids(table, { column: 'id', operator: 'EQUALS', value: '3', value_type: 'NUMBER' })).toEqual([3]);
    expect(ids(table, { column: 'id', operator: 'EQUALS', value: -0 })).toEqual([0]);
    // An id column is indexed by value directly; values between its integers match nothing.
    for (const value of [5e-324, 2.5, -1e-300, 4 + 2 ** -40, 2 ** 31, -(2 ** 31) - 1])
      expect(ids(table, { column: 'id', operator: 'EQUALS', value })).toEqual([]);
    expect(ids(table, { column: 'price', operator: 'EQUALS', value: 0.1 })).toEqual([2, 0]);
    expect(ids(table, { column: 'price', operator: 'EQUALS', value: 0 })).toEqual([3]);
    expect(ids(table, { column: 'price', operator: 'IN', value: [1e21, 2 ** 40, 7] })).toEqual([1, 5]);
    expect(ids(table, { column: 'price', operator: 'EQUALS', value: null })).toEqual([]);
    expect(hasColumnIndex(table, 0) && hasColumnIndex(table, 1)).toBe(true);
  });

  it('find text case-sensitively, "" as a text of its own, and leave BOOLEAN columns to the scan', () => {
    expect(ids(table, { column: 'name', operator: 'EQUALS', value: 'pen' })).toEqual([1, 4]);
    expect(ids(table, { column: 'name', operator: 'IN', value: ['Pen', 'ink', 'pen', 'pen'] })).toEqual([
      1, 2, 3, 4,
    ]);
    expect(ids(table, { column: 'name', operator: 'EQUALS', value: '' })).toEqual([]);
    expect(ids(table, { column: 'ok', operator: 'EQUALS', value: true })).toEqual([1, 4, 5]);
    expect(hasColumnIndex(table, 3)).toBe(false);
    expect(columnIndex(table, 3).rows(false)).toEqual([1, 5]);
    expect(columnIndex(table, 3).count(null)).toBe(0);
  });

  it('narrow the rows the other filters then check, with ordering and paging unchanged', () => {
    const both: Filter[] = [
      { column: 'name', operator: 'IN', value: ['pen', 'ink'] },
      { column: 'price', operator: 'GREATER_THAN', value: 0 },
    ];
    expect(ids(table, ...both)).toEqual([1, 2]);
    const input = {
      entity_name: 'items',
      operation: { filters: both, order_by: [{ column: 'price', direction: 'DESC' as const }] },
      page_size: 1,
      page_number: 2,
    };
    const limits = { maxPageSize: 10, defaultPageSize: 10 };
    expect(executeRead('items', table, input, limits).body.table.rows).toEqual([[2, 0.1, 'ink', false]]);
  });

  it('give the rows of several values in row order, few or many, among many distinct values', () => {
    const names = Array.from({ length: 3000 }, (_, i) => `item ${i % 1000}`);
    const big = tableOf(names.map((name, i) => [i, i * 0.5, name, null]));
    const few = ['item 7', 'item 3'];
    expect(ids(big, { column: 'name', operator: 'IN', value: few })).toEqual([3, 7, 1003, 1007, 2003, 2007]);
    const many = Array.from({ length: 300 }, (_, i) => `item ${999 - i}`);
    const rows = ids(big, { column: 'name', operator: 'IN', value: many });
    expect(rows).toEqual([...rows].sort((a, b) => Number(a) - Number(b)));
    expect(rows).toHaveLength(900);
    expect(ids(big, { column: 'price', operator: 'IN', value: [1499.5, 0.5] })).toEqual([1, 2999]);
  });

  it('are kept with their table: a table with appended rows gets its own', () => {
    const index = columnIndex(table, 2);
    expect(columnIndex(table, 2)).toBe(index);
    const longer = appendRows(table, [[9, 1, 'pen', true]]);
    expect(hasColumnIndex(longer, 2)).toBe(false);
    expect(ids(longer, { column: 'name', operator: 'EQUALS', value: 'pen' })).toEqual([1, 4, 9]);
    expect(ids(table, { column: 'name', operator: 'EQUALS', value: 'pen' })).toEqual([1, 4]);
  });

  it('find the rows of a key over several columns, none for an empty key column', () => {
    expect(rowsWithKey(table, [2, 3], ['pen', true])).toEqual([0, 3]);
    expect(rowsWithKey(table, [3, 2], [true, 'pen'])).toEqual([0, 3]);
    expect(rowsWithKey(table, [1, 2], [0.1, 'ink'])).toEqual([1]);
    expect(rowsWithKey(table, [1, 2], [0.1, null])).toEqual([]);
    expect(rowsWithKey(table, [0], ['1'])).toEqual([]);
  });
});
