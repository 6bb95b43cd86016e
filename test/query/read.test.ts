import { describe, expect, it } from 'vitest';
import type { CellRows } from '../../src/adapters/types.js';
import { mapSheet } from '../../src/catalog/sheet-mapping.js';
import { executeRead } from '../../src/query/index.js';
import type { Entity } from '../../src/schema/entity.js';
import type { Filter, GetEntityOutput } from '../../src/schema/get-entity.js';

const LIMITS = { maxPageSize: 50, defaultPageSize: 100 };
const BIG = { maxPageSize: 10_000, defaultPageSize: 100 };

const people: Entity = {
  name: 'people',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
    { name: 'age', type: 'NUMBER' },
    { name: 'active', type: 'BOOLEAN' },
    { name: 'born', type: 'DATE' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'doc', sheet_name: 'People', origin: { row: 0, col: 0 } },
};

const cells: CellRows = [
  ['id', 'name', 'age', 'active', 'born'],
  [1, 'Ann', 30, true, '1994-03-01'],
  [2, 'bob', null, false, null],
  [3, 'Cleo', 25, null, '1999-12-31'],
  [4, null, 30, true, '1994-03-01'],
  [5, 'Ann', -2, false, '2001-07-04'],
  [6, 'Émile', 41.5, true, null],
];
const table = mapSheet(people, cells);

function read(operation: unknown, paging: Record<string, unknown> = {}, limits = BIG): GetEntityOutput {
  return executeRead('people', table, { entity_name: 'people', operation, ...paging }, limits);
}
function ids(operation: unknown, paging: Record<string, unknown> = {}): unknown[] {
  const output = read({ ...(operation as object), select_columns: [{ column: 'id' }] }, paging);
  expect(output.body.error).toEqual({ is_error: false, errors: [] });
  return output.body.table.rows!.map((row) => row[0]);
}
const where = (...filters: Filter[]): unknown[] => ids({ filters });
function errors(input: unknown, limits = BIG): string[] {
  const output = executeRead('people', table, input, limits);
  expect(output.body.table).toEqual({ columns: null, rows: null });
  expect(output.body.error?.is_error).toBe(true);
  return output.body.error?.errors ?? [];
}

describe('filters', () => {
  it('compares numbers as numbers, and empty cells match no comparison', () => {
    expect(where({ column: 'age', operator: 'EQUALS', value: 30 })).toEqual([1, 4]);
    expect(where({ column: 'age', operator: 'NOT_EQUALS', value: 30 })).toEqual([3, 5, 6]);
    expect(where({ column: 'age', operator: 'GREATER_THAN', value: 25 })).toEqual([1, 4, 6]);
    expect(where({ column: 'age', operator: 'GREATER_THAN_OR_EQUALS', value: 25 })).toEqual([1, 3, 4, 6]);
    expect(where({ column: 'age', operator: 'LESS_THAN', value: 25 })).toEqual([5]);
    expect(where({ column: 'age', operator: 'LESS_THAN_OR_EQUALS', value: 25 })).toEqual([3, 5]);
    expect(where({ column: 'age', operator: 'IN', value: [25, -2, 99] })).toEqual([3, 5]);
    expect(where({ column: 'age', operator: 'NOT_IN', value: [30] })).toEqual([3, 5, 6]);
    expect(where({ column: 'age', operator: 'IS_NULL' })).toEqual([2]);
    expect(where({ column: 'age', operator: 'IS_NOT_NULL' })).toEqual([1, 3, 4, 5, 6]);
  });

  it('compares text by code unit, case-sensitive', () => {
    expect(where({ column: 'name', operator: 'EQUALS', value: 'ann' })).toEqual([]);
    expect(where({ column: 'name', operator: 'GREATER_THAN', value: 'Z' })).toEqual([2, 6]); // "bob" and "Émile" sort after "Z"
    expect(where({ column: 'name', operator: 'LESS_THAN', value: 'B' })).toEqual([1, 5]);
    expect(where({ column: 'name', operator: 'CONTAINS', value: 'n' })).toEqual([1, 5]);
    expect(where({ column: 'name', operator: 'CONTAINS', value: 'N' })).toEqual([]);
    expect(where({ column: 'name', operator: 'STARTS_WITH', value: 'C' })).toEqual([3]);
    expect(where({ column: 'name', operator: 'ENDS_WITH', value: 'le' })).toEqual([6]);
    expect(where({ column: 'name', operator: 'ENDS_WITH', value: ' le' })).toEqual([]);
    expect(where({ column: 'name', operator: 'CONTAINS', value: '' })).toEqual([1, 2, 3, 5, 6]);
    expect(where({ column: 'name', operator: 'NOT_EQUALS', value: 'Ann' })).toEqual([2, 3, 6]);
    expect(where({ column: 'name', operator: 'NOT_IN', value: ['Ann', 'bob'] })).toEqual([3, 6]);
    expect(where({ column: 'name', operator: 'IS_NULL' })).toEqual([4]);
  });

  it('orders booleans false before true and treats DATE as its text', () => {
    expect(where({ column: 'active', operator: 'EQUALS', value: true })).toEqual([1, 4, 6]);
    expect(where({ column: 'active', operator: 'EQUALS', value: 'FALSE' })).toEqual([2, 5]);
    expect(where({ column: 'active', operator: 'GREATER_THAN', value: false })).toEqual([1, 4, 6]);
    expect(where({ column: 'active', operator: 'LESS_THAN_OR_EQUALS', value: true })).toEqual([
      1, 2, 4, 5, 6,
    ]);
    expect(where({ column: 'active', operator: 'NOT_EQUALS', value: true })).toEqual([2, 5]);
    expect(where({ column: 'active', operator: 'IS_NULL' })).toEqual([3]);
    expect(where({ column: 'born', operator: 'LESS_THAN', value: '2000-01-01' })).toEqual([1, 3, 4]);
    expect(where({ column: 'born', operator: 'STARTS_WITH', value: '1994' })).toEqual([1, 4]);
  });

  it('joins filters with AND', () => {
    expect(
      where(
        { column: 'name', operator: 'EQUALS', value: 'Ann' },
        { column: 'age', operator: 'GREATER_THAN', value: 0 },
      ),
    ).toEqual([1]);
  });

  it('follows SQL for null filter values and nulls in lists', () => {
    expect(where({ column: 'age', operator: 'EQUALS', value: null })).toEqual([]);
    expect(where({ column: 'age', operator: 'NOT_EQUALS', value: null })).toEqual([]);
    expect(where({ column: 'age', operator: 'IN', value: [30, null] })).toEqual([1, 4]);
    expect(where({ column: 'age', operator: 'NOT_IN', value: [30, null] })).toEqual([]);
    expect(where({ column: 'age', operator: 'IN', value: [] })).toEqual([]);
    expect(where({ column: 'age', operator: 'NOT_IN', value: [] })).toEqual([1, 3, 4, 5, 6]);
    expect(where({ column: 'age', operator: 'IS_NULL', value: null })).toEqual([2]);
  });

  it('coerces values by value_type, then to the column type', () => {
    expect(where({ column: 'age', operator: 'EQUALS', value_type: 'NUMBER', value: '30' })).toEqual([1, 4]);
    expect(where({ column: 'age', operator: 'EQUALS', value: ' 25 ' })).toEqual([3]);
    expect(where({ column: 'name', operator: 'EQUALS', value_type: 'STRING', value: 'bob' })).toEqual([2]);
    expect(where({ column: 'active', operator: 'EQUALS', value_type: 'BOOLEAN', value: 'true' })).toEqual([
      1, 4, 6,
    ]);
  });
});

describe('order and paging', () => {
  it('puts empty cells last in both directions', () => {
    expect(ids({ order_by: [{ column: 'age', direction: 'ASC' }] })).toEqual([5, 3, 1, 4, 6, 2]);
    expect(ids({ order_by: [{ column: 'age', direction: 'DESC' }] })).toEqual([6, 1, 4, 3, 5, 2]);
    expect(ids({ order_by: [{ column: 'name', direction: 'DESC' }] })).toEqual([6, 2, 3, 1, 5, 4]);
    expect(ids({ order_by: [{ column: 'active', direction: 'ASC' }] })).toEqual([2, 5, 1, 4, 6, 3]);
    expect(ids({ order_by: [{ column: 'active', direction: 'DESC' }] })).toEqual([1, 4, 6, 2, 5, 3]);
  });

  it('orders by every key in sequence and keeps sheet order for ties', () => {
    expect(
      ids({
        order_by: [
          { column: 'born', direction: 'ASC' },
          { column: 'id', direction: 'DESC' },
        ],
      }),
    ).toEqual([4, 1, 3, 5, 6, 2]);
    expect(
      ids({
        order_by: [
          { column: 'active', direction: 'DESC' },
          { column: 'age', direction: 'ASC' },
        ],
      }),
    ).toEqual([1, 4, 6, 5, 2, 3]);
    expect(ids({ order_by: [{ column: 'born', direction: 'DESC' }] })).toEqual([5, 3, 1, 4, 2, 6]);
  });

  it('pages from 1, defaults page_size to 100, and gives an empty page past the end', () => {
    expect(ids({}, { page_size: 2 })).toEqual([1, 2]);
    expect(ids({}, { page_size: 2, page_number: 3 })).toEqual([5, 6]);
    expect(ids({}, { page_size: 4, page_number: 2 })).toEqual([5, 6]);
    expect(ids({}, { page_size: 4, page_number: 9 })).toEqual([]);
    expect(
      ids({ order_by: [{ column: 'age', direction: 'ASC' }] }, { page_size: 2, page_number: 2 }),
    ).toEqual([1, 4]);
    expect(
      ids({ filters: [{ column: 'age', operator: 'IS_NOT_NULL' }] }, { page_size: 2, page_number: 3 }),
    ).toEqual([6]);

    const many = mapSheet(people, [
      cells[0]!,
      ...Array.from({ length: 250 }, (_, i) => [i, 'x', i % 7, true, null]),
    ]);
    const page = (paging: Record<string, unknown>): unknown[][] =>
      executeRead('people', many, { entity_name: 'people', operation: {}, ...paging }, BIG).body.table.rows!;
    expect(page({}).length).toBe(100);
    expect(page({ page_number: 3 }).map((r) => r[0])).toEqual(Array.from({ length: 50 }, (_, i) => 200 + i));
  });

  it('keeps only the needed rows with a bounded heap, giving the same page as a full sort', () => {
    const rows = Array.from({ length: 3000 }, (_, i) => [
      i,
      `n${(i * 7919) % 101}`,
      (i * 31) % 97,
      i % 3 === 0 ? null : i % 2 === 0,
      null,
    ]);
    const big = mapSheet(people, [cells[0]!, ...rows]);
    const order = [
      { column: 'age', direction: 'DESC' as const },
      { column: 'name', direction: 'ASC' as const },
    ];
    const sorted = rows
      .map((row, index) => ({ row, index }))
      .filter(({ row }) => (row[2] as number) > 10)
      .sort(
        (a, b) =>
          (b.row[2] as number) - (a.row[2] as number) ||
          (a.row[1]! < b.row[1]! ? -1 : a.row[1]! > b.row[1]! ? 1 : 0) ||
          a.index - b.index,
      )
      .map(({ row }) => row[0]);
    for (const [size, number] of [
      [10, 1],
      [10, 7],
      [100, 25],
      [1000, 3],
    ] as const) {
      const output = executeRead(
        'people',
        big,
        {
          entity_name: 'people',
          operation: {
            filters: [{ column: 'age', operator: 'GREATER_THAN', value: 10 }],
            order_by: order,
            select_columns: [{ column: 'id' }],
          },
          page_size: size,
          page_number: number,
        },
        BIG,
      );
      expect(output.body.table.rows!.map((r) => r[0])).toEqual(
        sorted.slice((number - 1) * size, number * size),
      );
    }
  });
});

describe('output', () => {
  it('selects columns in order with aliases, the same column twice allowed', () => {
    const output = read({
      select_columns: [{ column: 'name', alias: 'who' }, { column: 'id' }, { column: 'id', alias: 'again' }],
      filters: [{ column: 'id', operator: 'EQUALS', value: 1 }],
    });
    expect(output.body.table).toEqual({
      columns: [
        { name: 'who', type: 'STRING', string: { is_json: false, is_url: false } },
        { name: 'id', type: 'NUMBER', number: { latin_numbering: true } },
        { name: 'again', type: 'NUMBER', number: { latin_numbering: true } },
      ],
      rows: [['Ann', 1, 1]],
    });
    expect(output.body.error).toEqual({ is_error: false, errors: [] });
  });

  it('gives every column in entity order when nothing is selected', () => {
    const output = read({ select_columns: [] }, { page_size: 1 });
    expect(output.body.table.columns?.map((c) => [c.name, c.type])).toEqual([
      ['id', 'NUMBER'],
      ['name', 'STRING'],
      ['age', 'NUMBER'],
      ['active', 'BOOLEAN'],
      ['born', 'DATE'],
    ]);
    expect(output.body.table.columns?.[3]).toEqual({ name: 'active', type: 'BOOLEAN', boolean: {} });
    expect(output.body.table.rows).toEqual([[1, 'Ann', 30, true, '1994-03-01']]);
  });
});

describe('bad input never throws', () => {
  const base = { entity_name: 'people', operation: {} };

  it('refuses extra properties at every level', () => {
    expect(errors({ ...base, extra: 1 })).toEqual([
      'extra: unknown property "extra"; no other properties are allowed here',
    ]);
    expect(errors({ ...base, operation: { limit: 1 } })).toEqual([
      'operation.limit: unknown property "limit"; no other properties are allowed here',
    ]);
    expect(
      errors({ ...base, operation: { filters: [{ column: 'id', operator: 'IS_NULL', x: 1 }] } })[0],
    ).toMatch(/^operation\.filters\[0\]\.x: unknown property "x"/);
    expect(errors({ ...base, operation: { select_columns: [{ column: 'id', as: 'x' }] } })[0]).toMatch(
      /^operation\.select_columns\[0\]\.as: unknown property "as"/,
    );
    expect(
      errors({ ...base, operation: { order_by: [{ column: 'id', direction: 'ASC', nulls: 'first' }] } })[0],
    ).toMatch(/^operation\.order_by\[0\]\.nulls: unknown property "nulls"/);
  });

  it('refuses wrong types, unknown operators and directions, and missing fields', () => {
    expect(errors({ entity_name: 'people' })).toEqual(['operation: operation is required']);
    expect(errors({ ...base, page_size: '10' })).toEqual([
      'page_size: page_size must be a number, got the string "10"',
    ]);
    expect(errors({ ...base, page_number: 0 })).toEqual(['page_number: page_number must be at least 1']);
    expect(errors({ ...base, page_size: 1.5 })[0]).toMatch(/^page_size: /);
    expect(
      errors({ ...base, operation: { filters: [{ column: 'id', operator: 'LIKE', value: 1 }] } })[0],
    ).toMatch(
      /^operation\.filters\[0\]\.operator: operator must be one of "EQUALS", .*got the string "LIKE"/,
    );
    expect(errors({ ...base, operation: { order_by: [{ column: 'id', direction: 'UP' }] } })[0]).toMatch(
      /^operation\.order_by\[0\]\.direction: /,
    );
    expect(
      errors({
        ...base,
        operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 1, value_type: 'DATE' }] },
      })[0],
    ).toMatch(/^operation\.filters\[0\]\.value_type: /);
    expect(errors(null)).toHaveLength(1);
    expect(errors('read everything')).toHaveLength(1);
  });

  it('names unknown columns with the entity and its columns, everywhere at once', () => {
    expect(
      errors({
        ...base,
        operation: {
          select_columns: [{ column: 'nme' }],
          filters: [{ column: 'x', operator: 'IS_NULL' }],
          order_by: [{ column: 'y', direction: 'ASC' }],
        },
      }),
    ).toEqual([
      'operation.select_columns[0].column: unknown column "nme" of entity "people" (columns: id, name, age, active, born)',
      'operation.filters[0].column: unknown column "x" of entity "people" (columns: id, name, age, active, born)',
      'operation.order_by[0].column: unknown column "y" of entity "people" (columns: id, name, age, active, born)',
    ]);
  });

  it('checks filter values against operator and column', () => {
    const filter = (f: Record<string, unknown>): string[] => errors({ ...base, operation: { filters: [f] } });
    expect(filter({ column: 'age', operator: 'EQUALS', value_type: 'NUMBER', value: 'abc' })).toEqual([
      'operation.filters[0].value: "abc" is not a NUMBER (value_type)',
    ]);
    expect(filter({ column: 'age', operator: 'EQUALS', value: 'abc' })).toEqual([
      'operation.filters[0].value: "abc" cannot be compared with column "age" of type NUMBER',
    ]);
    expect(filter({ column: 'age', operator: 'EQUALS', value_type: 'BOOLEAN', value: true })).toEqual([
      'operation.filters[0].value: true (as BOOLEAN) cannot be compared with column "age" of type NUMBER',
    ]);
    expect(filter({ column: 'age', operator: 'IN', value: 30 })).toEqual([
      'operation.filters[0].value: operator IN needs an array of values, got 30',
    ]);
    expect(filter({ column: 'age', operator: 'NOT_IN', value: [1, 'x'] })).toEqual([
      'operation.filters[0].value[1]: "x" cannot be compared with column "age" of type NUMBER',
    ]);
    expect(filter({ column: 'age', operator: 'IS_NULL', value: 3 })).toEqual([
      'operation.filters[0].value: operator IS_NULL takes no value, got 3',
    ]);
    expect(filter({ column: 'age', operator: 'GREATER_THAN' })).toEqual([
      'operation.filters[0].value: operator GREATER_THAN needs a value',
    ]);
    expect(filter({ column: 'age', operator: 'CONTAINS', value: '3' })).toEqual([
      'operation.filters[0].operator: CONTAINS works on text columns only; column "age" is NUMBER',
    ]);
    expect(filter({ column: 'name', operator: 'EQUALS', value: { a: 1 } })).toEqual([
      'operation.filters[0].value: must be a string, number, boolean or null, got an object',
    ]);
    expect(filter({ column: 'born', operator: 'EQUALS', value: '2024-02-30' })).toEqual([
      'operation.filters[0].value: "2024-02-30" cannot be compared with column "born" of type DATE',
    ]);
  });

  it('caps page_size at limits.maxPageSize', () => {
    const many = Array.from({ length: 120 }, (_, i) => [i + 1, `p${i}`, 20, true, '2000-01-01']);
    const big = mapSheet(people, [cells[0]!, ...many]);
    const capped = executeRead('people', big, { ...base, page_size: 51 }, LIMITS);
    expect(capped.body.error?.is_error).toBe(false);
    expect(capped.body.table.rows).toHaveLength(50);
    const second = executeRead('people', big, { ...base, page_size: 1000, page_number: 2 }, LIMITS);
    expect(second.body.table.rows?.[0]?.[0]).toBe(51);
  });

  it('refuses duplicate output names and empty aliases', () => {
    expect(
      errors({ ...base, operation: { select_columns: [{ column: 'id' }, { column: 'name', alias: 'id' }] } }),
    ).toEqual([
      'operation.select_columns[1]: output column name "id" is already used by select_columns[0]; give one of them a different alias',
    ]);
    expect(errors({ ...base, operation: { select_columns: [{ column: 'id', alias: ' ' }] } })).toEqual([
      'operation.select_columns[0].alias: alias must not be empty',
    ]);
  });

  it('refuses an entity_name that is not the entity read', () => {
    expect(errors({ ...base, entity_name: 'orders' })).toEqual([
      'entity_name: "orders" does not name entity "people"',
    ]);
  });
});

describe('bounds of one read', () => {
  it('gives a NUMBER column the rules of its entity column (SPEC 2.6 number config)', () => {
    const priced: Entity = {
      ...people,
      columns: [
        { name: 'id', type: 'NUMBER', number: { min: 0, max: 10, step: 1, latin_numbering: false } },
        { name: 'age', type: 'NUMBER', number: { min: 0 } },
      ],
    };
    const output = executeRead(
      'people',
      mapSheet(priced, [
        ['id', 'age'],
        [1, 2],
      ]),
      { entity_name: 'people', operation: {} },
      BIG,
    );
    expect(output.body.table.columns).toEqual([
      { name: 'id', type: 'NUMBER', number: { latin_numbering: false, min: 0, max: 10, step: 1 } },
      { name: 'age', type: 'NUMBER', number: { latin_numbering: true, min: 0 } },
    ]);
  });

  it('refuses more than 100 filters or order_by keys, or 1,000 selected columns, naming the field', () => {
    const many = <T>(n: number, item: T): T[] => Array.from({ length: n }, () => item);
    expect(
      errors({
        entity_name: 'people',
        operation: { filters: many(101, { column: 'id', operator: 'IS_NULL' }) },
      }),
    ).toEqual(['operation.filters: filters must have at most 100 items']);
    expect(
      errors({
        entity_name: 'people',
        operation: { order_by: many(101, { column: 'id', direction: 'ASC' }) },
      }),
    ).toEqual(['operation.order_by: order_by must have at most 100 items']);
    expect(
      errors({ entity_name: 'people', operation: { select_columns: many(1001, { column: 'id' }) } }),
    ).toEqual(['operation.select_columns: select_columns must have at most 1000 items']);
    // At the bounds, a read runs.
    expect(ids({ filters: many(100, { column: 'id', operator: 'IS_NOT_NULL' }) })).toEqual([
      1, 2, 3, 4, 5, 6,
    ]);
  });

  it('keeps messages short: a long name is cut, a long column list ends with how many there are', () => {
    const wide: Entity = {
      ...people,
      columns: Array.from({ length: 50 }, (_, i) => ({ name: `c${i}`, type: 'NUMBER' as const })),
      primary_key: ['c0'],
    };
    const output = executeRead(
      'people',
      mapSheet(wide, [wide.columns.map((c) => c.name)]),
      { entity_name: 'people', operation: { select_columns: [{ column: 'x'.repeat(100_000) }] } },
      BIG,
    );
    const [message] = output.body.error?.errors ?? [];
    expect(message).toBe(
      `operation.select_columns[0].column: unknown column "${'x'.repeat(200)}…" of entity "people" (columns: ${Array.from({ length: 20 }, (_, i) => `c${i}`).join(', ')}, … (50 in all))`,
    );
  });
});

describe('bounds of one read', () => {
  const base = { entity_name: 'people', operation: {} };

  it('refuses a page of more than a million cells (columns selected x page size), naming why', () => {
    const select_columns = Array.from({ length: 200 }, (_, i) => ({ column: 'id', alias: `id${i}` }));
    expect(errors({ ...base, operation: { select_columns }, page_size: 10_000 })).toEqual([
      'operation.select_columns: 200 columns in pages of 10000 rows would answer more than 1000000 cells at once; select fewer columns or ask for smaller pages',
    ]);
    expect(read({ select_columns }, { page_size: 5000 }).body.error?.is_error).toBe(false);
  });

  it('lists the first 100 problems and says how many more there are', () => {
    const value = Array.from({ length: 250 }, (_, i) => `x${i}`);
    const listed = errors({ ...base, operation: { filters: [{ column: 'age', operator: 'IN', value }] } });
    expect(listed).toHaveLength(101);
    expect(listed.at(-1)).toBe('and 150 more problems');
  });

  it('orders by a column given twice as by its first key', () => {
    const twice = [
      { column: 'age', direction: 'DESC' },
      { column: 'id', direction: 'ASC' },
      { column: 'age', direction: 'ASC' },
    ];
    expect(ids({ order_by: twice })).toEqual(ids({ order_by: twice.slice(0, 2) }));
  });
});
