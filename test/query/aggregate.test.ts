// Aggregate reads (`operation.group_by`, `operation.aggregates`) of get_entity: what each function
// gives, empty cells, zero rows, order and page of the groups, and the error for every bad input.
import { describe, expect, it } from 'vitest';
import type { CellRows } from '../../src/adapters/types.js';
import { mapSheet } from '../../src/catalog/sheet-mapping.js';
import { executeRead } from '../../src/query/index.js';
import type { Entity } from '../../src/schema/entity.js';
import type { GetEntityOutput } from '../../src/schema/get-entity.js';

const LIMITS = { maxPageSize: 10_000, defaultPageSize: 100 };

const sales: Entity = {
  name: 'sales',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'region', type: 'STRING' },
    { name: 'amount', type: 'NUMBER', number: { min: 0, step: 0.01 } },
    { name: 'paid', type: 'BOOLEAN' },
    { name: 'day', type: 'DATE' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'doc', sheet_name: 'Sales', origin: { row: 0, col: 0 } },
};

const cells: CellRows = [
  ['id', 'region', 'amount', 'paid', 'day'],
  [1, 'north', 10, true, '2024-01-05'],
  [2, 'south', 4, false, '2024-02-01'],
  [3, 'north', null, null, '2024-01-20'],
  [4, null, 7, true, null],
  [5, 'south', 6, true, '2024-03-10'],
  [6, 'north', 2.5, false, '2024-02-14'],
];
const table = mapSheet(sales, cells);

function read(operation: unknown, paging: Record<string, unknown> = {}): GetEntityOutput {
  return executeRead('sales', table, { entity_name: 'sales', operation, ...paging }, LIMITS);
}
function rows(operation: unknown, paging: Record<string, unknown> = {}): unknown[][] {
  const output = read(operation, paging);
  expect(output.body.error).toEqual({ is_error: false, errors: [] });
  return output.body.table.rows!;
}
function errors(operation: unknown): string[] {
  const output = read(operation);
  expect(output.body.table).toEqual({ columns: null, rows: null });
  expect(output.body.error?.is_error).toBe(true);
  return output.body.error?.errors ?? [];
}

const THREE = [
  { function: 'count', alias: 'n' },
  { function: 'sum', column: 'amount', alias: 'total' },
  { function: 'avg', column: 'amount', alias: 'mean' },
];

describe('aggregate reads', () => {
  it('groups by a column, groups in the order of their first row, the empty cell one group', () => {
    expect(rows({ group_by: ['region'], aggregates: THREE })).toEqual([
      ['north', 3, 12.5, 6.25],
      ['south', 2, 10, 5],
      [null, 1, 7, 7],
    ]);
  });

  it('count without a column counts rows, with one its non-empty cells; min and max skip empty cells', () => {
    expect(
      rows({
        group_by: ['region'],
        aggregates: [
          { function: 'count', alias: 'rows' },
          { function: 'count', column: 'paid', alias: 'answered' },
          { function: 'min', column: 'day', alias: 'first' },
          { function: 'max', column: 'paid', alias: 'any_paid' },
          { function: 'min', column: 'amount', alias: 'least' },
        ],
      }),
    ).toEqual([
      ['north', 3, 2, '2024-01-05', true, 2.5],
      ['south', 2, 2, '2024-02-01', true, 4],
      [null, 1, 1, null, true, 7],
    ]);
  });

  it('without group_by gives one row over the filtered rows; over no rows count is 0 and the others empty', () => {
    expect(
      rows({ aggregates: THREE, filters: [{ column: 'paid', operator: 'EQUALS', value: true }] }),
    ).toEqual([[3, 23, 23 / 3]]);
    expect(
      rows({
        aggregates: [...THREE, { function: 'max', column: 'region', alias: 'last' }],
        filters: [{ column: 'amount', operator: 'GREATER_THAN', value: 1000 }],
      }),
    ).toEqual([[0, null, null, null]]);
    // With group columns, no rows are no groups.
    expect(
      rows({
        group_by: ['region'],
        aggregates: THREE,
        filters: [{ column: 'id', operator: 'EQUALS', value: 99 }],
      }),
    ).toEqual([]);
  });

  it('a group whose cells are all empty sums to empty, not 0', () => {
    expect(
      rows({
        group_by: ['region'],
        aggregates: [{ function: 'sum', column: 'amount', alias: 's' }],
        filters: [{ column: 'id', operator: 'IN', value: [3, 5] }],
      }),
    ).toEqual([
      ['north', null],
      ['south', 6],
    ]);
  });

  it('group_by alone gives each distinct combination once, in the order of its first row', () => {
    expect(rows({ group_by: ['paid'] })).toEqual([[true], [false], [null]]);
    expect(rows({ group_by: ['paid', 'region'] })).toEqual([
      [true, 'north'],
      [false, 'south'],
      [null, 'north'],
      [true, null],
      [true, 'south'],
      [false, 'north'],
    ]);
  });

  it('orders groups by an alias or a group column, empty last, then pages them', () => {
    const operation = {
      group_by: ['region'],
      aggregates: THREE,
      order_by: [{ column: 'total', direction: 'ASC' }],
    };
    expect(rows(operation)).toEqual([
      [null, 1, 7, 7],
      ['south', 2, 10, 5],
      ['north', 3, 12.5, 6.25],
    ]);
    expect(rows(operation, { page_size: 2, page_number: 2 })).toEqual([['north', 3, 12.5, 6.25]]);
    expect(rows({ ...operation, order_by: [{ column: 'region', direction: 'DESC' }] })).toEqual([
      ['south', 2, 10, 5],
      ['north', 3, 12.5, 6.25],
      [null, 1, 7, 7],
    ]);
  });

  it('answers the group columns with their own config, count, sum and avg as plain numbers, min and max as their column', () => {
    const output = read({
      group_by: ['paid'],
      aggregates: [
        { function: 'sum', column: 'amount', alias: 's' },
        { function: 'max', column: 'amount', alias: 'm' },
        { function: 'min', column: 'day', alias: 'd' },
      ],
    });
    expect(output.body.table.columns).toEqual([
      { name: 'paid', type: 'BOOLEAN', boolean: {} },
      { name: 's', type: 'NUMBER', number: { latin_numbering: true } },
      { name: 'm', type: 'NUMBER', number: { latin_numbering: true, min: 0, step: 0.01 } },
      { name: 'd', type: 'DATE', date: {} },
    ]);
  });

  it('names the field of every bad group or aggregate', () => {
    expect(
      errors({
        select_columns: [{ column: 'region' }],
        group_by: ['region', 'nope', 'region'],
        aggregates: [
          { function: 'sum', alias: 'x' },
          { function: 'avg', column: 'region', alias: 'x' },
          { function: 'count', column: 'gone', alias: 'region' },
          { function: 'max', column: 'amount', alias: '  ' },
        ],
        order_by: [{ column: 'amount', direction: 'ASC' }],
      }),
    ).toEqual([
      'operation.select_columns: cannot be combined with group_by or aggregates (the table then has the group_by columns, then the aggregate aliases); leave select_columns out',
      'operation.group_by[1]: unknown column "nope" of entity "sales" (columns: id, region, amount, paid, day)',
      'operation.group_by[2]: column "region" is already grouped by at operation.group_by[0]',
      'operation.aggregates[0].column: sum needs a column (only count may leave it out, to count rows)',
      'operation.aggregates[1].column: avg works on NUMBER columns only; column "region" is STRING',
      'operation.aggregates[1].alias: alias "x" is already used by operation.aggregates[0]; give one of them a different alias',
      'operation.aggregates[2].column: unknown column "gone" of entity "sales" (columns: id, region, amount, paid, day)',
      'operation.aggregates[2].alias: alias "region" is the name of group column operation.group_by[0]; give the aggregate another alias',
      'operation.aggregates[3].alias: alias must not be empty',
      'operation.order_by[0].column: "amount" is neither a group_by column nor an aggregate alias (output columns: region, x)',
    ]);
  });

  it('refuses an aggregate without an alias, or an unknown function, naming the field', () => {
    expect(errors({ aggregates: [{ function: 'count' }] })).toEqual([
      'operation.aggregates[0].alias: alias is required',
    ]);
    expect(errors({ aggregates: [{ function: 'median', column: 'amount', alias: 'm' }] })[0]).toMatch(
      /^operation\.aggregates\[0\]\.function: /,
    );
  });

  it('an empty group_by and aggregates read as no grouping; an empty select_columns may go with them', () => {
    expect(rows({ group_by: [], aggregates: [] })).toHaveLength(6);
    expect(rows({ select_columns: [], aggregates: [{ function: 'count', alias: 'n' }] })).toEqual([[6]]);
  });

  it('reads the same with the hash indexes as with scans only', () => {
    const input = {
      entity_name: 'sales',
      operation: {
        group_by: ['region'],
        aggregates: THREE,
        filters: [{ column: 'region', operator: 'IN', value: ['north', 'south'] }],
      },
    };
    const indexed = executeRead('sales', table, input, LIMITS);
    expect(indexed.body.table.rows).toEqual([
      ['north', 3, 12.5, 6.25],
      ['south', 2, 10, 5],
    ]);
    expect(executeRead('sales', table, input, LIMITS, { indexes: false })).toEqual(indexed);
  });
});
