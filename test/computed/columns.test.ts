import { describe, expect, it } from 'vitest';
import { ValidationError, WriteRejectedError, type Entity } from '../../src/index.js';
import { customersEntity, ordersEntity } from '../fixtures.js';
import { shopEngine } from '../engine/helpers.js';

/** Customers with their order count and total (rollups), and a formula over the total. */
const customersWithTotals: Entity = {
  ...customersEntity,
  columns: [
    ...customersEntity.columns,
    { name: 'orders', type: 'NUMBER', rollup: { relationship: 'orders_customer', function: 'count' } },
    {
      name: 'total',
      type: 'NUMBER',
      rollup: { relationship: 'orders_customer', function: 'sum', column: 'amount' },
    },
    { name: 'big_spender', type: 'BOOLEAN', formula: 'total > 100' },
  ],
};

/** Orders with the customer's name (a lookup) and a formula over it. */
const ordersWithNames: Entity = {
  ...ordersEntity,
  columns: [
    ...ordersEntity.columns,
    { name: 'customer', type: 'STRING', lookup: { relationship: 'orders_customer', column: 'name' } },
    { name: 'label', type: 'STRING', formula: 'upper(customer) + ": " + item' },
    { name: 'with_tax', type: 'NUMBER', formula: 'round(amount * 1.2, 2)' },
  ],
};

async function shop() {
  const made = await shopEngine();
  await made.engine.catalog.putEntity(customersWithTotals);
  await made.engine.catalog.putEntity(ordersWithNames);
  return made;
}

async function read(engine: Awaited<ReturnType<typeof shopEngine>>['engine'], input: object) {
  const out = await engine.catalog.getEntity(input as never);
  expect(out.body.error?.errors).toEqual([]);
  return out.body.table;
}

describe('computed columns', () => {
  it('reads rollups, lookups and formulas as columns, without sheet headers', async () => {
    const { engine } = await shop();
    const customers = await read(engine, { entity_name: 'customers', operation: {} });
    expect(customers.columns!.map((c) => c.name)).toEqual([
      'id',
      'name',
      'city',
      'orders',
      'total',
      'big_spender',
    ]);
    expect(customers.rows).toEqual([
      [1, 'Ada', 'London', 2, 175.5, true],
      [2, 'Grace', 'New York', 1, 80, false],
      [3, 'Linus', 'Helsinki', 1, 2, false],
    ]);
    const orders = await read(engine, {
      entity_name: 'orders',
      operation: {
        select_columns: [
          { column: 'order_id' },
          { column: 'customer' },
          { column: 'label' },
          { column: 'with_tax' },
        ],
      },
    });
    expect(orders.rows).toEqual([
      [10, 'Ada', 'ADA: Lamp', 30],
      [11, 'Ada', 'ADA: Desk', 180.6],
      [12, 'Grace', 'GRACE: Chair', 96],
      [13, 'Linus', 'LINUS: Pen', 2.4],
    ]);
  });

  it('filters, sorts and pages computed columns like stored ones', async () => {
    const { engine } = await shop();
    const table = await read(engine, {
      entity_name: 'customers',
      operation: {
        select_columns: [{ column: 'name' }, { column: 'total' }],
        filters: [{ column: 'orders', operator: 'GREATER_THAN', value: 0 }],
        order_by: [{ column: 'total', direction: 'ASC' }],
      },
      page_size: 1,
      page_number: 3,
    });
    expect(table.rows).toEqual([['Ada', 175.5]]);
  });

  it('follows writes: a new order changes the rollup on the next read', async () => {
    const { engine } = await shop();
    await engine.catalog.append('orders', [{ order_id: 14, customer_id: 3, item: 'Ink', amount: 3 }]);
    const table = await read(engine, {
      entity_name: 'customers',
      operation: {
        select_columns: [{ column: 'orders' }, { column: 'total' }],
        filters: [{ column: 'id', operator: 'EQUALS', value: 3 }],
      },
    });
    expect(table.rows).toEqual([[2, 5]]);
  });

  it('refuses a write to a computed column, naming it', async () => {
    const { engine } = await shop();
    const error = (await engine.catalog
      .append('orders', [{ order_id: 14, customer_id: 1, item: 'Pen', amount: 2, customer: 'Eve' }])
      .catch((e: unknown) => e)) as WriteRejectedError;
    expect(error).toBeInstanceOf(WriteRejectedError);
    expect(error.issues).toEqual([
      expect.objectContaining({
        code: 'read_only_column',
        path: 'orders[0].customer',
        message: expect.stringContaining('computed (lookup)'),
      }),
    ]);
  });

  it('deletes by rows read back, computed columns and all', async () => {
    const { engine } = await shop();
    const table = await read(engine, {
      entity_name: 'orders',
      operation: { filters: [{ column: 'order_id', operator: 'EQUALS', value: 12 }] },
    });
    const row = Object.fromEntries(table.columns!.map((c, i) => [c.name, table.rows![0]![i]]));
    await expect(engine.catalog.delete('orders', [row])).resolves.toEqual({ written: 1 });
  });

  it('refuses bad definitions at registration, every problem with its path', async () => {
    const { engine } = await shop();
    const bad: Entity = {
      ...customersEntity,
      columns: [
        ...customersEntity.columns,
        { name: 'a', type: 'NUMBER', formula: 'name * 2' },
        { name: 'b', type: 'STRING', formula: 'id + 1' },
        { name: 'c', type: 'NUMBER', rollup: { relationship: 'nope', function: 'count' } },
        { name: 'd', type: 'NUMBER', formula: 'missing + 1' },
      ],
    };
    const error = (await engine.catalog.putEntity(bad).catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.issues.map((i) => i.path)).toEqual([
      'columns[3].formula',
      'columns[4].formula',
      'columns[6].formula',
    ]);
    expect(error.issues[1]!.message).toContain('gives double, expected string');
    expect(error.issues[2]!.message).toContain('"missing"');
    const related: Entity = {
      ...customersEntity,
      columns: [
        ...customersEntity.columns,
        { name: 'c', type: 'NUMBER', rollup: { relationship: 'nope', function: 'count' } },
        {
          name: 'e',
          type: 'NUMBER',
          rollup: { relationship: 'orders_customer', function: 'sum', column: 'item' },
        },
        { name: 'f', type: 'STRING', lookup: { relationship: 'orders_customer', column: 'item' } },
        {
          name: 'g',
          type: 'NUMBER',
          rollup: { relationship: 'orders_customer', function: 'max', column: 'nope' },
        },
      ],
    };
    const second = (await engine.catalog.putEntity(related).catch((e: unknown) => e)) as ValidationError;
    expect(second.issues.map((i) => [i.code, i.path])).toEqual([
      ['unknown_relationship', 'columns[3].rollup.relationship'],
      ['invalid_type', 'columns[4].rollup.column'],
      ['invalid', 'columns[5].lookup.relationship'],
      ['unknown_column', 'columns[6].rollup.column'],
    ]);
  });

  it('refuses a cycle through a lookup and a rollup, naming it', async () => {
    const { engine } = await shop();
    await engine.catalog
      .putEntity({
        ...ordersEntity,
        columns: [
          ...ordersEntity.columns,
          {
            name: 'customer_total',
            type: 'NUMBER',
            lookup: { relationship: 'orders_customer', column: 'total' },
          },
        ],
      })
      .catch(() => undefined);
    // customers.total reads orders.customer_total, which reads customers.total.
    await engine.catalog.putEntity({
      ...customersEntity,
      columns: [...customersEntity.columns, { name: 'total', type: 'NUMBER', formula: 'id * 1.0' }],
    });
    await engine.catalog.putEntity({
      ...ordersEntity,
      columns: [
        ...ordersEntity.columns,
        {
          name: 'customer_total',
          type: 'NUMBER',
          lookup: { relationship: 'orders_customer', column: 'total' },
        },
      ],
    });
    const error = (await engine.catalog
      .putEntity({
        ...customersEntity,
        columns: [
          ...customersEntity.columns,
          {
            name: 'total',
            type: 'NUMBER',
            rollup: { relationship: 'orders_customer', function: 'sum', column: 'customer_total' },
          },
        ],
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.issues[0]!.code).toBe('cycle');
    expect(error.issues[0]!.message).toContain('customers.total → orders.customer_total → customers.total');
  });

  it('refuses a formula that reads itself or another formula in a loop', async () => {
    const { engine } = await shop();
    const error = (await engine.catalog
      .putEntity({
        ...customersEntity,
        columns: [
          ...customersEntity.columns,
          { name: 'x', type: 'NUMBER', formula: 'y + 1.0' },
          { name: 'y', type: 'NUMBER', formula: 'x + 1.0' },
        ],
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error.issues).toEqual([
      expect.objectContaining({
        code: 'cycle',
        message: expect.stringContaining('customers.x → customers.y → customers.x'),
      }),
    ]);
  });
});
